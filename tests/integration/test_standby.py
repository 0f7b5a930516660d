"""Warm standbys (docs/standby.md) with the real binary and Debian's torch (gloo): a fail-once job
whose restarted ranks come from standbys, what each worker sees diffed against a cold start's
(environment, argv, __name__, __file__, cwd, sys.path[0], process group, PDEATHSIG, stdin,
priority), multiprocessing with the spawn start method and DataLoader workers inside the worker,
a killed standby falling back to cold, an import that fails turning standbys off, and `off`.

Environment (set by ctest): TRAINVISOR_BIN, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tvtest import free_port
import tvtest

SOURCE_DIR = tvtest.SOURCE_DIR
TRAINVISOR = tvtest.BIN
PYTHON = tvtest.PYTHON
TIMEOUT = 600  # 2 shared cores: every torch import takes seconds, standbys import at nice 19
PER_ATTEMPT = {"MASTER_PORT", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_ERROR_FILE",
               "TRAINVISOR_HEARTBEAT_FILE", "TRAINVISOR_STACKS_FILE",
               "TORCH_FR_DUMP_TEMP_FILE"}  # the last two: in the attempt's rank directory

# The worker: records what it sees, all-reduces over gloo, runs a spawn-method child and a
# DataLoader. Attempt 0 waits for the test's go file, then rank 1 fails once. torch is imported
# inside main() so that the spawn child (which re-imports this file as __mp_main__) stays cheap.
WORKER = r'''
import ctypes, json, os, sys, time

def child(q):
    q.put({"name": __name__, "rank": os.environ.get("RANK"), "argv": sys.argv})

def record():
    libc = ctypes.CDLL(None, use_errno=True)
    sig = ctypes.c_int(0)
    libc.prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
    nr = {"x86_64": 252, "aarch64": 31}.get(os.uname().machine)  # ioprio_get
    main = sys.modules["__main__"]
    return {
        "torch_preloaded": "torch" in sys.modules,
        "env": dict(os.environ), "argv": sys.argv, "orig_argv": getattr(sys, "orig_argv", None),
        "name": __name__, "file": __file__, "cwd": os.getcwd(), "path0": sys.path[0],
        "spec": repr(main.__spec__), "loader": type(main.__loader__).__name__,
        "cached": main.__cached__, "doc": main.__doc__, "package": main.__package__,
        "globals": sorted(k for k in vars(main) if k.startswith("__")),
        "pgid_is_pid": os.getpgid(0) == os.getpid(), "ppid": os.getppid(),
        "pdeathsig": sig.value, "stdin": os.readlink("/proc/self/fd/0"),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "ioprio": libc.syscall(nr, 1, 0) if nr else None,
        "fds": sorted(os.listdir("/proc/self/fd")),
    }

def main():
    rec = record()
    import multiprocessing as mp
    import torch, torch.distributed as dist
    from torch.utils.data import DataLoader
    attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    rank = int(os.environ["RANK"])
    out = os.environ["STANDBY_TEST_OUT"]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    rec["spawn_child"] = q.get(timeout=300)
    p.join()
    rec["loader"] = [int(b.sum()) for b in DataLoader(list(range(8)), batch_size=4, num_workers=2)]
    dist.init_process_group("gloo")
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    rec["allreduce"] = t.item()
    with open(f"{out}/rec_{attempt}_{rank}.json", "w") as f:
        json.dump(rec, f)
    print(f"rank {rank} attempt {attempt} done", flush=True)
    if attempt == 0:
        while not os.path.exists(f"{out}/go"):
            time.sleep(0.2)
        if rank == 1:
            sys.exit(3)
        time.sleep(600)  # stopped by trainvisor when rank 1 fails
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
'''


def torch_available():
    return subprocess.run([PYTHON, "-c", "import torch.distributed"], capture_output=True,
                          timeout=300).returncode == 0


pytestmark = [
    pytest.mark.skipif(not TRAINVISOR.exists(), reason=f"{TRAINVISOR} does not exist"),
    pytest.mark.skipif(not torch_available(), reason=f"{PYTHON} has no torch"),
]


class Job:
    """trainvisor running the fail-once worker; its stderr is collected line by line."""

    def __init__(self, tmp, *extra):
        self.out = tmp / "out"
        self.out.mkdir()
        (tmp / "scripts").mkdir()
        self.script = tmp / "scripts" / "train.py"
        self.script.write_text(WORKER)
        env = tvtest.own_env(STANDBY_TEST_OUT=self.out)
        self.marker = env[tvtest.MARKER]
        cmd = [str(TRAINVISOR), "run", "--preflight", "none", "--nproc-per-node", "2",
               "--max-restarts", "1", "--grace-period", "5", "--master-port", str(free_port()),
               *extra, "scripts/train.py", "--flag", "value with space"]
        self.proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.output = tvtest.Output(self.proc, TIMEOUT)
        self.wait_for, self.text = self.output.wait_for, self.output.text

    def go(self):
        (self.out / "go").touch()

    def finish(self):
        rc = self.proc.wait(timeout=TIMEOUT)
        self.output.wait_end()
        return rc

    def rec(self, attempt, rank):
        return json.loads((self.out / f"rec_{attempt}_{rank}.json").read_text())

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def job(tmp_path):
    jobs = []

    def make(*extra):
        jobs.append(Job(tmp_path, *extra))
        return jobs[-1]

    yield make
    for j in jobs:
        j.kill()


def same_as_cold(cold, warm):
    """The differences a restart may show: the per-attempt variables, and nothing else."""
    env_diff = {k for k in cold["env"].keys() | warm["env"].keys()
                if cold["env"].get(k) != warm["env"].get(k)}
    assert env_diff <= PER_ATTEMPT, env_diff
    for key in ("argv", "orig_argv", "name", "file", "cwd", "path0", "spec", "loader", "cached",
                "doc", "package", "globals", "pgid_is_pid", "ppid", "pdeathsig", "stdin", "nice",
                "ioprio", "fds", "loader", "allreduce"):
        assert warm[key] == cold[key], (key, cold[key], warm[key])
    assert warm["spawn_child"]["name"] == "__mp_main__"
    assert warm["spawn_child"]["argv"] == cold["spawn_child"]["argv"]


def test_restarted_ranks_come_from_standbys_and_look_cold(job):
    j = job("--warm-standby", "on")
    j.wait_for(r"local rank \d: warm standby ready \(pid \d+, imports in [\d.]+ s, RSS \d+ MiB\)", 2)
    j.wait_for(r"attempt 0 done", 2)
    j.go()
    assert j.finish() == 0, j.text()
    log = j.text()
    for r in (0, 1):
        assert f"rank {r}: started from its warm standby" in log, log
        cold, warm = j.rec(0, r), j.rec(1, r)
        assert not cold["torch_preloaded"] and warm["torch_preloaded"]
        same_as_cold(cold, warm)
        assert warm["argv"] == ["scripts/train.py", "--flag", "value with space"]
        assert warm["file"] == str(j.script)
        assert warm["pdeathsig"] == signal.SIGKILL and warm["stdin"] == "/dev/null"
        assert warm["env"]["TORCHELASTIC_RESTART_COUNT"] == "1"
        assert warm["allreduce"] == 3.0
        # The worker gets its own attempt's stacks file (the hook registers it when the standby
        # becomes a worker: docs/supervision.md, "Evidence on hang").
        stacks = Path(warm["env"]["TRAINVISOR_STACKS_FILE"])
        assert stacks.parts[-3:] == ("attempt_1", f"rank_{r}", "stacks.txt"), stacks
    assert "cold start" not in log, log


def test_killed_standby_falls_back_to_cold(job):
    j = job()  # auto: on for a Python command
    ready = j.wait_for(r"local rank (\d): warm standby ready \(pid (\d+)", 2)
    j.wait_for(r"attempt 0 done", 2)
    victim = {int(m.group(1)): int(m.group(2)) for m in ready}[1]
    os.kill(victim, signal.SIGKILL)
    j.wait_for(r"local rank 1: its standby ended before it was used \(killed by signal 9\)")
    j.go()
    assert j.finish() == 0, j.text()
    log = j.text()
    assert "rank 0: started from its warm standby" in log, log
    assert "rank 1: started from its warm standby" not in log, log
    assert j.rec(1, 0)["torch_preloaded"] and not j.rec(1, 1)["torch_preloaded"]
    same_as_cold(j.rec(0, 1), j.rec(1, 1))


def test_failed_import_turns_standbys_off_and_off_is_cold(job, tmp_path):
    j = job("--warm-import", "no_such_module_tv")
    j.wait_for(r"warm standbys off: import no_such_module_tv failed: ModuleNotFoundError")
    j.wait_for(r"attempt 0 done", 2)
    j.go()
    assert j.finish() == 0, j.text()
    assert "started from its warm standby" not in j.text()
    assert not j.rec(1, 0)["torch_preloaded"]
    assert len(re.findall("warm standbys off", j.text())) == 1, j.text()


def test_off_starts_no_standby(job):
    j = job("--warm-standby", "off")
    j.wait_for(r"attempt 0 done", 2)
    assert "standby" not in j.text()
    j.go()
    assert j.finish() == 0, j.text()
    assert "standby" not in j.text()
    assert not j.rec(1, 1)["torch_preloaded"]


def test_bad_option_values_are_refused(tmp_path):
    for args, needle in ((["--warm-standby", "maybe"], '--warm-standby="maybe"'),
                         (["--warm-import", "os;x"], "--warm-import")):
        r = subprocess.run([str(TRAINVISOR), "run", "--preflight", "none", *args, "x.py"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert r.returncode == 78, r.stderr  # a bad value (exit 78), not bad usage (64)
        assert needle in r.stderr
