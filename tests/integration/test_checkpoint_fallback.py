"""A poisoned newest checkpoint is stepped over (--resume-fallback, docs/checkpoints.md "A poisoned
checkpoint is stepped over"): a CPU worker (python) loads its newest checkpoint and fails 3 steps
later when that checkpoint is a poisoned one; trainvisor marks it in the job's ledger and resumes
from the newest complete checkpoint before it. Also the depth bound, the fallback turned off, and
the mark read by a second trainvisor process (a new container of the job)."""
import json
import os
import subprocess
import textwrap
import zipfile
from pathlib import Path

import tvtest

# The checkpoints are zips (a torch.save file is one) in skrl's layout, each holding its step.
# The worker saves every 10 steps by writing a temporary name and renaming it (atomic).
WORKER = textwrap.dedent("""
    import json, os, sys, zipfile
    ckpt, log, poisoned, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    poisoned = {int(s) for s in poisoned.split(",") if s}
    finish_on_resume = os.environ.get("FINISH_ON_RESUME") == "1"
    resume = next((a.split("=", 1)[1] for a in sys.argv[5:] if a.startswith("--resume=")), None)
    step = 0
    if resume:
        with zipfile.ZipFile(resume) as z:
            step = json.loads(z.read("agent/state.json"))["step"]
    rank = int(os.environ.get("RANK", "0"))
    with open(log, "a") as f:
        f.write(json.dumps({"generation": int(os.environ["TORCHELASTIC_RESTART_COUNT"]),
                            "rank": rank, "resume": resume, "step": step}) + "\\n")
    if finish_on_resume and step not in poisoned and resume:
        sys.exit(0)
    start = step
    while step < total:
        step += 1
        print(f"step {step}", flush=True)
        if start in poisoned and step == start + 3:
            raise ValueError(f"loss is nan at step {step}")
        if step % 10 == 0 and rank == 0:
            tmp = os.path.join(ckpt, "checkpoints", ".saving")
            with zipfile.ZipFile(tmp, "w") as z:
                z.writestr("agent/state.json", json.dumps({"step": step}))
            os.rename(tmp, os.path.join(ckpt, "checkpoints", f"agent_{step}.pt"))
""")


def make_tree(tmp_path, steps=(10, 20, 30)):
    ckpt = tmp_path / "ckpt"
    (ckpt / "checkpoints").mkdir(parents=True)
    for s in steps:
        with zipfile.ZipFile(ckpt / "checkpoints" / f"agent_{s}.pt", "w") as z:
            z.writestr("agent/state.json", json.dumps({"step": s}))
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    return ckpt, worker


def run(tmp_path, ckpt, worker, poisoned, *extra, total=50, env_extra=None, run_id="job-fb"):
    log = tmp_path / "resumes.jsonl"
    failure = tmp_path / "failure"
    if failure.exists():
        failure.unlink()
    cmd = [str(tvtest.BIN), "run", "--preflight", "none", "--gpu-health", "off",
           "--nproc-per-node", "1", "--checkpoint-dir", str(ckpt), "--run-id", run_id,
           "--failure-file", str(failure), "--termination-log", str(tmp_path / "termlog"),
           "--resume-arg", "--resume={}", *extra,
           str(worker), str(ckpt), str(log), poisoned, str(total)]
    env = tvtest.base_env(**(env_extra or {}))
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    resumes = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return r, resumes, failure


def ledger(ckpt):
    files = list(ckpt.glob(".trainvisor-ledger-*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def test_a_poisoned_newest_checkpoint_is_stepped_over_and_the_job_finishes(tmp_path):
    ckpt, worker = make_tree(tmp_path)
    r, resumes, _ = run(tmp_path, ckpt, worker, "30", "--max-restarts", "3")
    assert r.returncode == 0, r.stderr
    assert [x["step"] for x in resumes] == [30, 30, 20], resumes
    assert "rule poisoned_checkpoint" in r.stderr
    assert "generation 2: stepping over " + str(ckpt / "checkpoints" / "agent_30.pt") in r.stderr
    marks = ledger(ckpt)["poisoned"]
    assert [m["path"] for m in marks] == [str(ckpt / "checkpoints" / "agent_30.pt")]
    assert marks[0]["step"] == 30 and "poisoned_checkpoint" in marks[0]["reason"]
    # Nothing the user owns is renamed: every checkpoint is where the worker wrote it.
    names = sorted(p.name for p in (ckpt / "checkpoints").iterdir())
    assert names == ["agent_10.pt", "agent_20.pt", "agent_30.pt", "agent_40.pt", "agent_50.pt"]


def test_the_depth_is_bounded_and_the_failure_file_shows_each_step(tmp_path):
    ckpt, worker = make_tree(tmp_path)
    # 30 and 20 are both poisoned; --resume-fallback 1 steps over 30 only, then gives up.
    r, resumes, failure = run(tmp_path, ckpt, worker, "30,20", "--max-restarts", "6")
    assert r.returncode == 1, r.stderr
    assert [x["step"] for x in resumes] == [30, 30, 20], resumes
    text = failure.read_text()
    assert "rule same_failure" in text
    assert "checkpoints stepped over (--resume-fallback):" in text
    assert "generation 2 stepped over" in text and "agent_30.pt poisoned" in text


def test_a_deeper_fallback_steps_over_each_poisoned_checkpoint_in_turn(tmp_path):
    ckpt, worker = make_tree(tmp_path)
    r, resumes, _ = run(tmp_path, ckpt, worker, "30,20", "--max-restarts", "6",
                        "--resume-fallback", "2")
    assert r.returncode == 0, r.stderr
    # 20 gets its own two generations before it is judged poisoned too.
    assert [x["step"] for x in resumes] == [30, 30, 20, 20, 10], resumes
    assert "rule fallback_first_failure" in r.stderr
    marks = [Path(m["path"]).name for m in ledger(ckpt)["poisoned"]]
    assert marks == ["agent_30.pt", "agent_20.pt"]


def test_resume_fallback_0_gives_up_as_before(tmp_path):
    ckpt, worker = make_tree(tmp_path)
    r, resumes, _ = run(tmp_path, ckpt, worker, "30", "--max-restarts", "3",
                        "--resume-fallback", "0")
    assert r.returncode == 1, r.stderr
    assert [x["step"] for x in resumes] == [30, 30], resumes
    assert "rule same_failure" in r.stderr
    assert "poisoned" not in json.dumps(ledger(ckpt))


def test_a_new_container_steps_over_the_ledgers_mark_from_its_first_start(tmp_path):
    ckpt, worker = make_tree(tmp_path)
    # The first container marks 30 and ends once it resumed 20 (nothing newer is written).
    r, resumes, _ = run(tmp_path, ckpt, worker, "30", "--max-restarts", "3",
                        env_extra={"FINISH_ON_RESUME": "1"})
    assert r.returncode == 0, r.stderr
    assert [x["step"] for x in resumes] == [30, 30, 20], resumes
    # A second trainvisor process of the same job: its generation 0 resumes 20 at once.
    (tmp_path / "resumes.jsonl").unlink()
    r, resumes, _ = run(tmp_path, ckpt, worker, "30", "--max-restarts", "3")
    assert r.returncode == 0, r.stderr
    assert [x["step"] for x in resumes] == [20], resumes
    assert "the job's ledger marks it poisoned" in r.stderr
    assert len(ledger(ckpt)["records"]) == 2
    # That container saved step 30 again at the same path: a new save, not the poisoned one, so a
    # third container resumes it.
    for p in ckpt.glob("checkpoints/agent_[45]0.pt"):
        p.unlink()
    (tmp_path / "resumes.jsonl").unlink()
    r, resumes, _ = run(tmp_path, ckpt, worker, "", "--max-restarts", "0",
                        env_extra={"FINISH_ON_RESUME": "1"})
    assert r.returncode == 0, r.stderr
    assert [x["step"] for x in resumes] == [30], resumes
    # The marked save itself again (its mtime as the mark has it): this job steps over it, another
    # job in the same directory does not read this job's marks.
    mark = ledger(ckpt)["poisoned"][0]
    os.utime(ckpt / "checkpoints" / "agent_30.pt", ns=(mark["mtime_ns"], mark["mtime_ns"]))
    for job, step in (("job-fb", 20), ("other-job", 30)):
        (tmp_path / "resumes.jsonl").unlink()
        r, resumes, _ = run(tmp_path, ckpt, worker, "", "--max-restarts", "0", run_id=job,
                            env_extra={"FINISH_ON_RESUME": "1"})
        assert r.returncode == 0, r.stderr
        assert [x["step"] for x in resumes] == [step], (job, resumes)


def run_two_nodes(tmp_path, ckpt, worker, env_extra=None):
    log = tmp_path / "resumes.jsonl"
    if log.exists():
        log.unlink()
    master_port, rdzv_port = tvtest.free_ports(2)
    procs = []
    for rank in (0, 1):
        cmd = [str(tvtest.BIN), "run", "--nnodes", "2", "--node-rank", str(rank),
               "--master-addr", "127.0.0.1", "--master-port", str(master_port),
               "--rdzv-port", str(rdzv_port), "--rdzv-token", "fallback-secret",
               "--preflight", "none", "--gpu-health", "off", "--nproc-per-node", "1",
               "--checkpoint-dir", str(ckpt), "--run-id", "job-2n", "--max-restarts", "3",
               "--failure-file", str(tmp_path / f"failure{rank}"),
               "--termination-log", str(tmp_path / f"termlog{rank}"),
               "--resume-arg", "--resume={}", str(worker), str(ckpt), str(log), "30", "50"]
        err = open(tmp_path / f"node{rank}.log", "w")
        procs.append(subprocess.Popen(cmd, env=tvtest.base_env(**(env_extra or {})), stdout=err,
                                      stderr=err))
        err.close()
    codes = [p.wait(timeout=120) for p in procs]
    logs = [(tmp_path / f"node{r}.log").read_text() for r in (0, 1)]
    resumes = [json.loads(line) for line in log.read_text().splitlines()]
    return codes, logs, resumes


def test_on_two_nodes_every_node_steps_over_the_checkpoint_the_judge_names(tmp_path):
    ckpt, worker = make_tree(tmp_path)
    codes, logs, resumes = run_two_nodes(tmp_path, ckpt, worker)
    assert codes == [0, 0], logs
    k, before = ckpt / "checkpoints" / "agent_30.pt", ckpt / "checkpoints" / "agent_20.pt"
    for rank in (0, 1):
        # Each node's own lookups (a worker stopped before it logged is no evidence either way).
        assert f"generation 1: resuming from {k}" in logs[rank], logs[rank]
        assert f"generation 2: stepping over {k}" in logs[rank], logs[rank]
        assert f"generation 2: resuming from {before}" in logs[rank], logs[rank]
        # The last generation ran to its end on both nodes: both workers resumed step 20.
        assert [x["step"] for x in resumes if x["rank"] == rank][-1] == 20, resumes
    # Node 0 keeps the ledger and its mark.
    mark = ledger(ckpt)["poisoned"][0]
    assert Path(mark["path"]).name == "agent_30.pt"
    # A new container of the job, the marked save newest again: both nodes step over it from
    # generation 0 (node 1 reads node 0's ledger's marks).
    for p in ckpt.glob("checkpoints/agent_[45]0.pt"):
        p.unlink()
    os.utime(ckpt / "checkpoints" / "agent_30.pt", ns=(mark["mtime_ns"], mark["mtime_ns"]))
    codes, logs, resumes = run_two_nodes(tmp_path, ckpt, worker, {"FINISH_ON_RESUME": "1"})
    assert codes == [0, 0], logs
    assert sorted((x["rank"], x["step"]) for x in resumes) == [(0, 20), (1, 20)], resumes
    for rank in (0, 1):
        assert "the job's ledger marks it poisoned" in logs[rank], logs[rank]
