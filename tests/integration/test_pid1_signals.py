"""PID 1 answers SIGTERM at every moment, and never loads a vendor library itself.

- Vendor libraries (libcuda, libfabric, libnccl) are loaded only by `trainvisor __query` children:
  fake ones on LD_LIBRARY_PATH log which process loaded them; the real Debian libfabric is never
  in trainvisor's own /proc/PID/maps.
- A query that hangs is killed at TRAINVISOR_CHECK_TIMEOUT and fails its check.
- SIGTERM at many points of a startup as PID 1 (`unshare --pid --fork --mount-proc`), with each
  --preflight setting and on both nodes of a 2-node rendezvous on loopback: every one exits 143,
  and nothing the run started is left.

The fake libraries' constructor does what libinfinipath does to a process that loads it: installs
SIGTERM/SIGINT handlers that exit(1) and unblocks those signals; optionally it then hangs in
dlopen (TV_FAKE_HANG seconds). Were it ever loaded into trainvisor, a SIGTERM would exit 1.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import tvtest
from tvtest import free_ports

TRAINVISOR = tvtest.BIN
MARKER = tvtest.MARKER  # conftest.py kills what carries it after each test
SESSION = tvtest.SESSION

@pytest.fixture(scope="module")
def fake_libs(tmp_path_factory):
    return tvtest.fake_vendor_libs(tmp_path_factory.mktemp("fakelibs"))


def env(**extra):
    return tvtest.base_env(PYTHON_EXEC="/nonexistent/python3", **extra)


def fake_env(libs, log, **extra):
    return env(LD_LIBRARY_PATH=libs, TV_FAKE_LOG=log, **extra)


def loaders(log):
    return [line for line in Path(log).read_text().splitlines()] if Path(log).exists() else []


def assert_only_children_loaded(log):
    lines = loaders(log)
    assert lines, "the fake vendor libraries were never loaded"
    for line in lines:
        assert " __query " in line, f"a vendor library was loaded outside a __query child: {line}"


def left_behind():
    return tvtest.left_behind(MARKER, SESSION)


# --- vendor libraries only in children ---------------------------------------------------------

def test_run_preflight_loads_vendor_libraries_only_in_children(fake_libs, tmp_path):
    log = tmp_path / "loaded"
    r = subprocess.run([str(TRAINVISOR), "run", "--preflight", "basic", "--", "true"],
                       env=fake_env(fake_libs, log), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert_only_children_loaded(log)
    assert any("libcuda.so.1" in l for l in loaders(log))
    assert any("libfabric.so.1" in l for l in loaders(log))


def test_preflight_and_version_load_vendor_libraries_only_in_children(fake_libs, tmp_path):
    log = tmp_path / "loaded"
    for cmd in (["preflight", "--json"], ["version"], ["version", "--json"]):
        r = subprocess.run([str(TRAINVISOR), *cmd], env=fake_env(fake_libs, log),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode in (0, 69), r.stderr
    assert_only_children_loaded(log)
    assert any("libnccl.so.2" in l for l in loaders(log)), "version did not query NCCL"


def test_real_libfabric_is_never_in_trainvisors_own_maps(tmp_path):
    if not Path("/usr/lib/x86_64-linux-gnu/libfabric.so.1").exists():
        pytest.skip("Debian's libfabric is not installed")
    # The worker looks at its parent (trainvisor) after the preflight asked the real libfabric.
    script = "grep -cE 'libfabric|libcuda|libnccl' /proc/$PPID/maps; true"
    r = subprocess.run([str(TRAINVISOR), "run", "--preflight", "basic", "--no-python", "--",
                        "/bin/sh", "-c", script], env=env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "libfabric" in r.stderr and "libfabric.so.1 could not be loaded" not in r.stderr, r.stderr
    assert r.stdout.strip().splitlines()[-1].endswith("0"), r.stdout


def test_a_hung_vendor_query_is_killed_and_fails_its_check(fake_libs, tmp_path):
    log = tmp_path / "loaded"
    t0 = time.monotonic()
    r = subprocess.run([str(TRAINVISOR), "preflight", "--level", "basic"],
                       env=fake_env(fake_libs, log, TV_FAKE_HANG=600, TRAINVISOR_CHECK_TIMEOUT=2),
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert r.returncode == 69, r.stdout + r.stderr
    assert "gpu" in r.stdout and "hung: killed after 2 s" in r.stdout, r.stdout
    assert "libfabric" in r.stdout
    assert took < 60
    assert not left_behind()


# --- SIGTERM at every moment -------------------------------------------------------------------

def can_unshare_pid():
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


needs_unshare = pytest.mark.skipif(not can_unshare_pid(),
                                   reason="needs `unshare --pid --fork --mount-proc` (root)")


def trainvisor_pid(launcher_pid, timeout=20):
    """The trainvisor process under `unshare --fork` (its child), once its Init exists. Before
    that instant (exec, the dynamic loader) the kernel drops SIGTERM sent to a namespace's PID 1
    that has no handler yet, for any init (tini too); the test starts its clock there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for task in Path(f"/proc/{launcher_pid}/task").glob("*"):
            kids = (task / "children").read_text().split()
            if kids and tvtest.init_exists(int(kids[0])):
                return int(kids[0])
        time.sleep(0.001)
    raise AssertionError("unshare did not start trainvisor")


def pid1_run(args, e, ports=None):
    return subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", str(TRAINVISOR), "run",
                             *map(str, args)], env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def term_after(procs, delay):
    pids = [trainvisor_pid(p.pid) for p in procs]
    time.sleep(delay)
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    out = []
    for p in procs:
        try:
            stdout, stderr = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            raise AssertionError("still running 60 s after SIGTERM: " + stderr[-3000:])
        out.append((p.returncode, stderr))
    return out


DELAYS = [0.0, 0.01, 0.05, 0.15, 0.4, 1.0]


@needs_unshare
@pytest.mark.parametrize("preflight", ["none", "basic", "full", "auto"])
@pytest.mark.parametrize("delay", DELAYS)
def test_sigterm_at_any_moment_of_a_pid1_startup_exits_143(fake_libs, tmp_path, preflight, delay):
    # The fake libraries hang in dlopen for 2 s, so the preflight's queries are running when
    # the later signals land; the worker sleeps, so the last ones land while it runs.
    e = fake_env(fake_libs, tmp_path / "loaded", TV_FAKE_HANG=2)
    p = pid1_run(["--preflight", preflight, "--grace-period", 5, "--", "sleep", 30], e)
    [(code, stderr)] = term_after([p], delay)
    assert code == 143, stderr[-3000:]
    assert not left_behind()


@needs_unshare
@pytest.mark.parametrize("preflight", ["none", "full"])
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.3, 1.0])
def test_sigterm_on_both_nodes_of_a_rendezvous_exits_143(tmp_path, preflight, delay):
    master, rdzv = free_ports(2)
    procs = []
    for node in (0, 1):
        args = ["--preflight", preflight, "--nnodes", 2, "--node-rank", node, "--nproc-per-node", 1,
                "--master-addr", "127.0.0.1", "--master-port", master, "--rdzv-port", rdzv,
                "--grace-period", 5, "--", "sleep", 30]
        procs.append(pid1_run(args, env()))
    for node, (code, stderr) in enumerate(term_after(procs, delay)):
        assert code == 143, f"node {node}: " + stderr[-3000:]
    assert not left_behind()


def test_sigterm_during_the_preflight_without_pid1_leaves_no_child(fake_libs, tmp_path):
    # Not PID 1 (nothing kills the children for us when trainvisor exits): the query children
    # are killed by trainvisor itself.
    e = fake_env(fake_libs, tmp_path / "loaded", TV_FAKE_HANG=30)
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "basic", "--", "sleep", "30"],
                         env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not loaders(tmp_path / "loaded") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert loaders(tmp_path / "loaded"), "the query never started"
    p.send_signal(signal.SIGTERM)
    _, stderr = p.communicate(timeout=30)
    assert p.returncode == 143, stderr
    assert "received SIGTERM during preflight" in stderr, stderr
    assert not left_behind()  # the SIGKILLs it sent have landed (polled, no sleep)


# --- every other catchable signal is forwarded, as tini does -----------------------------------

# Sent to trainvisor one by one; tv_sigcount counts each delivery to each worker (USR1 always).
FORWARDED = ["QUIT", "USR2", "WINCH", "TSTP", "CONT", "ALRM", "URG", "PWR", "RTMIN+1", "RTMAX"]


def signal_number(name):
    if name.startswith("RTMIN+"):
        return signal.SIGRTMIN + int(name[6:])
    return signal.SIGRTMAX if name == "RTMAX" else getattr(signal, "SIG" + name)


def read_counts(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def wait_for_counts(out, name, count, p):
    deadline = time.monotonic() + 30
    files = [out / "sig-0.json", out / "sig-1.json"]
    while not all(read_counts(f).get(name) == count for f in files):
        if time.monotonic() > deadline or p.poll() is not None:
            raise AssertionError(f"SIG{name} never reached both workers: "
                                 f"{[read_counts(f) for f in files]}")
        time.sleep(0.02)


@pytest.mark.parametrize("pid1", [False, True])
def test_every_forwarded_signal_reaches_each_worker_once_and_changes_nothing(tmp_path, pid1):
    if pid1 and not can_unshare_pid():
        pytest.skip("needs `unshare --pid --fork --mount-proc` (root)")
    out = tmp_path / "out"
    out.mkdir()
    args = ["--preflight", "none", "--nproc-per-node", 2, "--grace-period", 60, "--no-python",
            "--", tvtest.HELPERS / "tv_sigcount", out, *FORWARDED]
    if pid1:
        p = pid1_run(args, env())
        pid = trainvisor_pid(p.pid)
    else:
        p = subprocess.Popen([str(TRAINVISOR), "run", *map(str, args)], env=env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pid = p.pid
    try:
        for name in ["USR1", *FORWARDED]:
            wait_for_counts(out, name, 0, p)  # both workers up, nothing counted yet
        for name in ["USR1", *FORWARDED]:  # one at a time: each lands before the next is sent
            os.kill(pid, signal_number(name))
            wait_for_counts(out, name, 1, p)
        os.kill(pid, signal.SIGTERM)
        _, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 143, stderr[-3000:]
    expected = {name: 1 for name in ["USR1", "TERM", *FORWARDED]}
    expected["CONT"] = 2  # the forwarded one, and the one every SIGTERM to a worker is followed by
    for rank in (0, 1):
        assert read_counts(out / f"sig-{rank}.json") == expected, stderr[-3000:]
    assert "received SIGQUIT: forwarded to 2 worker(s)" in stderr, stderr[-3000:]
    assert "generation 1" not in stderr
    assert not left_behind()


# Generation 0 waits for SIGQUIT with its default action (core and exit); generation 1 succeeds.
QUIT_WORKER = '''
import os, resource, sys, time
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
if os.environ["TORCHELASTIC_RESTART_COUNT"] != "0":
    sys.exit(0)
print("ready", flush=True)
while True:
    time.sleep(0.05)
'''


def test_a_worker_that_dies_of_a_forwarded_sigquit_is_a_failure_and_restarts(tmp_path):
    script = tmp_path / "quit.py"
    script.write_text(QUIT_WORKER)
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "none", "--max-restarts", "1",
                          "--no-python", "--", tvtest.PYTHON, str(script)], env=env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().endswith("ready\n")
        os.kill(p.pid, signal.SIGQUIT)
        _, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, stderr[-3000:]  # generation 0 failed of it, generation 1 succeeded
    assert "received SIGQUIT: forwarded to 1 worker(s)" in stderr, stderr[-3000:]
    assert "exit code 131" in stderr and "generation 1: starting" in stderr, stderr[-3000:]
    assert not left_behind()


# --- no thread of trainvisor's starts once the workers run (issue 32.2) -------------------------

def test_the_first_worker_line_starts_no_thread_in_trainvisor(tmp_path):
    # A thread started lazily (the stdout writer used to start on the first worker line) fails
    # once a worker has spent the pids limit: std::terminate in PID 1. Every thread exists first.
    up, go, done = tmp_path / "up", tmp_path / "go", tmp_path / "done"
    script = (f"touch {up}; while [ ! -e {go} ]; do sleep 0.02; done; echo hello; "
              f"while [ ! -e {done} ]; do sleep 0.02; done")
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "none", "--gpu-health", "off",
                          "--no-python", "--", "/bin/sh", "-c", script], env=env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not up.exists():
            assert time.monotonic() < deadline and p.poll() is None, "the worker never started"
            time.sleep(0.02)
        before = sorted(os.listdir(f"/proc/{p.pid}/task"))
        go.touch()
        assert p.stdout.readline() == "[rank0]: hello\n"
        after = sorted(os.listdir(f"/proc/{p.pid}/task"))
        done.touch()
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0
    assert after == before, f"threads started after the worker ran: {set(after) - set(before)}"


FORK_UNTIL_EAGAIN = '''
import os, sys, time
n = 0
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print("forked", n, flush=True)
sys.exit(1)
'''


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("prlimit"),
                    reason="needs root, setpriv and prlimit (a run as nobody under a pids limit)")
def test_a_worker_that_spends_the_pids_limit_is_its_own_failure(tmp_path):
    # nobody must reach the binary: a clone in a `mktemp -d` folder (0700) is not reachable,
    # so the run uses a copy in a folder of its own that nobody may enter.
    reachable = Path(tempfile.mkdtemp(prefix="tv-nobody-", dir="/tmp"))
    try:
        reachable.chmod(0o755)
        binary = reachable / "trainvisor"
        shutil.copy2(TRAINVISOR, binary)
        binary.chmod(0o755)
        # RLIMIT_NPROC counts nobody's processes: trainvisor's threads and the worker's children.
        r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                            "prlimit", "--nproc=300", str(binary), "run", "--preflight", "none",
                            "--max-restarts", "0", "--no-python", "--", tvtest.PYTHON, "-c",
                            FORK_UNTIL_EAGAIN], env=env(TMPDIR="/tmp"), cwd=reachable,
                           capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(reachable, ignore_errors=True)
    assert r.returncode == 1, r.stderr[-3000:]  # the worker's own code: no abort, no 71
    assert "[rank0]: forked" in r.stdout, r.stdout[-2000:]
    assert "terminate" not in r.stderr and "cannot start a thread" not in r.stderr
    assert not left_behind()  # the worker's forked children were killed with it
