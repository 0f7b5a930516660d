"""The GPU health watch with the real binary against a fake NVML (tests/helpers/fake_nvml/, built
as build/helpers/fake_nvml/libnvidia-ml.so.1): a fatal Xid or a lost GPU mid-training ends the run
with the node-fault code 74 and a failure file naming the GPU; a slowdown is logged once and shown
on /metrics; a GPU with a failed or pending remap fails `preflight` with 69; trainvisor itself
never loads NVML (only its `__query gpu-watch|gpu-health` children do).

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

import tvtest

BIN = str(tvtest.BIN)
FAKE_NVML = tvtest.HELPERS / "fake_nvml"
DEADLINE_S = 60  # guards against a hang only


def env(tmp_path, **extra):
    extra.setdefault("LD_LIBRARY_PATH", FAKE_NVML)
    return tvtest.base_env(TV_FAKE_NVML_LOG=tmp_path / "nvml.log",
                           PYTHON_EXEC="/nonexistent/python3", **extra)


def run(tmp_path, worker, *options, **fake):
    failure = tmp_path / "failure"
    argv = [BIN, "run", "--preflight", "none", "--nproc-per-node", "2", "--max-restarts", "3",
            "--grace-period", "5", "--gpu-health-interval", "0.1", "--failure-file", str(failure),
            *options, "--no-python", "--", *worker]
    p = subprocess.run(argv, env=env(tmp_path, **fake), capture_output=True, text=True,
                       timeout=DEADLINE_S)
    return p, failure


def loaders(tmp_path):
    """The command lines of the processes that loaded the fake NVML."""
    log = tmp_path / "nvml.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 2)[2] for line in lines if line.startswith("load ")]


def assert_only_children_loaded_nvml(tmp_path):
    cmds = loaders(tmp_path)
    assert cmds, "the fake NVML was never loaded"
    assert all(" __query gpu-" in c for c in cmds), cmds


@pytest.mark.parametrize("fault, expected", [
    ({"TV_FAKE_NVML_XID": "1:79:700"},
     ["Xid 79", "GPU has fallen off the bus", "GPU 1", "GPU-fake-0001", "PCI 00000000:02:00.0"]),
    ({"TV_FAKE_NVML_LOST": "0:700"}, ["GPU 0", "GPU-fake-0000", "the GPU is lost", "(lost)"]),
])
def test_a_fatal_gpu_fault_mid_training_is_a_node_fault(tmp_path, fault, expected):
    p, failure = run(tmp_path, tvtest.helper("tv_slow_printer", 100, 600), "--gpu-health", "on",
                     **fault)
    assert p.returncode == 74, p.stderr
    text = failure.read_text()
    assert text.startswith("node 0: node fault: "), text
    for word in expected:
        assert word in text, text
    assert "so that the node is replaced" in p.stderr
    # Not restarted on the broken GPU: one attempt only.
    assert "attempt 1" not in p.stderr, p.stderr
    assert tvtest.left_behind(tvtest.MARKER, tvtest.SESSION) == []
    assert_only_children_loaded_nvml(tmp_path)


def test_a_non_fatal_xid_is_logged_and_the_run_goes_on(tmp_path):
    p, failure = run(tmp_path, tvtest.helper("tv_slow_printer", 100, 15), "--gpu-health", "on",
                     TV_FAKE_NVML_XID="0:13:200")
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("Xid 13: graphics engine exception") == 1, p.stderr
    assert not failure.exists()


def test_a_slowdown_is_logged_once_and_on_metrics(tmp_path):
    port = tvtest.free_port()
    seen = {}

    def scrape():
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline and "text" not in seen:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
                text = body.decode()
                if 'condition="hw_thermal"} 1' in text:
                    seen["text"] = text
            except OSError:
                pass
            time.sleep(0.05)

    t = threading.Thread(target=scrape)
    t.start()
    # 20 ticks of 100 ms: the watch reads the counters about 20 times meanwhile.
    p, _ = run(tmp_path, tvtest.helper("tv_slow_printer", 100, 20), "--metrics-port", str(port),
               TV_FAKE_NVML_THROTTLE="1:0x40:0")
    t.join()
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("hardware thermal slowdown") == 1, p.stderr
    assert "text" in seen, "hw_thermal never showed on /metrics"
    assert ('trainvisor_gpu_condition{gpu="1",uuid="GPU-fake-0001",condition="hw_thermal"} 1'
            in seen["text"])
    assert "trainvisor_gpu_health_watching 1" in seen["text"]
    polls = [line for line in (tmp_path / "nvml.log").read_text().splitlines()
             if line == "poll 1"]
    assert 5 <= len(polls) <= 100, len(polls)  # every 0.1 s, not in a busy loop
    assert_only_children_loaded_nvml(tmp_path)


def test_gpu_health_on_without_nvml_exits_69(tmp_path):
    e = env(tmp_path, LD_LIBRARY_PATH=tmp_path)  # no libnvidia-ml.so.1 here
    p = subprocess.run([BIN, "run", "--preflight", "none", "--nproc-per-node", "1",
                        "--gpu-health", "on", "--no-python", "--",
                        *tvtest.helper("tv_slow_printer", 100, 600)],
                       env=e, capture_output=True, text=True, timeout=DEADLINE_S)
    if "GPU health watch: watching" in p.stderr:
        pytest.skip("this machine has a real libnvidia-ml.so.1")
    assert p.returncode == 69, p.stderr
    assert "--gpu-health on: the GPUs cannot be watched: libnvidia-ml.so.1 could not be loaded" \
        in p.stderr
    assert tvtest.left_behind(tvtest.MARKER, tvtest.SESSION) == []


def test_gpu_health_off_starts_no_watch(tmp_path):
    p, _ = run(tmp_path, tvtest.helper("tv_exit", 0), "--gpu-health", "off",
               TV_FAKE_NVML_XID="0:79:0")
    assert p.returncode == 0, p.stderr
    assert loaders(tmp_path) == []


@pytest.mark.parametrize("fault, words", [
    ({"TV_FAKE_NVML_REMAP": "0:failed"}, ["GPU 0 (GPU-fake-0000", "row remapping failed"]),
    ({"TV_FAKE_NVML_REMAP": "1:pending"}, ["GPU 1 (GPU-fake-0001", "a row remap is pending"]),
    ({"TV_FAKE_NVML_ECC": "0:2"}, ["2 uncorrectable ECC error(s)"]),
])
def test_preflight_fails_on_a_gpu_that_needs_repair(tmp_path, fault, words):
    p = subprocess.run([BIN, "preflight", "--level", "basic"], env=env(tmp_path, **fault),
                       capture_output=True, text=True, timeout=DEADLINE_S)
    assert p.returncode == 69, p.stdout + p.stderr
    row = next(line for line in p.stdout.splitlines() if line.startswith("gpu-health"))
    assert " fail " in row, row
    for w in words:
        assert w in row, row
    assert_only_children_loaded_nvml(tmp_path)


def test_preflight_passes_healthy_fake_gpus(tmp_path):
    p = subprocess.run([BIN, "preflight", "--level", "basic"], env=env(tmp_path),
                       capture_output=True, text=True, timeout=DEADLINE_S)
    row = next(line for line in p.stdout.splitlines() if line.startswith("gpu-health"))
    assert " pass " in row and "2 GPU(s)" in row, row


def cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_node_fault_on_one_node_ends_the_others_with_75(tmp_path):
    """Node 1's GPU raises Xid 79 once both nodes' workers run: 74 there, 75 on node 0, and node
    0's failure file names node 1's fault, not only that node 1 left."""
    master_port, rdzv_port = tvtest.free_ports(2)
    procs = []
    xid = tmp_path / "xid"
    for rank in (0, 1):
        fake = {"TV_FAKE_NVML_XID_FILE": xid} if rank == 1 else {}
        argv = [BIN, "run", "--nnodes", "2", "--node-rank", str(rank), "--master-addr",
                "127.0.0.1", "--master-port", str(master_port), "--rdzv-port", str(rdzv_port),
                "--rdzv-token", "gpu-health-test", "--peer-timeout", "2", "--rdzv-timeout", "20",
                "--nproc-per-node", "1",
                "--grace-period", "3", "--preflight", "none", "--gpu-health",
                "on" if rank == 1 else "off", "--gpu-health-interval", "0.2",
                "--failure-file", str(tmp_path / f"failure{rank}"), "--no-python", "--",
                *tvtest.helper("tv_slow_printer", 100, 600)]
        procs.append(subprocess.Popen(argv, env=env(tmp_path, **fake), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + DEADLINE_S  # a guard, not a figure
    while len([p for p in tvtest.live_processes_with_marker(tvtest.MARKER, tvtest.SESSION)
               if b"tv_slow_printer" in cmdline(p)]) < 2:
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)
    xid.write_text("0:79")
    out = [p.communicate(timeout=DEADLINE_S)[1] for p in procs]
    assert procs[1].returncode == 74, out[1]
    assert procs[0].returncode == 75, out[0]
    assert "Xid 79" in (tmp_path / "failure1").read_text()
    theirs = (tmp_path / "failure0").read_text()
    assert "node 1" in theirs and "Xid 79" in theirs, theirs
    assert tvtest.left_behind(tvtest.MARKER, tvtest.SESSION) == []


def watch_pids():
    pids = []
    for pid in tvtest.live_processes_with_marker(tvtest.MARKER, tvtest.SESSION):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"gpu-watch" in cmd:
            pids.append(pid)
    return pids


def start_watched(tmp_path, **fake):
    """A run of one long worker with the watch on, once the watch is up: (process, deadline). Up
    means trainvisor has heard from it ("watching"): a signal sent as soon as its pid shows could
    find the child between fork and exec, before the watch has taken its signals over (CI saw a
    SIGTERM there). Its stderr goes to a file: ended(p) waits and reads it."""
    argv = [BIN, "run", "--preflight", "none", "--nproc-per-node", "1", "--gpu-health", "on",
            "--gpu-health-interval", "0.1", "--no-python", "--",
            *tvtest.helper("tv_slow_printer", 100, 600)]
    with open(tmp_path / "stderr", "w") as err:
        p = subprocess.Popen(argv, env=env(tmp_path, **fake), stdout=subprocess.DEVNULL,
                             stderr=err)
    p.err_file = tmp_path / "stderr"
    deadline = time.monotonic() + DEADLINE_S
    while "GPU health watch: watching" not in p.err_file.read_text() or not watch_pids():
        assert time.monotonic() < deadline and p.poll() is None, (
            "the watch never started: " + p.err_file.read_text())
        time.sleep(0.02)
    return p, deadline


def ended(p):
    """A start_watched run's stderr, once it has exited."""
    p.wait(timeout=DEADLINE_S)
    return p.err_file.read_text()


def test_a_watch_that_dies_is_started_again(tmp_path):
    """SIGKILLed, the child comes back (a new pid, the log says so); SIGTERM then ends both."""
    p, deadline = start_watched(tmp_path)
    first = watch_pids()[0]
    os.kill(first, signal.SIGKILL)
    while not [q for q in watch_pids() if q != first]:
        assert time.monotonic() < deadline and p.poll() is None, "the watch was not started again"
        time.sleep(0.02)
    p.terminate()
    err = ended(p)
    assert p.returncode == 143, err
    assert "GPU health watch ended (wait status 9): starting it again in 1 s" in err
    assert tvtest.left_behind(tvtest.MARKER, tvtest.SESSION) == []


def test_the_watch_outlives_the_signals_slurm_sends_every_process_of_a_step(tmp_path):
    """scancel, the time limit and `scancel --signal=USR1` signal every process of a Slurm step,
    the watch included: it lives on (the same pid sees the Xid raised after them), and trainvisor
    does not start it again. Before the fix it exited 143 on SIGTERM and died of SIGUSR1."""
    xid = tmp_path / "xid"
    p, deadline = start_watched(tmp_path, TV_FAKE_NVML_XID_FILE=xid)
    watch = watch_pids()[0]
    os.kill(watch, signal.SIGUSR1)
    os.kill(watch, signal.SIGTERM)
    xid.write_text("0:79")
    err = ended(p)
    assert p.returncode == 74, err
    assert "Xid 79" in err, err
    assert "GPU health watch ended" not in err, err


def nice(pid):
    """Field 19 of /proc/PID/stat."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_the_watch_runs_behind_the_workers_at_idle_priority(tmp_path):
    """The watch is started at nice 19 (it never delays a worker on a busy node: issue 41's
    1,024-node formation); the worker keeps trainvisor's own priority."""
    p, _ = start_watched(tmp_path)
    watch = watch_pids()[0]
    workers = [q for q in tvtest.live_processes_with_marker(tvtest.MARKER, tvtest.SESSION)
               if b"tv_slow_printer" in open(f"/proc/{q}/cmdline", "rb").read()]
    assert workers, "no worker found"
    assert nice(watch) == 19, "the GPU watch is not at nice 19"
    assert all(nice(w) == os.getpriority(os.PRIO_PROCESS, 0) for w in workers)
    p.terminate()
    ended(p)
    assert p.returncode == 143
