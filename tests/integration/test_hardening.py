"""Hostile input against the real binary (issue #11): files that are FIFOs, devices or huge,
files that cannot be written, numbers that overflow or wrap, text with control characters, worker
exit codes that collide with trainvisor's own. Every case must end in one clear message and a
bounded time, never a hang or an abort.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import contextlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import tvtest

SOURCE_DIR = tvtest.SOURCE_DIR
TRAINVISOR = tvtest.BIN
HELPERS = tvtest.HELPERS
PYTHON = tvtest.PYTHON
NCCL_DATA = SOURCE_DIR / "tests" / "data" / "nccl"
TIMEOUT = 60  # every case ends well before this; a hang fails the test
H = tvtest.Hermetic("TV_HARDENING_TEST", TIMEOUT)
MARKER, SESSION = H.marker, H.session


base_env = H.env
trainvisor = H.trainvisor
run = H.run
helper = tvtest.helper


def log_lines(stderr):
    """trainvisor's own log lines (worker lines are prefixed [rankN]:)."""
    return [l for l in stderr.splitlines() if l.startswith("[trainvisor ")]


@pytest.fixture(autouse=True)
def no_leftovers():
    yield
    H.kill_leftovers()


tmpfs = tvtest.tmpfs


# ---- Parsers that throw ------------------------------------------------------------------------

OVERLONG = "9" * 40


def test_nccl_log_with_overlong_numbers_is_judged_not_aborted(tmp_path):
    log = tmp_path / "nccl.log"
    log.write_text(
        "host:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n"
        f"host:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin Libfabric (v{OVERLONG})\n"
        f"host:1:1 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found {OVERLONG} nics)\n"
        f"host:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa (found {OVERLONG} nics)\n"
        f"host:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks {OVERLONG} nNodes {OVERLONG} localRanks 1\n"
        "host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n")
    r = trainvisor("preflight", "--nccl-log", log, "--json")
    assert r.returncode in (0, 69), r.stderr  # before: 134, std::out_of_range from std::stoi
    report = json.loads(r.stdout)
    assert report["nranks"] is None and report["nnodes"] is None and report["nic_count"] is None


def test_nccl_log_nnodes_option_overlong_is_78(tmp_path):
    log = NCCL_DATA / "h200x2-nccl2.28.9-p2p-nvlink.log"
    r = trainvisor("preflight", "--nccl-log", log, "--nnodes", OVERLONG)
    assert r.returncode == 78, r.stderr  # before: 134 (std::stoi)
    assert f'--nnodes="{OVERLONG}": expected an integer from 1 to 100000' in r.stderr


def test_probe_bytes_overlong_is_a_failed_check_not_an_abort(tmp_path):
    # No GPU here: --level full still reaches the probe's options only where NCCL loads; the
    # variable must never abort the process either way.
    r = trainvisor("preflight", "--json", env=base_env(TRAINVISOR_PROBE_BYTES=OVERLONG))
    assert r.returncode in (0, 69), r.stderr
    assert "terminate called" not in r.stderr


def test_cuda_visible_devices_overlong_index_is_not_an_abort(tmp_path):
    r = trainvisor("topology", "--json", "--resource-config", tmp_path / "none",
                   env=base_env(CUDA_VISIBLE_DEVICES=OVERLONG))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["nproc_per_node"] == 1


# ---- Files trainvisor reads ---------------------------------------------------------------------

def test_nccl_log_fifo_and_dev_zero_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = trainvisor("preflight", "--nccl-log", fifo, timeout=20)  # before: hung in open()
    assert r.returncode == 78
    assert f"{fifo}: not a regular file (a FIFO)" in r.stderr
    r = trainvisor("preflight", "--nccl-log", "/dev/zero", timeout=20)  # before: grew without end
    assert r.returncode == 78
    assert "/dev/zero: not a regular file (a character device)" in r.stderr


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_resource_config_that_is_not_a_plain_small_file_is_refused(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "resourceconfig.json"
        os.mkfifo(path)
        why = "not a regular file (a FIFO)"
    elif kind == "zero":
        path = Path("/dev/zero")
        why = "not a regular file (a character device)"
    else:
        path = tmp_path / "resourceconfig.json"
        with open(path, "wb") as f:
            f.truncate(800 << 20)  # sparse: 800 MB that cost no disk
        why = "larger than 4194304 bytes"
    for cmd in (["topology", "--platform", "sagemaker"], ["run", "--platform", "sagemaker"]):
        args = [*cmd, "--resource-config", path]
        if cmd[0] == "run":
            args += ["--preflight", "none", "--no-python", "/bin/true"]
        r = trainvisor(*args, timeout=20)  # before: the FIFO hung both for good
        assert r.returncode == 78, (cmd, r.stderr)
        assert why in r.stderr, r.stderr


def write_worker(tmp_path, body):
    script = tmp_path / "worker.py"
    script.write_text("import os, sys, time\nerr = os.environ['TORCHELASTIC_ERROR_FILE']\n"
                      "if os.environ['LOCAL_RANK'] != '0':\n    time.sleep(300)\n" + body)
    return script


def test_worker_turning_its_error_file_into_a_fifo_does_not_freeze_the_supervisor(tmp_path):
    script = write_worker(tmp_path, "os.mkfifo(err)\nsys.exit(3)\n")
    failure = tmp_path / "failure"
    t0 = time.monotonic()
    r = run("--nproc-per-node", 2, "--max-restarts", 0, "--grace-period", 2,
            "--failure-file", failure, script)
    assert r.returncode == 3, r.stderr  # before: the supervisor blocked in open(); rank 1 ran on
    assert time.monotonic() - t0 < 40
    assert "error file refused" in r.stderr and "not a regular file (a FIFO)" in r.stderr
    assert "exit 3" in failure.read_text()


def run_with_error_file_of(tmp_path, size):
    """(exit code, stderr, peak RSS in KiB of trainvisor or its largest reaped descendant) of a
    run whose one worker leaves an error file of `size` bytes and exits 4."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = write_worker(tmp_path, f"with open(err, 'wb') as f:\n    f.truncate({size})\n"
                                    "sys.exit(4)\n")
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "none", "--nproc-per-node", "1",
                          "--max-restarts", "0", str(script)], env=base_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), err, usage.ru_maxrss


def test_an_800_mb_error_file_costs_no_memory(tmp_path):
    code, err, peak = run_with_error_file_of(tmp_path / "big", 800 << 20)
    assert code == 4, err
    assert "larger than 4194304 bytes" in err
    # Against the same binary with a small error file (an ASan build alone is ~200 MB): before the
    # bounded read, the 800 MB file cost 1.6 GB more.
    code, err, baseline = run_with_error_file_of(tmp_path / "small", 100)
    assert code == 4, err
    assert peak - baseline < 100 * 1024, (peak, baseline)


# ---- Files trainvisor writes --------------------------------------------------------------------

def test_fifo_termination_log_does_not_keep_trainvisor_from_exiting(tmp_path):
    fifo = tmp_path / "termination-log"
    os.mkfifo(fifo)
    r = run("--max-restarts", 0, "--termination-log", fifo, "--no-python", *helper("tv_exit", 5),
            timeout=30)  # before: blocked for good in open()
    assert r.returncode == 5, r.stderr
    assert f"root cause {fifo}: not written (not a regular file)" in r.stderr


def test_failure_file_on_a_read_only_file_system_is_logged_once(tmp_path):
    with tmpfs(tmp_path / "ro", "ro,size=64k") as ro:
        r = run("--max-restarts", 0, "--failure-file", ro / "failure", "--no-python",
                *helper("tv_exit", 6))
    assert r.returncode == 6, r.stderr
    lines = [l for l in log_lines(r.stderr) if "not written" in l]
    assert len(lines) == 1, r.stderr
    assert f"{ro}/failure: not written (Read-only file system)" in lines[0]


def test_full_disk_is_logged_once_per_file(tmp_path):
    with tmpfs(tmp_path / "full", "size=64k") as full:
        r = run("--max-restarts", 0, "--log-dir", full / "logs", "--failure-file",
                full / "failure", "--no-python", *helper("tv_spam", 20000, 100))
        assert r.returncode == 0, r.stderr[-2000:]  # before: cut silently
        warn = [l for l in log_lines(r.stderr) if "write failed (No space left on device)" in l]
        assert len(warn) == 1, warn  # one per file that filled up: only stdout.log is written
        assert "stdout.log" in warn[0] and "later lines are dropped" in warn[0]


def test_failure_file_on_a_full_disk_is_logged(tmp_path):
    with tmpfs(tmp_path / "full", "size=16k") as full:
        fd = os.open(full / "filler", os.O_WRONLY | os.O_CREAT)  # fill the file system
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"x" * 4096)
        os.close(fd)
        r = run("--max-restarts", 0, "--failure-file", full / "failure", "--no-python",
                *helper("tv_error_file", "E" * 20000, 7))
        assert r.returncode == 7, r.stderr
        assert f"{full}/failure: not written (No space left on device)" in r.stderr
        assert not (full / "failure").exists()  # no half-written reason


# ---- Values that wrap ---------------------------------------------------------------------------

@pytest.mark.parametrize("option,value,expected", [
    ("--grace-period", "1e20", "a number of seconds from 0 to 86400"),
    ("--grace-period", "inf", "a number of seconds from 0 to 86400"),
    ("--grace-period", "nan", "a number of seconds from 0 to 86400"),
    ("--grace-period", "-1", "a number of seconds from 0 to 86400"),
    ("--rdzv-timeout", "1e300", "a number of seconds from 0 to 604800"),
    ("--peer-timeout", "9223372036854775807", "a number of seconds from 0 to 86400"),
    ("--hang-timeout", "1e18", "a number of seconds from 0 to 604800"),
    ("--min-busbw", "inf", "a number from 0 to 100000"),
])
def test_durations_out_of_range_are_78_naming_the_option(option, value, expected):
    r = run(option, value, "--no-python", "/bin/true")
    assert r.returncode == 78, r.stderr  # before: 1e20 became "SIGKILL after -9223372036854775808 ms"
    assert f'{option}="{value}": expected {expected}' in r.stderr


def test_master_port_65535_does_not_derive_rendezvous_port_65536():
    r = run("--nnodes", 2, "--node-rank", 0, "--master-addr", "127.0.0.1", "--master-port", 65535,
            "--no-python", "/bin/true", timeout=20)
    assert r.returncode == 78, r.stderr  # before: node 0 listened on a random port, 900 s wait
    assert "master port + 1 = 65536" in r.stderr and "--rdzv-port" in r.stderr


# ---- Text from outside --------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["node 1", "node1\n[trainvisor 00:00:00.000 E] forged", "a\x1b[31m"])
def test_host_names_with_spaces_or_control_characters_are_78(value):
    env = base_env(PET_NNODES="2", PET_NODE_RANK="1", PET_MASTER_ADDR=value, PET_MASTER_PORT="29500")
    r = run("--no-python", "/bin/true", env=env, timeout=20)
    assert r.returncode == 78, r.stderr
    assert "PET_MASTER_ADDR" in r.stderr and "expected a host name or address" in r.stderr
    assert not any(l.startswith("[trainvisor 00:00:00.000") for l in r.stderr.splitlines())


def test_host_from_a_resource_config_with_a_space_is_78(tmp_path):
    rc = tmp_path / "resourceconfig.json"
    rc.write_text(json.dumps({"current_host": "algo 1", "hosts": ["algo 1", "algo-2"]}))
    r = trainvisor("topology", "--platform", "sagemaker", "--resource-config", rc)
    assert r.returncode == 78, r.stderr
    assert "expected a host name or address" in r.stderr


def test_worker_error_message_with_newlines_and_ansi_lands_escaped(tmp_path):
    failure, tlog = tmp_path / "failure", tmp_path / "termination-log"
    message = "boom\n[trainvisor 00:00:00.000 E] forged line\x1b[31m red"
    r = run("--max-restarts", 0, "--failure-file", failure, "--termination-log", tlog,
            "--no-python", *helper("tv_error_file", message, 3))
    assert r.returncode == 3
    for f in (failure, tlog):
        text = f.read_text()
        assert "\x1b" not in text and "\r" not in text
        first = text.splitlines()[0]
        assert first.endswith("exit 3: boom\\n[trainvisor 00:00:00.000 E] forged line\\x1b[31m red")
    own = log_lines(r.stderr)
    assert not any(l.startswith("[trainvisor 00:00:00.000") for l in r.stderr.splitlines())
    assert any("boom\\n[trainvisor 00:00:00.000 E] forged line\\x1b[31m red" in l for l in own)


@pytest.mark.parametrize("record", [
    {"message": {"message": {"py_callstack": "Traceback"}, "extraInfo": {"py_callstack": 7}}},
    {"message": {"message": ["x"], "extraInfo": {"timestamp": {"t": 1}}}},
])
def test_error_file_with_fields_of_another_type_is_ignored_not_an_abort(tmp_path, record):
    # Found by fuzz_error_file: a nested object where torch writes a string aborted trainvisor.
    failure = tmp_path / "failure"
    script = (f"import json, os, sys; open(os.environ['TORCHELASTIC_ERROR_FILE'], 'w')"
              f".write(json.dumps({record!r})); print('last words', flush=True); sys.exit(5)")
    r = run("--max-restarts", 0, "--failure-file", failure, "--no-python", PYTHON, "-c", script)
    assert r.returncode == 5, r.stderr
    assert "exit 5" in failure.read_text()


# ---- Worker exit codes that collide with trainvisor's own ---------------------------------------

@pytest.mark.parametrize("code", [64, 69, 75, 78, 124])
def test_worker_exit_code_that_collides_is_passed_up_and_said_so(tmp_path, code):
    failure = tmp_path / "failure"
    r = run("--max-restarts", 0, "--failure-file", failure, "--no-python", *helper("tv_exit", code))
    assert r.returncode == code, r.stderr
    note = f"exit {code} (the worker's own exit code, not trainvisor's"
    assert note in failure.read_text()
    assert any(note in l for l in log_lines(r.stderr)), r.stderr
