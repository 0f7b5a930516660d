"""Slurm's edges (issue #32, items 8-10; docs/platforms/slurm.md): the rendered sbatch script's exit
code, srun --wait, scancel's variants, two trainvisors in one step.

Against a fake srun (a script on PATH that writes srun's own lines to stderr and exits with srun's
code; no cluster needed): srun's 137 becomes 75 only when srun's lines say a task was killed by a
signal; a task's own exit 137 (an OOM-killed worker after --max-restarts) stays 137; srun's forced
termination is 143; a SIGTERM to the batch shell alone leaves nothing behind that changes a later
verdict; the filter passes srun's stderr on unchanged and at once; without a temporary directory
srun runs unfiltered and keeps its code.

On the project's real Slurm cluster (slurm_cluster.py's fixture; needs root): a node whose
trainvisor exits 137 itself ends FAILED 137:0 (not requeued by RequeueExit=75); a node frozen with
SIGSTOP ends the job FAILED 75:0 through srun --wait, long before its time limit; `scancel -b
--signal=TERM` then a node's trainvisor SIGKILLed ends 75:0; `scancel --full --signal=TERM` ends
143:0 (srun SIGKILLs the step: no grace, documented); two trainvisors in one task of one step are
refused with 78, naming the step and the node.

No timed assertions: timeouts only stop hangs. Environment (set by ctest): TRAINVISOR_BIN,
TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from slurm_cluster import (PYTHON, TIMEOUT_S, TRAINVISOR, job_field, render_script, sbatch,  # noqa: F401
                           slurm, wait_file, wait_job_done)

# ---- the rendered script's exit code against a fake srun ----

FAKE_SRUN = r'''#!/bin/bash
# srun as the rendered script sees it: its own lines (FAKE_LINES, one per line) on stderr, a
# worker's line among them, srun's code FAKE_RC; with FAKE_GO, only once that file exists.
if [ -n "${FAKE_GO:-}" ]; then
  echo "[trainvisor] a line before the wait" >&2
  : > "$FAKE_GO.waiting"
  while [ ! -e "$FAKE_GO" ]; do sleep 0.05; done
fi
echo "[rank0]: a worker's line on stderr" >&2
printf '%s\n' "$FAKE_LINES" >&2
exit "$FAKE_RC"
'''


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    d = tmp_path_factory.mktemp("fake-srun")
    (d / "bin").mkdir()
    (d / "bin" / "srun").write_text(FAKE_SRUN)
    (d / "bin" / "srun").chmod(0o755)
    cfg = d / "job.json"
    cfg.write_text('{"name": "j", "image": "unused", "nodes": 2, "gpus_per_node": 0, '
                   '"checkpoint_dir": "/tmp", "command": ["true"]}')
    r = subprocess.run([str(TRAINVISOR), "render", "--config", str(cfg), "--target", "slurm",
                        "--output", str(d / "job.sbatch")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return d


def run_script(d, lines, rc, stderr=subprocess.PIPE, **extra):
    env = {"PATH": f"{d / 'bin'}:/usr/bin:/bin", "TMPDIR": str(d), "FAKE_LINES": "\n".join(lines),
           "FAKE_RC": str(rc), **extra}
    return subprocess.Popen(["bash", str(d / "job.sbatch")], env=env, stdout=subprocess.PIPE,
                            stderr=stderr, text=True)


CASES = [
    # a node's trainvisor SIGKILLed (srun --wait, the OOM killer, kill -9); the other node lost it
    (["srun: error: tvn2: task 1: Killed", "srun: error: tvn1: task 0: Exited with exit code 75"], 137, 75),
    # killed, and nobody else said anything: the node was lost
    (["srun: error: tvn2: task 1: Killed"], 137, 75),
    # every node's trainvisor exited 137 itself: an OOM-killed worker after --max-restarts
    (["srun: error: tvn[1-2]: tasks 0-1: Exited with exit code 137"], 137, 137),
    # one node's own 137, the other's trainvisor killed: the code a task chose
    (["srun: error: tvn1: task 0: Exited with exit code 137", "srun: error: tvn2: task 1: Killed"], 137, 137),
    # srun told to stop (scancel --full --signal=TERM): it SIGKILLed the step
    (["srun: forcing job termination", "srun: error: tvn[1-2]: tasks 0-1: Killed"], 137, 143),
    # a stop that ran its course
    (["srun: forcing job termination", "srun: error: tvn[1-2]: tasks 0-1: Exited with exit code 143"], 143, 143),
    # a worker's "Killed" printed by trainvisor is no srun line
    (["[rank0]: srun: error: tvn2: task 1: Killed", "srun: error: tvn1: tasks 0-1: Exited with exit code 137"], 137, 137),
    ([], 0, 0),
    (["srun: error: tvn1: tasks 0-1: Exited with exit code 78"], 78, 78),
]


@pytest.mark.parametrize("lines,srun_rc,want", CASES)
def test_the_script_maps_only_what_srun_says_it_killed(rendered, lines, srun_rc, want):
    p = run_script(rendered, lines, srun_rc)
    out, err = p.communicate(timeout=60)
    assert p.returncode == want, (lines, srun_rc, err)
    assert "[rank0]: a worker's line on stderr" in err, err  # the filter passes srun's stderr on
    for line in lines:
        assert line in err, err
    assert ("exiting %d" % want in err) == (want != srun_rc), err
    assert not list(rendered.glob("tmp.*")), "the script's temporary directory is left behind"


def test_a_term_to_the_batch_shell_alone_does_not_turn_a_lost_node_into_137(rendered):
    """scancel -b --signal=TERM: the batch shell alone gets SIGTERM, and nothing stops. A node
    lost afterwards is still 75 (the old script kept a 'stopped' flag and said 137)."""
    go = rendered / "go"
    p = run_script(rendered, ["srun: error: tvn2: task 1: Killed",
                              "srun: error: tvn1: task 0: Exited with exit code 75"], 137, FAKE_GO=str(go))
    deadline = time.monotonic() + 60
    while not (rendered / "go.waiting").exists():
        assert time.monotonic() < deadline and p.poll() is None, p.communicate()
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    # Only the shell was signalled: it waits on; srun (the fake) goes on once told.
    go.touch()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 75, err


@pytest.mark.parametrize("broken", ["no TMPDIR", "mkfifo fails"])
def test_without_a_fifo_srun_runs_unfiltered_and_keeps_its_code(rendered, tmp_path, broken):
    extra = {"TMPDIR": str(rendered / "absent")}
    if broken == "mkfifo fails":
        (tmp_path / "mkfifo").write_text("#!/bin/sh\nexit 1\n")
        (tmp_path / "mkfifo").chmod(0o755)
        extra = {"PATH": f"{tmp_path}:{rendered / 'bin'}:/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    p = run_script(rendered, ["srun: error: tvn2: task 1: Killed"], 137, **extra)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 137, err
    assert "[rank0]: a worker's line on stderr" in err and "task 1: Killed" in err, err
    assert not list(tmp_path.glob("tmp.*")), "the script's temporary directory is left behind"


def test_srun_stderr_reaches_the_log_as_it_is_written(rendered, tmp_path):
    """The filter holds nothing back: a line srun wrote is in the log while srun still runs."""
    go = tmp_path / "go"
    with open(tmp_path / "err.log", "w") as err:
        p = run_script(rendered, [], 0, stderr=err, FAKE_GO=str(go))
    deadline = time.monotonic() + 60
    while "[trainvisor] a line before the wait" not in (tmp_path / "err.log").read_text():
        assert time.monotonic() < deadline and p.poll() is None, "the line never came through"
        time.sleep(0.05)
    go.touch()
    p.communicate(timeout=60)
    assert p.returncode == 0


# ---- on the real cluster ----

# Each worker records its trainvisor's pid (its parent) and its own; then a rank's own behaviour.
OOM_SELF = r'''
import os, signal, sys, time
out, rank = sys.argv[1], os.environ["RANK"]
with open(os.path.join(out, "tv-" + rank), "w") as f:
    f.write(str(os.getppid()))
if rank == "1":
    os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
while True:
    time.sleep(0.1)
'''


def test_a_node_whose_trainvisor_exits_137_itself_ends_137_not_75(slurm, tmp_path):
    """A worker SIGKILLed (what the OOM killer does) with --max-restarts 0: trainvisor exits 137
    on every node, by itself. srun's 137 is theirs, not a kill of srun's: FAILED 137:0, which
    RequeueExit=75 does not requeue."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "oom.py").write_text(OOM_SELF)
    script = render_script(tmp_path, 2, [tmp_path / "oom.py", out], ["--warm-standby", "off"], "tv-oom",
                           max_restarts=0)
    job = sbatch(slurm, tmp_path, script)
    state, code = wait_job_done(slurm, job, tmp_path)
    log = (tmp_path / "batch.out").read_text(errors="replace")
    assert (state, code) == ("FAILED", "137:0"), (state, code, log)
    assert re.search(r"task \d: Exited with exit code 137", log), log
    assert "sbatch script: srun exited" not in log, log


FREEZE = r'''
import os, sys, time
out, rank = sys.argv[1], os.environ["RANK"]
with open(os.path.join(out, "pids-" + rank), "w") as f:
    f.write("%d %d" % (os.getppid(), os.getpid()))
while True:
    time.sleep(0.1)
'''


def test_a_frozen_node_ends_the_job_75_through_srun_wait(slurm, tmp_path):
    """Node 1's trainvisor and worker SIGSTOPped: node 0 exits 75 after --peer-timeout 10, and
    srun --wait (10 + grace 5 + 10 = 25 s) SIGKILLs the frozen task instead of waiting for the
    time limit (60 min here): FAILED 75:0."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "freeze.py").write_text(FREEZE)
    script = render_script(tmp_path, 2, [tmp_path / "freeze.py", out],
                           ["--warm-standby", "off", "--peer-timeout", "10"], "tv-frozen", grace_period=5)
    assert "--wait=25" in script.read_text(), script.read_text()
    job = sbatch(slurm, tmp_path, script, "--time=60")
    for rank in "01":
        wait_file(out / f"pids-{rank}", tmp_path / "batch.out")
    frozen = [int(pid) for pid in (out / "pids-1").read_text().split()]
    try:
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        state, code = wait_job_done(slurm, job, tmp_path)
    finally:  # srun --wait has killed them; if not, nothing frozen outlives the test
        for pid in frozen:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    log = (tmp_path / "batch.out").read_text(errors="replace")
    assert (state, code) == ("FAILED", "75:0"), (state, code, log)
    assert "First task exited" in log and "task 1: Killed" in log, log
    assert "exiting 75" in log, log


LOSER = r'''
import os, signal, sys, time
out, rank = sys.argv[1], os.environ["RANK"]
signal.signal(signal.SIGTERM, lambda s, f: (time.sleep(1), sys.exit(143)))
with open(os.path.join(out, "tv-" + rank), "w") as f:
    f.write(str(os.getppid()))
while True:
    time.sleep(0.1)
'''


def scancel(slurm, *args):
    r = slurm.run(Path("/tmp"), ["scancel", *args], timeout=60)
    assert r.returncode == 0, r.stderr


def test_a_term_to_the_batch_shell_then_a_lost_node_ends_75(slurm, tmp_path):
    """scancel -b --signal=TERM reaches the batch shell alone (nothing stops); node 1's trainvisor
    SIGKILLed afterwards is a node lost: FAILED 75:0, not 137."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "loser.py").write_text(LOSER)
    script = render_script(tmp_path, 2, [tmp_path / "loser.py", out], ["--warm-standby", "off"], "tv-b-term")
    job = sbatch(slurm, tmp_path, script)
    for rank in "01":
        wait_file(out / f"tv-{rank}", tmp_path / "batch.out")
    scancel(slurm, "-b", "--signal=TERM", job)
    os.kill(int((out / "tv-1").read_text()), signal.SIGKILL)
    state, code = wait_job_done(slurm, job, tmp_path)
    log = (tmp_path / "batch.out").read_text(errors="replace")
    assert (state, code) == ("FAILED", "75:0"), (state, code, log)
    assert "exiting 75" in log, log


def test_scancel_full_term_ends_143_and_says_srun_killed_the_step(slurm, tmp_path):
    """scancel --full --signal=TERM signals srun too, which SIGKILLs the step (no grace period:
    documented, docs/platforms/slurm.md); the job's code is 143 (stopped), never 75."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "loser.py").write_text(LOSER)
    script = render_script(tmp_path, 2, [tmp_path / "loser.py", out], ["--warm-standby", "off"], "tv-full-term")
    job = sbatch(slurm, tmp_path, script)
    for rank in "01":
        wait_file(out / f"tv-{rank}", tmp_path / "batch.out")
    scancel(slurm, "--full", "--signal=TERM", job)
    state, code = wait_job_done(slurm, job, tmp_path)
    log = (tmp_path / "batch.out").read_text(errors="replace")
    # The job's code is 143 (stopped), never 75, whatever the nodes said: srun SIGKILLs the tasks
    # one by one, and a node that sees its peer's connection close first may log "exiting 75"
    # before its own SIGKILL arrives (it never gets to exit with it).
    assert code == "143:0", (state, code, log)
    assert "forcing job termination" in log, log  # srun's own answer to the SIGTERM
    assert "exiting 143" in log, log  # trainvisor's own or the script's reading of srun's 137


TWO_IN_ONE = r'''
"$TV" run --nproc-per-node 1 --preflight none --warm-standby off -- "$PY" -c "$WAIT" "$OUT" &
first=$!
until [ -e "$OUT/up" ]; do sleep 0.05; done
"$TV" run --nproc-per-node 1 --preflight none --warm-standby off --no-python -- true
echo $? > "$OUT/rc-second"
: > "$OUT/go"
wait $first
echo $? > "$OUT/rc-first"
'''

WAIT_FOR_GO = r'''
import os, sys, time
out = sys.argv[1]
open(os.path.join(out, "up"), "w").close()
while not os.path.exists(os.path.join(out, "go")):
    time.sleep(0.05)
'''


def test_two_trainvisors_in_one_step_on_one_node_are_refused_with_78(slurm, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    r = subprocess.run(["srun", "-N1", "-n1", "-J", "tv-two-in-one", "bash", "-c", TWO_IN_ONE],
                       env={**slurm.env(tmp_path), "TV": str(TRAINVISOR), "PY": PYTHON, "WAIT": WAIT_FOR_GO,
                            "OUT": str(out)},
                       cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S)
    codes = {n: (out / f"rc-{n}").read_text().strip() for n in ("first", "second")}
    assert codes == {"first": "0", "second": "78"}, (codes, r.stderr)
    m = re.search(r"another trainvisor already runs in Slurm step (\S+) on node (\S+) ", r.stderr)
    assert m and m.group(2) in ("tvn1", "tvn2", "tvn3"), r.stderr
