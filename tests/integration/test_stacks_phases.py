"""`trainvisor stacks` never changes the job's course (issue 38): a request in each phase of a run
(rendezvous, running, the pause between generations, draining after SIGTERM) is answered, and the
job then starts, restarts and ends exactly as it would have without it: same exit code, the
restart happens. Real binary, real Python workers on CPU, a 2-node job on loopback.

Each wait is for an event (a log line, a file), never for a time; TIMEOUT only guards a hang.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import tvtest

BIN = tvtest.BIN
TIMEOUT = 90  # every case ends well before this; a hang fails the test
H = tvtest.Hermetic("TV_STACKS_PHASES_TEST", TIMEOUT)


@pytest.fixture(autouse=True)
def _kill_leftovers():
    yield
    H.kill_leftovers()


class Run:
    """One `trainvisor run` in the background, its stdout and stderr in files the test polls."""

    def __init__(self, tmp_path, name, args):
        self.out, self.err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.p = subprocess.Popen([str(BIN), "run", "--preflight", "none", *map(str, args)],
                                      env=H.env(), stdout=out, stderr=err)

    def wait_for(self, text, where="err"):
        path = self.err if where == "err" else self.out
        deadline = time.monotonic() + TIMEOUT / 2
        while text not in path.read_text():
            if time.monotonic() > deadline or self.p.poll() is not None:
                raise AssertionError(f"never logged {text!r}: {self.err.read_text()[-3000:]}")
            time.sleep(0.02)

    def end(self):
        try:
            self.p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError("still running: " + self.err.read_text()[-3000:])
        return self.p.returncode, self.err.read_text()


def wait_for_file(path, run):
    deadline = time.monotonic() + TIMEOUT / 2
    while not Path(path).exists():
        if time.monotonic() > deadline or run.p.poll() is not None:
            raise AssertionError(f"{path} never appeared: {run.err.read_text()[-3000:]}")
        time.sleep(0.02)


def stacks(*args):
    s = H.trainvisor("stacks", *args)
    assert s.returncode == 0, s.stdout + s.stderr
    return s.stdout


def two_node_args(node, ports, logs):
    master, rdzv = ports
    return ["--nnodes", 2, "--node-rank", node, "--nproc-per-node", 1, "--master-addr",
            "127.0.0.1", "--master-port", master, "--rdzv-port", rdzv, "--log-dir", logs]


OK_SCRIPT = 'import os\nprint("generation", os.environ["TORCHELASTIC_RESTART_COUNT"], flush=True)\n'


def test_stacks_while_a_node_waits_at_the_rendezvous_lets_generation_0_start(tmp_path):
    script = tmp_path / "ok.py"
    script.write_text(OK_SCRIPT)
    ports = tvtest.free_ports(2)
    logs = [tmp_path / "logs0", tmp_path / "logs1"]
    node0 = Run(tmp_path, "node0", [*two_node_args(0, ports, logs[0]), "--warm-standby", "off",
                                    script])
    wait_for_file(logs[0] / "trainvisor.pid", node0)  # its loop runs; node 1 has not joined
    out = stacks("--log-dir", logs[0])
    assert "stacks on request (before generation 0):\n  no running worker" in out, out
    node1 = Run(tmp_path, "node1", [*two_node_args(1, ports, logs[1]), "--warm-standby", "off",
                                    script])
    for node, run in enumerate((node0, node1)):
        code, err = run.end()
        assert code == 0, f"node {node}: {err[-3000:]}"
        assert "generation 0: starting 1 worker(s)" in err, err[-3000:]
    err0 = node0.err.read_text()
    assert err0.index("collecting the Python stacks") < err0.index("generation 0: starting"), err0


def test_stacks_while_running_keeps_the_restart_after_a_later_failure(tmp_path):
    go = tmp_path / "go"
    script = tmp_path / "fail_once.py"
    script.write_text(f'''
import os, sys, time
def tv_running_for_stacks_test():
    while not os.path.exists({str(go)!r}):
        time.sleep(0.05)
if os.environ["TORCHELASTIC_RESTART_COUNT"] != "0":
    sys.exit(0)
print("ready", flush=True)
tv_running_for_stacks_test()
sys.exit(1)
''')
    logs = tmp_path / "logs"
    run = Run(tmp_path, "run", ["--max-restarts", 1, "--log-dir", logs, script])
    run.wait_for("[rank0]: ready", where="out")
    out = stacks("--log-dir", logs)
    assert f"main thread in tv_running_for_stacks_test ({script}:" in out, out
    go.touch()
    code, err = run.end()
    assert code == 0, err[-3000:]  # generation 0 failed, generation 1 ran and succeeded
    assert "generation 1: starting 1 worker(s)" in err, err[-3000:]


def test_stacks_in_the_pause_between_generations_keeps_the_restart(tmp_path):
    # Node 1's worker fails once node 0's is up. Node 0's worker, told to stop, freezes its own
    # trainvisor (the coordinator) with SIGSTOP: node 1 has stopped its generation and waits for
    # the next start, and nothing can start it until the test sends SIGCONT.
    frozen, up = tmp_path / "frozen", tmp_path / "up0"
    script = tmp_path / "pause.py"
    script.write_text(f'''
import os, signal, sys, time
if os.environ["TORCHELASTIC_RESTART_COUNT"] != "0":
    print("generation 1 ran", flush=True)
    sys.exit(0)
if os.environ["GROUP_RANK"] == "1":
    while not os.path.exists({str(up)!r}):
        time.sleep(0.05)
    sys.exit(1)
def freeze_my_trainvisor(*_):
    os.kill(os.getppid(), signal.SIGSTOP)
    open({str(frozen)!r}, "w").close()
    os._exit(1)
signal.signal(signal.SIGTERM, freeze_my_trainvisor)
open({str(up)!r}, "w").close()
while True:
    time.sleep(0.05)
''')
    ports = tvtest.free_ports(2)
    logs = [tmp_path / "logs0", tmp_path / "logs1"]
    runs = [Run(tmp_path, f"node{n}", [*two_node_args(n, ports, logs[n]), "--max-restarts", 1,
                                       "--peer-timeout", 600, script]) for n in (0, 1)]
    wait_for_file(frozen, runs[0])
    node0_pid = int((logs[0] / "trainvisor.pid").read_text())
    try:
        runs[1].wait_for("generation 0 failed")
        out = stacks("--log-dir", logs[1])
        assert "stacks on request (attempt 0)" in out and "no running worker" in out, out
    finally:
        os.kill(node0_pid, signal.SIGCONT)
    for node, run in enumerate(runs):
        code, err = run.end()
        assert code == 0, f"node {node}: {err[-3000:]}"
        assert "generation 1: starting 1 worker(s)" in err, f"node {node}: {err[-3000:]}"
        assert "generation 1 ran" in run.out.read_text()


def test_stacks_while_draining_after_sigterm_keeps_the_exit_code(tmp_path):
    go = tmp_path / "go"
    script = tmp_path / "ignore_term.py"
    script.write_text(f'''
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
while not os.path.exists({str(go)!r}):
    time.sleep(0.05)
print("saved", flush=True)
''')
    run = Run(tmp_path, "run", ["--grace-period", 600, "--warm-standby", "off", script])
    run.wait_for("[rank0]: ready", where="out")
    run.p.send_signal(signal.SIGTERM)
    run.wait_for("received SIGTERM: forwarding to the workers")
    out = stacks("--pid", run.p.pid)
    assert "they are in its log" in out, out
    run.wait_for("stacks signal: ignored")
    go.touch()  # the worker ends on its own within the grace period
    code, err = run.end()
    assert code == 143, err[-3000:]
    assert "saved" in run.out.read_text()
    assert "generation 1" not in err, err[-3000:]
