"""The real binary in a hostile environment (issue #23): a second, unprivileged user (nobody) who
plants links, files and FIFOs in a shared 0777 directory while trainvisor runs as root; input
nested 10^5 levels; a TMPDIR that is not there; idle connections against /healthz. Every case
ends in one clear message and a bounded time, and nothing of another user's is written or run.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

import tvtest

SOURCE_DIR = tvtest.SOURCE_DIR
TRAINVISOR = tvtest.BIN
HELPERS = tvtest.HELPERS
PYTHON = tvtest.PYTHON
TIMEOUT = 60  # every case ends well before this; a hang fails the test
H = tvtest.Hermetic("TV_HARDENING_ENVIRONMENT_TEST", TIMEOUT)
MARKER, SESSION = H.marker, H.session

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a second user plants files)")


base_env = H.env
trainvisor = H.trainvisor
run = H.run
helper = tvtest.helper


@pytest.fixture(autouse=True)
def no_leftovers():
    yield
    H.kill_leftovers()


def as_nobody(script):
    """Runs a shell script as the unprivileged user nobody (the co-tenant)."""
    subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    "sh", "-c", script], check=True, timeout=30)


@pytest.fixture
def shared(tmp_path):
    """A team's shared directory: 0777, as on an FSx/EFS share (no sticky bit), where nobody can
    reach it (pytest's own tmp dirs are 0700); the victim is a root-owned file outside it that the
    co-tenant points links at."""
    d = Path(tempfile.mkdtemp(prefix="tv-shared-"))
    d.chmod(0o777)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    yield d, victim
    shutil.rmtree(d, ignore_errors=True)


# ---- Shared directories ------------------------------------------------------------------------

@needs_root
def test_standby_bootstrap_replaced_in_the_log_dir_is_never_run(shared, tmp_path):
    d, _ = shared
    pwned, go = tmp_path / "pwned", tmp_path / "go"
    # Generation 0 plays the co-tenant once the first standby is ready: nobody renames its own
    # code over <log-dir>/standby.py (the file main wrote there and started every later standby
    # from), and the worker fails. Generation 1 starts from that standby, the next standby is
    # started meanwhile (on main: from nobody's file, as root), and generation 1 succeeds.
    script = tmp_path / "worker.py"
    script.write_text(
        "import os, subprocess, sys, time\n"
        f"d, pwned, go = {str(d)!r}, {str(pwned)!r}, {str(go)!r}\n"
        "if os.environ['TORCHELASTIC_RESTART_COUNT'] == '0':\n"
        "    while not os.path.exists(go): time.sleep(0.05)\n"
        "    with open(os.path.join(d, 'evil.py'), 'w') as f:\n"
        "        f.write('open(%r, \"w\").write(\"ran as root\")\\n' % pwned)\n"
        "    subprocess.run(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups',\n"
        "                    'mv', '-f', os.path.join(d, 'evil.py'), os.path.join(d, 'standby.py')],\n"
        "                   check=True)\n"
        "    sys.exit(1)\n"
        "for _ in range(60):\n"
        "    if os.path.exists(pwned): break\n"
        "    time.sleep(0.05)\n")
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "none", "--log-dir", str(d),
                          "--max-restarts", "1", "--warm-standby", "on", str(script)],
                         env=base_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        log = []
        for line in p.stderr:
            log.append(line)
            if "warm standby ready" in line:
                go.touch()
                break
        log += p.stderr.readlines()
        p.wait(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert go.exists(), "".join(log)[-3000:]
    assert p.returncode == 0, "".join(log)[-3000:]
    assert "started from its warm standby" in "".join(log)
    assert not pwned.exists(), "a standby ran code another user put into the log dir"


@needs_root
def test_termination_log_that_is_a_planted_link_is_not_written_through(shared):
    d, victim = shared
    as_nobody(f"ln -s {victim} {d}/tlog")
    r = run("--max-restarts", 0, "--termination-log", d / "tlog", "--no-python",
            *helper("tv_error_file", "owned", 5))
    assert r.returncode == 5, r.stderr
    assert victim.read_text() == "precious\n"  # before: the worker's text, written as root
    assert f"root cause {d}/tlog: not written (a symbolic link; not followed)" in r.stderr


@needs_root
@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_summary_file_with_something_planted_at_the_old_temporary_name(shared, kind):
    d, victim = shared
    target = d / "summary.json"
    as_nobody(f"ln -s {victim} {target}.tmp" if kind == "link" else f"mkfifo {target}.tmp")
    r = run("--summary-file", target, "--no-python", "/bin/true", timeout=30)  # before: hung
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious\n"
    assert json.loads(target.read_text())["exit_code"] == 0
    assert not target.is_symlink()
    leftovers = [p.name for p in d.iterdir() if p.name.startswith(".summary.json.tmp")]
    assert leftovers == []


@needs_root
def test_reused_log_dir_with_a_directory_and_link_of_another_user_is_refused(shared):
    d, victim = shared
    as_nobody(f"mkdir -p {d}/attempt_0/rank_0 && ln -s {victim} {d}/attempt_0/rank_0/stdout.log")
    r = run("--log-dir", d, "--max-restarts", 0, "--no-python", "/bin/echo", "secret-line")
    assert victim.read_text() == "precious\n"  # before: the worker's output appended to it
    assert r.returncode == 78, r.stderr
    assert f"{d}/attempt_0: owned by uid 65534, not by trainvisor (uid 0)" in r.stderr


@needs_root
def test_attempt_directory_planted_as_a_link_is_refused(shared, tmp_path):
    d, _ = shared
    elsewhere = tmp_path / "elsewhere"  # root's own directory, where nobody cannot write
    elsewhere.mkdir()
    as_nobody(f"ln -s {elsewhere} {d}/attempt_0")
    r = run("--log-dir", d, "--max-restarts", 0, "--no-python", "/bin/echo", "secret-line")
    assert r.returncode == 78, r.stderr
    assert list(elsewhere.iterdir()) == []  # before: rank_0/stdout.log written in there, as root
    assert f"{d}/attempt_0: a symbolic link, not a directory of its own" in r.stderr


@needs_root
def test_stale_link_in_a_log_dir_of_trainvisors_own_is_not_followed(shared):
    d, victim = shared
    rank = d / "attempt_0" / "rank_0"
    rank.mkdir(parents=True, mode=0o755)
    for p in (d / "attempt_0", rank):
        p.chmod(0o755)
    (rank / "stdout.log").symlink_to(victim)  # left from when the directory was still loose
    r = run("--log-dir", d, "--max-restarts", 0, "--no-python", "/bin/echo", "secret-line")
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious\n"
    # attempt_0 is an earlier run's: this one writes attempt_1 (docs/supervision.md), so the stale
    # link is never opened at all; its own log is a plain file
    assert "generation 0 writes attempt_1" in r.stderr
    assert (d / "attempt_1" / "rank_0" / "stdout.log").read_text().strip().endswith("secret-line")
    assert not (d / "attempt_1" / "rank_0" / "stdout.log").is_symlink()
    assert "[rank0]: secret-line" in r.stdout  # the lines still reach stdout


def in_private_dev(command):
    """Runs `command` (a shell line) with a private /dev (a tmpfs with null, stdout and stderr),
    so that a device path replaced by mistake is never the host's; then says whether /dev/stdout
    and /dev/stderr are still links."""
    script = ("mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && "
              "ln -s /proc/self/fd/1 /dev/stdout && ln -s /proc/self/fd/2 /dev/stderr && "
              f"{command}; rc=$?; test -L /dev/stdout && test -L /dev/stderr && echo DEV-INTACT >&2;"
              " exit $rc")
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       env=base_env(), capture_output=True, text=True, timeout=TIMEOUT)
    if "mount: " in r.stderr and "permission denied" in r.stderr.lower():
        pytest.skip("cannot mount a private /dev here")
    return r


@needs_root
def test_summary_file_dev_stdout_is_written_in_place_not_replaced():
    r = in_private_dev(f"{TRAINVISOR} run --preflight none --summary-file /dev/stdout "
                       "--no-python /bin/true")
    assert r.returncode == 0, r.stderr
    assert "DEV-INTACT" in r.stderr  # before: /dev/stdout became a regular file
    assert '"exit_code": 0' in r.stdout


@needs_root
def test_termination_log_dev_stderr_is_written_when_stderr_is_a_pipe():
    r = in_private_dev(f"{TRAINVISOR} run --preflight none --max-restarts 0 --termination-log "
                       f"/dev/stderr --no-python {HELPERS / 'tv_error_file'} 'boom here' 5")
    assert r.returncode == 5, r.stderr
    assert "DEV-INTACT" in r.stderr
    assert "not written" not in r.stderr  # before: "not written (not a regular file)"
    assert "root cause written to /dev/stderr" in r.stderr
    assert any(l.startswith("rank 0 (node 0, local 0): exit 5: boom here")
               for l in r.stderr.splitlines()), r.stderr


def test_rendezvous_token_is_not_passed_to_workers(tmp_path):
    out = tmp_path / "env"
    r = run("--rdzv-token", "flag-secret", "--no-python", "/bin/sh", "-c", f"env > {out}",
            env=base_env(TRAINVISOR_RDZV_TOKEN="env-secret-123"))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "env-secret-123" not in text and "flag-secret" not in text
    assert "RANK=0" in text


# ---- Inputs that crash -------------------------------------------------------------------------

DEPTH = 100_000


@pytest.mark.parametrize("where", ["current_host", "instance_groups"])
def test_resource_config_nested_100000_levels_is_78(tmp_path, where):
    rc = tmp_path / "resourceconfig.json"
    nested = "[" * DEPTH + "]" * DEPTH
    rc.write_text('{"current_host": %s, "hosts": ["algo-1"]}' % nested if where == "current_host"
                  else '{"current_host": "algo-1", "hosts": ["algo-1"], "instance_groups": %s}'
                  % nested)
    for cmd in (["topology", "--platform", "sagemaker"], ["run", "--platform", "sagemaker",
                                                           "--preflight", "none"]):
        args = [*cmd, "--resource-config", rc] + (["--no-python", "/bin/true"] if cmd[0] == "run"
                                                  else [])
        r = trainvisor(*args)
        assert r.returncode == 78, (cmd, r.returncode, r.stderr[-2000:])  # before: 139
        assert f"file {rc}: is not valid JSON (nested deeper than 64 levels)" in r.stderr
        assert len(r.stderr) < 4000


def test_render_job_file_nested_100000_levels_is_78(tmp_path):
    job = tmp_path / "job.json"
    job.write_text('{"name": %s}' % ("{\"a\":" * DEPTH + "1" + "}" * DEPTH))
    r = trainvisor("render", "--config", job, "--target", "kubeflow")
    assert r.returncode == 78, (r.returncode, r.stderr[-2000:])
    assert "nested deeper than 64 levels" in r.stderr


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_tmpdir_that_is_not_a_directory_is_one_78_line_naming_it(tmp_path, kind):
    tmpdir = tmp_path / "tmpdir"
    if kind == "file":
        tmpdir.write_text("not a directory")
    r = run("--no-python", "/bin/true", env=base_env(TMPDIR=str(tmpdir)))
    assert r.returncode == 78, r.stderr  # before: 134, std::terminate
    why = "No such file or directory" if kind == "missing" else "Not a directory"
    assert (f'TMPDIR="{tmpdir}": cannot create a temporary directory there ({why})'
            in r.stderr), r.stderr
    assert "terminate called" not in r.stderr


@needs_root
def test_read_only_tmpdir_names_the_directory_and_the_reason(tmp_path):
    with tvtest.tmpfs(tmp_path / "ro", "ro,size=64k") as ro:
        r = run("--no-python", "/bin/true", env=base_env(TMPDIR=str(ro)))
    assert r.returncode == 78, r.stderr
    assert f'TMPDIR="{ro}": cannot create a temporary directory there (Read-only file system)' \
        in r.stderr


@needs_root
def test_summary_file_on_a_read_only_file_system_names_path_and_reason(tmp_path):
    with tvtest.tmpfs(tmp_path / "ro", "ro,size=64k") as ro:
        r = run("--summary-file", ro / "s.json", "--no-python", "/bin/true")
    assert r.returncode == 0, r.stderr
    assert f"--summary-file {ro}/s.json: not written (Read-only file system)" in r.stderr


# ---- Availability ------------------------------------------------------------------------------

def get(port, path, timeout=5):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
        out = b""
        while chunk := s.recv(4096):
            out += chunk
        return out.decode(errors="replace")


@contextlib.contextmanager
def serving(*extra, env=None):
    port = tvtest.free_port()
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "none", "--metrics-port",
                          str(port), *extra, "--no-python", "/bin/sleep", "30"],
                         env=env or base_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if "200" in get(port, "/healthz", timeout=1):
                    break
            time.sleep(0.05)
        yield port
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)


def test_healthz_answers_while_16_idle_connections_are_held_open():
    with serving("--metrics-address", "127.0.0.1") as port:
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
        try:
            time.sleep(0.2)
            answer = get(port, "/healthz", timeout=3)  # before: closed unanswered
            assert answer.startswith("HTTP/1.1 200"), answer
        finally:
            for s in idle:
                s.close()


def listening_addresses(port):
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        addr, p = local.split(":")
        if int(p, 16) == port and state == "0A":
            found.add(socket.inet_ntoa(bytes.fromhex(addr)[::-1]))
    return found


@pytest.mark.parametrize("kubernetes,expected", [(False, "127.0.0.1"), (True, "0.0.0.0")])
def test_default_metrics_address_is_loopback_outside_kubernetes(kubernetes, expected):
    env = base_env(KUBERNETES_SERVICE_HOST="10.0.0.1" if kubernetes else None)
    with serving(env=env) as port:
        assert listening_addresses(port) == {expected}  # before: 0.0.0.0 everywhere


# ---- Topology and rendezvous that mislead ------------------------------------------------------

@pytest.mark.parametrize("kind", ["directory", "loop"])
def test_resource_config_path_that_is_a_directory_or_a_link_loop_is_an_error(tmp_path, kind):
    rc = tmp_path / "resourceconfig.json"
    if kind == "directory":
        rc.mkdir()  # what `docker -v` of a missing host file makes
        why = "not a regular file (a directory)"
    else:
        rc.symlink_to(tmp_path / "other")
        (tmp_path / "other").symlink_to(rc)
        why = "Too many levels of symbolic links"
    for cmd in (["topology", "--json"], ["run", "--preflight", "none", "--no-python", "/bin/true"]):
        r = trainvisor(cmd[0], "--resource-config", rc, *cmd[1:])
        assert r.returncode == 78, (cmd, r.stdout, r.stderr)  # before: 0, one local node
        assert f"file {rc} cannot be read" in r.stderr and why in r.stderr, r.stderr


def node(rank, nnodes, ports, *extra, addr="127.0.0.1", cmd=("/bin/true",)):
    master_port, rdzv_port = ports
    return subprocess.Popen(
        [str(TRAINVISOR), "run", "--nnodes", str(nnodes), "--node-rank", str(rank),
         "--master-addr", addr, "--master-port", str(master_port), "--rdzv-port", str(rdzv_port),
         "--rdzv-timeout", "120", "--peer-timeout", "5", "--rdzv-token", "t0k3n",
         "--preflight", "none", "--max-restarts", "0", "--grace-period", "2", *map(str, extra),
         "--no-python", *cmd],
        env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_line(proc, text, timeout=60):
    """Reads `proc`'s output until a line holding `text` (the event); the timeout only guards
    against a hang (the process is killed then). The lines read are gone from proc.stdout.
    Blocking reads: select() on the pipe would miss lines already in Python's buffer."""
    guard = threading.Timer(timeout, proc.kill)
    guard.start()
    try:
        for line in iter(proc.stdout.readline, ""):
            if text in line:
                return line
    finally:
        guard.cancel()
    pytest.fail(f"it ended (exit {proc.wait()}) before logging {text!r} (guard {timeout} s)")


def ended(proc, timeout=45):
    """(exit code, output) of a node that must end by itself well before the rendezvous timeout."""
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


@contextlib.contextmanager
def nodes():
    procs = []
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()


@pytest.mark.parametrize("case", ["nnodes", "duplicate"])
def test_a_node_refused_at_the_rendezvous_is_told_why_and_exits_78_at_once(case):
    ports = free_ports(2)
    with nodes() as procs:
        procs.append(node(0, 3, ports))
        if case == "nnodes":
            refused = node(1, 4, ports)
            why = "refused node rank 1: it expects 4 nodes, this job has 3"
        else:
            procs.append(node(1, 3, ports))
            wait_for_line(procs[0], "rdzv: node 1 joined from")  # the first node 1 joins first
            refused = node(1, 3, ports)
            why = "refused node rank 1: node rank 1 is claimed by two nodes"
        procs.append(refused)
        code, out = ended(refused)  # before: "closed by peer" retries, 75 after --rdzv-timeout
        assert code == 78, out
        assert why in out, out


def test_nodes_with_different_nproc_per_node_are_refused_on_every_node_naming_each_count():
    ports = free_ports(2)
    with nodes() as procs:
        procs += [node(0, 2, ports, "--nproc-per-node", 1), node(1, 2, ports, "--nproc-per-node", 2)]
        for p in procs:
            code, out = ended(p)
            assert code == 78, out  # before: both 0, node 0 WORLD_SIZE=2, node 1 RANK=2,3
            assert "--nproc-per-node: node 0: 1, node 1: 2" in out, out


def test_bracketed_ipv6_master_address_is_parsed():
    r = trainvisor("topology", "--json", env=base_env(PET_NNODES="2", PET_NODE_RANK="1",
                                                      PET_MASTER_ADDR="[::1]",
                                                      PET_MASTER_PORT="29500"))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["master_addr"] == "::1"
    ports = free_ports(2)
    with nodes() as procs:
        procs += [node(0, 2, ports, addr="[::1]"), node(1, 2, ports, addr="[::1]")]
        for p in procs:
            code, out = ended(p)
            assert code == 0, out  # before: 75 at the rendezvous deadline
    bad = trainvisor("topology", env=base_env(PET_NNODES="2", PET_NODE_RANK="1",
                                              PET_MASTER_ADDR="[not-v6]", PET_MASTER_PORT="1"))
    assert bad.returncode == 78 and "PET_MASTER_ADDR" in bad.stderr, bad.stderr


free_ports = tvtest.free_ports


# ---- Signals and messages ----------------------------------------------------------------------

@needs_root
def test_sigterm_in_pid1s_first_moments_is_not_lost():
    lib = HELPERS / "libtv_early_sigterm.so"
    env = base_env(ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") +
                                 ":verify_asan_link_order=0").lstrip(":"))
    t0 = time.monotonic()
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "env", f"LD_PRELOAD={lib}",
                        str(TRAINVISOR), "run", "--preflight", "none", "--no-python", "/bin/sleep",
                        "20"], env=env, capture_output=True, text=True, timeout=TIMEOUT)
    if "unshare failed" in r.stderr:
        pytest.skip(f"no pid namespace here: {r.stderr.strip()}")
    assert r.returncode == 143, r.stderr  # before: the SIGTERM was dropped, the job ran: 0
    # Pending from the first moment, it is taken by Init's signal thread as soon as that runs:
    # during startup, or (on a loaded machine) by the supervisor, which forwards it.
    assert "SIGTERM" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 15


def wait_for_a_stopped_child(pid, timeout=60):
    """Returns once a child of `pid` (trainvisor's worker) is stopped (state T); the timeout only
    guards against a hang."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for t in os.listdir(f"/proc/{pid}/task"):
            for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split():
                try:
                    stat = Path(f"/proc/{c}/stat").read_text()
                except OSError:
                    continue
                if stat[stat.rfind(")") + 2] == "T":
                    return
        time.sleep(0.01)
    pytest.fail(f"no child of {pid} stopped")


def test_stopped_worker_gets_sigcont_with_the_sigterm():
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "none", "--grace-period", "40",
                          "--no-python", "/bin/sh", "-c", "echo stopping; kill -STOP $$; sleep 60"],
                         env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "[rank0]: stopping"
        wait_for_a_stopped_child(p.pid)  # the event: the worker is stopped, not a time
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=TIMEOUT)
        assert p.returncode == 143
        assert time.monotonic() - t0 < 20  # before: SIGKILL only after the 40 s grace period
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_missing_python_script_is_127_before_anything_starts(tmp_path):
    failure = tmp_path / "failure"
    r = run("--max-restarts", 3, "--failure-file", failure, tmp_path / "nope.py")
    assert r.returncode == 127, r.stderr  # before: python3 exit 2, restarted 3 times
    assert f"{tmp_path}/nope.py: no such file" in r.stderr
    assert "[rank0]" not in r.stderr + r.stdout


def test_missing_python_module_is_127_before_anything_starts(tmp_path):
    failure = tmp_path / "failure"
    r = run("--max-restarts", 3, "--failure-file", failure, "-m", "tv_no_such_module.train")
    # before: python's "No module named" exit 1 in every worker, restarted 3 times (no_exception)
    assert r.returncode == 127, r.stderr
    assert "tv_no_such_module.train: no such module" in r.stderr
    assert "[rank0]" not in r.stderr + r.stdout
    assert not failure.exists()
    # the same question of a module that is there (on the workers' PYTHONPATH): it runs
    (tmp_path / "tv_found_module.py").write_text("print('module ran')\n")
    r = run("-m", "tv_found_module", env=base_env(PYTHONPATH=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert "[rank0]: module ran" in r.stdout


def test_missing_submodule_gives_up_at_once_as_cannot_start():
    # run asks only about the top-level package (json is there); python's own "No module named
    # json.tv_nosuch" is then judged as an import error before any progress
    r = run("--max-restarts", 3, "--warm-standby", "off", "-m", "json.tv_nosuch")
    assert r.returncode == 1, r.stderr  # the worker's code, given up at once
    assert "rule cannot_start" in r.stderr, r.stderr  # before: rule no_exception, 3 restarts
    assert "generation 1" not in r.stderr, r.stderr


def memory_cgroup(tmp_name, limit):
    """A fresh child memory cgroup limited to `limit` bytes: (its cgroup.procs, cleanup) or None."""
    v2 = Path("/sys/fs/cgroup")
    controllers = v2 / "cgroup.controllers"
    if controllers.exists() and "memory" in controllers.read_text().split():
        d = v2 / tmp_name
        d.mkdir()
        (d / "memory.max").write_text(str(limit))
        with contextlib.suppress(OSError):
            (d / "memory.swap.max").write_text("0")
        return d
    v1 = Path("/sys/fs/cgroup/memory")
    if (v1 / "memory.limit_in_bytes").exists():
        d = v1 / tmp_name
        d.mkdir()
        (d / "memory.limit_in_bytes").write_text(str(limit))
        with contextlib.suppress(OSError):
            (d / "memory.memsw.limit_in_bytes").write_text(str(limit))
        return d
    return None


@needs_root
def test_oom_killed_worker_is_reported_as_out_of_memory(tmp_path):
    name = f"tv-oom-{uuid.uuid4().hex[:8]}"
    try:
        d = memory_cgroup(name, 384 << 20)  # above an ASan trainvisor's own
    except OSError as e:
        pytest.skip(f"cannot make a memory cgroup here: {e}")
    if d is None:
        pytest.skip("no memory cgroup controller (v1 or v2) here")
    failure = tmp_path / "failure"
    try:
        script = (f"echo $$ > {d}/cgroup.procs && exec {TRAINVISOR} run --preflight none "
                  f"--max-restarts 0 --failure-file {failure} --no-python {PYTHON} -c "
                  "\"x = b'x' * (2 << 30)\"")
        r = subprocess.run(["sh", "-c", script], env=base_env(), capture_output=True, text=True,
                           timeout=TIMEOUT)
    finally:
        with contextlib.suppress(OSError):
            d.rmdir()
    if r.returncode != 137:
        pytest.skip(f"the worker was not OOM-killed here (exit {r.returncode}): the limit is not "
                    f"enforced: {r.stderr[-500:]}")
    assert "out of memory (cgroup limit 384 MiB), signal 9 (SIGKILL)" in failure.read_text(), \
        r.stderr  # before: only "signal 9 (SIGKILL)"
