"""`--export DIR_OR_GLOB` (docs/export.md): after the workers succeed, the real binary copies real
files into the export directory, atomically per entry, never through a link, and a copy that
fails is exit 73 with the reason in the failure file, never silent."""
import fcntl
import os
import shutil
import signal
import subprocess
import time

import pytest

import tvtest

# The worker writes what the seed's skrl run leaves in its log dir (a real torch.save file as its
# best agent), and a link out of it.
AGENT = tvtest.SOURCE_DIR / "tests/data/checkpoint/agent_1000.pt"
WORKER = r'''
set -e
mkdir -p "$LOGS/skrl/run1/checkpoints"
cp "$AGENT" "$LOGS/skrl/run1/checkpoints/best_agent.pt"
printf cfg > "$LOGS/skrl/run1/params.yaml"
ln -sf /etc/hostname "$LOGS/skrl/run1/outside"
'''


def command(failure, *args, worker=WORKER):
    return [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
            "--max-restarts", "0", "--failure-file", str(failure), *args, "--", "/bin/sh", "-c",
            worker]


def worker_env(tmp_path, **env):
    return tvtest.base_env(LOGS=tmp_path / "logs", AGENT=AGENT, **env)


def run(tmp_path, *args, env=None, worker=WORKER):
    failure = tmp_path / "failure"
    p = subprocess.run(command(failure, *args, worker=worker),
                       env=worker_env(tmp_path, **(env or {})), capture_output=True, text=True,
                       timeout=120)
    return p, failure


def start_waiting_export(tmp_path, model):
    """A run whose export finds `model` held (the caller holds its lock), once it says it waits:
    (process, its log)."""
    log = tmp_path / "log"
    with open(log, "w") as out:
        p = subprocess.Popen(command(tmp_path / "failure", "--export", str(tmp_path / "logs"),
                                     "--export-dir", str(model)),
                             env=worker_env(tmp_path), stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60  # a guard, not a figure
    while "waiting for another export into" not in log.read_text():
        assert p.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.02)
    return p, log


def held(directory):
    """A descriptor of `directory` holding its exclusive flock (the lock goes when it is closed)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_directory_is_copied_whole_without_following_links(tmp_path):
    model = tmp_path / "model"
    p, failure = run(tmp_path, "--export", str(tmp_path / "logs"), env={"SM_MODEL_DIR": model})
    assert p.returncode == 0, p.stderr
    assert (model / "skrl/run1/checkpoints/best_agent.pt").read_bytes() == AGENT.read_bytes()
    assert (model / "skrl/run1/params.yaml").read_text() == "cfg"
    assert not os.path.lexists(model / "skrl/run1/outside"), "a link out of the source was copied"
    assert "skipped 1 link" in p.stderr
    assert not [n for n in os.listdir(model) if n.startswith(".trainvisor-export-")]
    assert not failure.exists()


def test_glob_and_export_dir_replace_what_is_there(tmp_path):
    model = tmp_path / "model"
    (model / "run1").mkdir(parents=True)
    (model / "run1" / "stale.pt").write_text("old")
    p, _ = run(tmp_path, "--export", str(tmp_path / "logs/skrl/*"), "--export-dir", str(model))
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(model)) == ["run1"]
    assert not (model / "run1" / "stale.pt").exists(), "the old entry of that name stays"
    assert (model / "run1/checkpoints/best_agent.pt").read_bytes() == AGENT.read_bytes()


def test_failed_copy_is_73_and_reported(tmp_path):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the export directory should be")
    p, failure = run(tmp_path, "--export", str(tmp_path / "logs"), "--export-dir",
                     str(blocked / "model"))
    assert p.returncode == 73, p.stderr
    assert "the workers succeeded, but --export failed" in p.stderr
    assert "not-a-dir/model" in failure.read_text()


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a read-only mount")
def test_read_only_target_is_73_and_leaves_it_as_it_was(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "keep").write_text("k")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no mount namespace here: " + probe.stderr.decode().strip())
    failure = tmp_path / "failure"
    inner = (f"mount --bind {model} {model} && mount -o remount,bind,ro {model} && exec "
             f"{tvtest.BIN} run --preflight none --nproc-per-node 1 --max-restarts 0 "
             f"--failure-file {failure} --export {tmp_path}/logs --export-dir {model} -- "
             f"/bin/sh -c '{WORKER}'")
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "/bin/sh", "-c", inner],
                       env=tvtest.base_env(LOGS=tmp_path / "logs", AGENT=AGENT), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 73, p.stderr
    assert "Read-only file system" in p.stderr and "nothing was exported" in p.stderr
    assert os.listdir(model) == ["keep"]
    assert "--export failed" in failure.read_text()


def test_no_export_directory_is_refused_before_anything_starts(tmp_path):
    p, _ = run(tmp_path, "--export", str(tmp_path / "logs"), "--resource-config",
               str(tmp_path / "absent.json"), worker="touch started")
    assert p.returncode == 78, p.stderr
    assert "--export" in p.stderr and "SM_MODEL_DIR" in p.stderr
    assert not (tmp_path / "started").exists()


def test_nothing_to_export_is_73(tmp_path):
    p, failure = run(tmp_path, "--export", str(tmp_path / "logs/*.none"), env={
        "SM_MODEL_DIR": tmp_path / "model"})
    assert p.returncode == 73, p.stderr
    assert "matched nothing" in failure.read_text()


def planted_links(tmp_path):
    """A source dir whose entries are a real file and links out of it (a file and a directory)."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "shadow").write_text("root:SECRET")
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.pt").write_text("weights")
    (src / "shadow").symlink_to(secret / "shadow")
    (src / "etc").symlink_to(secret)
    return src


@pytest.mark.parametrize("glob", [False, True])
def test_links_among_the_entries_and_glob_matches_are_never_followed(tmp_path, glob):
    src, model = planted_links(tmp_path), tmp_path / "model"
    what = f"{src}/*" if glob else str(src)
    p, _ = run(tmp_path, "--export", what, "--export-dir", str(model), worker="true")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(model)) == ["model.pt"], "a link out of the source was copied"
    assert "SECRET" not in p.stderr
    # One warning, naming each skipped link by its path.
    [warning] = [line for line in p.stderr.splitlines() if "export: skipped" in line]
    assert "skipped 2 link(s)" in warning and f"{src}/shadow" in warning, warning
    assert f"{src}/etc" in warning, warning


def test_the_path_named_may_itself_be_a_link(tmp_path):
    src, model = planted_links(tmp_path), tmp_path / "model"
    (tmp_path / "logs").symlink_to(src)  # the seed's logs -> /opt/ml/checkpoints
    p, _ = run(tmp_path, "--export", str(tmp_path / "logs"), "--export-dir", str(model),
               worker="true")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(model)) == ["model.pt"]
    p, _ = run(tmp_path, "--export", str(src / "shadow"), "--export-dir", str(model),
               worker="true")
    assert p.returncode == 0, p.stderr  # a file named by its link is the file the user named
    assert (model / "shadow").read_text() == "root:SECRET"


@pytest.mark.parametrize("case", ["same", "inside", "glob"])
def test_a_source_that_holds_the_export_dir_is_refused_before_anything_starts(tmp_path, case):
    src = tmp_path / "ex"
    (src / "model").mkdir(parents=True)
    (src / "a.pt").write_text("a")
    what, target = {"same": (src, src), "inside": (src, src / "model"),
                    "glob": (f"{src}/*", src / "model")}[case]
    started = tmp_path / "started"
    p, _ = run(tmp_path, "--export", str(what), "--export-dir", str(target),
               worker=f"touch {started}")
    assert p.returncode == 78, p.stderr
    assert f"export directory {target}" in p.stderr, p.stderr
    assert (f"the source {what}" if case != "glob" else f"the match {src}/model") in p.stderr
    assert not started.exists(), "the workers ran"
    assert sorted(os.listdir(src)) == ["a.pt", "model"] and os.listdir(src / "model") == []


def test_the_jobs_ledger_is_never_exported(tmp_path):
    """The SageMaker seed exports its log dir, which is the checkpoint dir: trainvisor's own ledger
    there (a copy taken mid-run would be stale: its last record not ended) stays out of the
    model directory, at any depth, with one line naming it."""
    model = tmp_path / "model"
    worker = WORKER + r'''
printf '{}' > "$LOGS/.trainvisor-ledger-0123456789abcdef.json"
printf '{}' > "$LOGS/skrl/.trainvisor-ledger-0123456789abcdef.json.corrupt"
'''
    p, _ = run(tmp_path, "--export", str(tmp_path / "logs"), "--export-dir", str(model),
               worker=worker)
    assert p.returncode == 0, p.stderr
    exported = [str(f.relative_to(model)) for f in model.rglob("*")]
    assert not [f for f in exported if ".trainvisor-" in f], exported
    assert (model / "skrl/run1/checkpoints/best_agent.pt").read_bytes() == AGENT.read_bytes()
    assert "left out trainvisor's own file(s)" in p.stderr and ".trainvisor-ledger-" in p.stderr


def test_an_incomplete_checkpoint_is_left_out(tmp_path):
    """The SageMaker seed exports its log dir, where the SIGTERM that ended an earlier container
    may have cut a save: a half-written agent_<t>.pt and a DCP step without its .metadata (what
    trainvisor itself never resumes from) stay out of the model directory, with one line naming
    them; the complete checkpoints beside them are exported."""
    model = tmp_path / "model"
    dcp = tvtest.SOURCE_DIR / "tests/data/checkpoint/dcp_real/one_rank"
    worker = WORKER + r'''
ck="$LOGS/skrl/run1/checkpoints"
cp "$AGENT" "$ck/agent_100.pt"
head -c 300 "$AGENT" > "$ck/agent_200.pt"
mkdir -p "$LOGS/outputs/checkpoint/step-10" "$LOGS/outputs/checkpoint/step-20"
cp -r "$DCP/." "$LOGS/outputs/checkpoint/step-10/"
cp "$DCP/__0_0.distcp" "$LOGS/outputs/checkpoint/step-20/"
'''
    p, _ = run(tmp_path, "--export", str(tmp_path / "logs"), "--export-dir", str(model),
               worker=worker, env={"DCP": dcp})
    assert p.returncode == 0, p.stderr
    ck = model / "skrl/run1/checkpoints"
    assert (ck / "agent_100.pt").read_bytes() == AGENT.read_bytes()
    assert (ck / "best_agent.pt").exists()
    assert not (ck / "agent_200.pt").exists(), "a half-written checkpoint was exported"
    assert (model / "outputs/checkpoint/step-10/.metadata").exists()
    assert not (model / "outputs/checkpoint/step-20").exists(), "a DCP save without .metadata"
    assert "left out 2 incomplete checkpoint path(s)" in p.stderr, p.stderr
    assert "agent_200.pt" in p.stderr and "step-20" in p.stderr


def test_nodes_sharing_the_export_directory_each_export_whole(tmp_path):
    """Every node exports its own files (docs/export.md); nodes whose export directory is one
    shared directory (FSx on Kubeflow, a scenario's one model directory) used to remove each
    other's staging directory or rename into a place the other was filling: 73 on a job that
    succeeded. Each export now holds the directory (flock) and runs whole."""
    model = tmp_path / "model"
    src = tmp_path / "ckpt"
    for d in range(40):  # many entries: a wide window between one export's staging and its moves
        (src / f"run{d}").mkdir(parents=True)
        for f in range(10):
            (src / f"run{d}" / f"part_{f}.bin").write_bytes(os.urandom(4096))
    for _ in range(3):  # unlocked, one round in two or three failed here
        procs = [subprocess.Popen(command(tmp_path / f"failure{node}", "--export", str(src),
                                          "--export-dir", str(model), worker="true"),
                                  env=tvtest.base_env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for node in range(4)]
        outs = [p.communicate(timeout=120)[0] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, outs
    assert sorted(os.listdir(model)) == sorted(f"run{d}" for d in range(40))
    for d in range(40):
        for f in range(10):
            rel = f"run{d}/part_{f}.bin"
            assert (model / rel).read_bytes() == (src / rel).read_bytes(), rel


def test_an_export_waits_for_the_one_holding_the_directory_and_says_so(tmp_path):
    """Another holder of the export directory's lock (a node sharing it, mid-export): the export
    says that it waits, writes nothing meanwhile, and runs whole once the directory is free."""
    model = tmp_path / "model"
    model.mkdir()
    lock = held(model)
    try:
        p, log = start_waiting_export(tmp_path, model)
        assert os.listdir(model) == [], "it wrote into a directory another export holds"
    finally:
        os.close(lock)
    assert p.wait(timeout=60) == 0, log.read_text()
    assert (model / "skrl/run1/checkpoints/best_agent.pt").read_bytes() == AGENT.read_bytes()


def test_a_sigterm_while_an_export_waits_is_143_and_writes_nothing(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    lock = held(model)
    try:
        p, log = start_waiting_export(tmp_path, model)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == 143, log.read_text()
    finally:
        os.close(lock)
    assert "received SIGTERM during export: exiting 143" in log.read_text()
    assert os.listdir(model) == []
