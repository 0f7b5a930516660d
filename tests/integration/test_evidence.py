"""Evidence on hang (docs/supervision.md, "Evidence on hang"): real Python workers on CPU.

A hung rank's stacks land in --log-dir/attempt_N/rank_R/stacks.txt before it is killed and its
innermost frame is named in the failure file; `trainvisor stacks` collects them from a running job
without a restart; the worker hook changes neither argv, PYTHONPATH nor a user's own
sitecustomize; PyTorch's flight recorder variables reach workers unless the user set them.
"""
import os
import subprocess
import time
from pathlib import Path

import pytest

import tvtest

BIN = tvtest.BIN
TIMEOUT = 60  # every case ends well before this; a hang fails the test
H = tvtest.Hermetic("TV_EVIDENCE_TEST", TIMEOUT)


@pytest.fixture(autouse=True)
def _kill_leftovers():
    yield
    H.kill_leftovers()

HUNG = '''
import os, sys, time
print("argv", sys.argv, "PYTHONPATH", os.environ.get("PYTHONPATH"), flush=True)
def tv_hang_here_for_test():
    while True:
        time.sleep(0.5)
if os.environ["RANK"] == "1":
    tv_hang_here_for_test()
while True:  # rank 0 stays talkative: only rank 1 is silent
    print("tick", flush=True)
    time.sleep(0.2)
'''


# `script.py` (trainvisor's `PY -u script.py`) and an interpreter named as the command's first word
# (`run -- python3 script.py`: the hook is for any Python worker).
@pytest.mark.parametrize("form", ["script", "interpreter"])
def test_hung_rank_leaves_its_stack_and_the_report_names_the_frame(tmp_path, form):
    user_site = tmp_path / "usersite"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text("print('user sitecustomize ran', flush=True)\n")
    script = tmp_path / "hung.py"
    script.write_text(HUNG)
    logs, failure = tmp_path / "logs", tmp_path / "failure"
    command = [script] if form == "script" else ["--", tvtest.PYTHON, script]
    r = H.run("--nproc-per-node", 2, "--hang-timeout", 2, "--max-restarts", 0, "--log-dir", logs,
              "--failure-file", failure, *command, "x", "--y",
              env=H.env(PYTHONPATH=str(user_site)))
    assert r.returncode == 124, r.stderr
    stacks = (logs / "attempt_0" / "rank_1" / "stacks.txt").read_text()
    assert f'File "{script}", line 6 in tv_hang_here_for_test' in stacks, stacks
    report = failure.read_text()
    assert "stacks on hang (attempt 0):" in report, report
    assert f"main thread in tv_hang_here_for_test ({script}:6)" in report, report
    assert str(logs / "attempt_0" / "rank_1" / "stacks.txt") in report, report  # listed by path
    out = (logs / "attempt_0" / "rank_1" / "stdout.log").read_text()
    # The hook is invisible: argv, PYTHONPATH and the user's own sitecustomize as without it.
    assert f"argv ['{script}', 'x', '--y'] PYTHONPATH {user_site}" in out, out
    assert "user sitecustomize ran" in out, out


def test_stacks_command_collects_from_a_running_job_without_a_restart(tmp_path):
    go = tmp_path / "go"
    script = tmp_path / "busy.py"
    script.write_text(f'''
import os, time
def tv_busy_for_stacks_test():
    while not os.path.exists({str(go)!r}):
        time.sleep(0.05)
print("ready", flush=True)
tv_busy_for_stacks_test()
''')
    logs, out = tmp_path / "logs", tmp_path / "out"
    with open(out, "w") as out_file:
        p = subprocess.Popen([str(BIN), "run", "--preflight", "none", "--nproc-per-node", "2",
                              "--max-restarts", "0", "--warm-standby", "off", "--log-dir",
                              str(logs), str(script)],
                             env=H.env(), stdout=out_file, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT / 2
        while not all(f"[rank{r}]: ready" in out.read_text() for r in (0, 1)):
            if time.monotonic() > deadline or p.poll() is not None:
                p.kill()
                raise AssertionError(f"the workers did not start: {p.communicate()}")
            time.sleep(0.05)
        s = H.trainvisor("stacks", "--log-dir", logs)
        assert s.returncode == 0, s.stderr
        for rank in (0, 1):
            assert f"rank {rank} (pid " in s.stdout, s.stdout
        assert s.stdout.count(f"main thread in tv_busy_for_stacks_test ({script}:") == 2, s.stdout
        assert "stacks on request (attempt 0)" in s.stdout
        go.touch()
        _, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err  # the job went on and finished: no restart
    assert "attempt 1" not in err
    assert not (logs / "trainvisor.pid").exists()  # removed at the end


def test_stacks_command_refuses_what_is_not_a_running_job(tmp_path):
    r = H.trainvisor("stacks", "--log-dir", tmp_path)
    assert r.returncode == 78
    assert f"{tmp_path}/trainvisor.pid" in r.stderr and "expected the pid file" in r.stderr
    r = H.trainvisor("stacks", "--pid", os.getpid())
    assert r.returncode == 78 and "is not trainvisor" in r.stderr, r.stderr


ENV_PRINTER = '''
import os
for k in ("TORCH_NCCL_TRACE_BUFFER_SIZE", "TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_DUMP_ON_TIMEOUT",
          "TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "TRAINVISOR_STACKS_FILE"):
    print(k, "=", os.environ.get(k), flush=True)
'''


def test_flight_recorder_settings_reach_workers_unless_the_user_set_them(tmp_path):
    script = tmp_path / "env.py"
    script.write_text(ENV_PRINTER)
    logs = tmp_path / "logs"
    r = H.run("--max-restarts", 0, "--log-dir", logs, script,
              env=H.env(TORCH_NCCL_TRACE_BUFFER_SIZE="7"))
    assert r.returncode == 0, r.stderr
    out = (logs / "attempt_0" / "rank_0" / "stdout.log").read_text()
    assert "TORCH_NCCL_TRACE_BUFFER_SIZE = 7\n" in out, out  # the user's own value (old name)
    assert "TORCH_FR_BUFFER_SIZE = None\n" in out, out  # so not trainvisor's beside it
    assert "TORCH_NCCL_DUMP_ON_TIMEOUT = 1\n" in out, out
    rank_dir = logs.resolve() / "attempt_0" / "rank_0"
    assert f"TORCH_FR_DUMP_TEMP_FILE = {rank_dir}/nccl_trace_rank_\n" in out, out
    assert "TORCH_NCCL_DEBUG_INFO_TEMP_FILE = None\n" in out, out  # torch 2.11 warns about it
    assert f"TRAINVISOR_STACKS_FILE = {rank_dir}/stacks.txt\n" in out, out

    logs_off = tmp_path / "off"
    r = H.run("--max-restarts", 0, "--log-dir", logs_off, "--hang-stacks", "off", script)
    assert r.returncode == 0, r.stderr
    out = (logs_off / "attempt_0" / "rank_0" / "stdout.log").read_text()
    for k in ("TORCH_NCCL_DUMP_ON_TIMEOUT", "TORCH_FR_DUMP_TEMP_FILE", "TORCH_FR_BUFFER_SIZE",
              "TRAINVISOR_STACKS_FILE"):
        assert f"{k} = None\n" in out, out
    assert not (logs_off / ".trainvisor").exists()


FAKE_DUMP = '''
import os, pickle, sys, time
rank = int(os.environ["RANK"])
path = os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(rank)
def entry(seq, state):  # the keys and values of torch's FlightRecorder dump (version 2.x)
    return {"record_id": seq, "pg_id": 0, "process_group": ("0", "default_pg"),
            "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
            "profiling_name": "nccl:all_reduce", "state": state, "is_p2p": False}
if rank == 2:
    class Evil:  # a dump that would run code when unpickled carelessly
        def __reduce__(self):
            return (os.system, ("touch " + sys.argv[1],))
    body = pickle.dumps(Evil())
else:
    last = 4 if rank == 0 else 3  # rank 1 never entered collective #4
    entries = [entry(s, "completed") for s in range(1, last)] + [
        entry(last, "started" if rank == 0 else "completed")]
    body = pickle.dumps({"version": "2.10", "pg_config": {}, "entries": entries})
with open(path, "wb") as f:
    f.write(body)
attempt = os.path.dirname(os.path.dirname(path))
while rank == 0 and not all(os.path.exists(f"{attempt}/rank_{r}/nccl_trace_rank_{r}")
                            for r in (1, 2)):
    time.sleep(0.02)  # the peers have dumped (torch: every rank dumps on a watchdog timeout)
time.sleep(30 if rank else 0)
sys.exit(3)
'''


def test_flight_recorder_dumps_say_which_collective_each_rank_entered(tmp_path):
    script = tmp_path / "dump.py"
    script.write_text(FAKE_DUMP)
    logs, failure, pwned = tmp_path / "logs", tmp_path / "failure", tmp_path / "pwned"
    r = H.run("--nproc-per-node", 3, "--max-restarts", 0, "--log-dir", logs, "--failure-file",
              failure, script, pwned)
    assert r.returncode == 3, r.stderr
    report = failure.read_text()
    assert "nccl flight recorder (attempt 0):" in report, report
    assert ("rank 0: last entered collective #4 nccl:all_reduce (started) in process group 0"
            in report), report
    assert "rank 1: last entered collective #3 nccl:all_reduce (completed)" in report, report
    assert "missing from collective #4 of process group 0: rank 1" in report, report
    assert "rank 2: unreadable dump (UnpicklingError: global posix.system refused)" in report, \
        report
    assert not pwned.exists()  # the reader never runs what a dump names
    assert f"{logs}/attempt_0/rank_0/nccl_trace_rank_0" in report, report  # listed as evidence
