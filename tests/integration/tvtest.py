"""Helpers shared by the integration tests (imported as `tvtest`; pytest puts this folder on
sys.path). conftest.py holds the fixtures every test gets (`no_leftovers`).

Environment (set by ctest, tests/CMakeLists.txt): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR,
TV_PYTHON; each has a default for a run by hand from a build in build/. This file is the one place
a test takes them from: the binary is TRAINVISOR_BIN or build/trainvisor, never one found on PATH."""
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("TV_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def _binary():
    """TRAINVISOR_BIN, else build/trainvisor of the source tree; neither: the run stops here, with
    one message (a bare `trainvisor` would run whatever PATH holds, not the build under test)."""
    if os.environ.get("TRAINVISOR_BIN"):
        return Path(os.environ["TRAINVISOR_BIN"])
    built = SOURCE_DIR / "build" / "trainvisor"
    if not built.is_file():
        raise SystemExit(f"tvtest: TRAINVISOR_BIN is unset and {built} does not exist: set "
                         "TRAINVISOR_BIN to the trainvisor binary under test")
    return built


BIN = _binary()
HELPERS = Path(os.environ.get("TV_HELPERS", BIN.parent / "helpers"))
PYTHON = os.environ.get("TV_PYTHON", "/usr/bin/python3")

# Every process a test starts carries MARKER=SESSION... in its environment (SESSION, or SESSION
# followed by a test's own suffix), so conftest.py's `no_leftovers` can kill exactly this run's.
MARKER = "TV_TEST_SESSION"
SESSION = uuid.uuid4().hex


def free_ports(n):
    """n distinct free ports on 127.0.0.1 (all bound at once, so no two are the same)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port():
    return free_ports(1)[0]


def all_exit_0(procs, timeout):
    """Waits for every process (started with stdout=PIPE, text=True), kills what is left if one
    hangs, asserts each exited 0 and returns their outputs in order."""
    outs = []
    try:
        outs = [p.communicate(timeout=timeout)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    for node, (p, said) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"node {node} exit {p.returncode}:\n{said[-4000:]}"
    return outs


def processes_with_marker(marker, token, prefix=False):
    """Pids of processes whose environment holds marker=token (/proc/PID/environ); with
    `prefix`, marker=token... (a test's own suffix after the session)."""
    needle = f"{marker}={token}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            entries = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or not ours to read
        if any(e == needle or (prefix and e.startswith(needle)) for e in entries):
            pids.append(int(entry.name))
    return pids


def kill_marked(marker=MARKER, token=SESSION):
    """SIGKILLs every process carrying marker=token... (conftest.py, after each test)."""
    for pid in processes_with_marker(marker, token, prefix=True):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def base_env(**extra):
    """A small environment for trainvisor and its children: PATH, HOME, LANG, the sanitizers'
    options and TMPDIR when set, this run's marker, then `extra`."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           "LANG": "C.UTF-8", "PYTHON_EXEC": PYTHON, MARKER: SESSION}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TMPDIR"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update({k: str(v) for k, v in extra.items()})
    return env


def own_env(**extra):
    """base_env with a marker of the caller's own after the session's (SESSION + a fresh suffix):
    `no_leftovers` still kills what carries it, and the test can tell its processes from others'."""
    return base_env(**{MARKER: SESSION + uuid.uuid4().hex}, **extra)


def live_processes_with_marker(marker, token):
    """processes_with_marker without the zombies (dead, waiting for their parent's waitpid)."""
    live = []
    for pid in processes_with_marker(marker, token):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            live.append(pid)
    return live


def init_exists(pid):
    """Whether trainvisor's Init exists: the process is trainvisor, SIGTERM is blocked and Init's
    signal thread runs (the first thread main starts). The mask alone is not enough: unshare
    blocks SIGTERM around its fork, and its child unblocks it again before the exec."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        threads = len(list(Path(f"/proc/{pid}/task").iterdir()))
    except OSError:
        return False
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    blocked = int(fields["SigBlk"].strip(), 16) & (1 << (signal.SIGTERM - 1))
    return fields["Name"].strip() == "trainvisor" and bool(blocked) and threads >= 2


def left_behind(marker, token, timeout=10):
    """Live processes with marker=token once the SIGKILLs already sent have landed: polls until
    none is left or `timeout` (a guard against a hang, not a figure) has passed."""
    deadline = time.monotonic() + timeout
    while True:
        live = live_processes_with_marker(marker, token)
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.02)


class Output:
    """A process's stdout (its stderr merged into it, text mode), read line by line on a thread of
    its own: a test waits for the line that says something happened, not for a time."""

    def __init__(self, proc, timeout):
        self.proc, self.timeout = proc, timeout
        self.lines, self.ended, self.cond = [], False, threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.ended = True
            self.cond.notify_all()

    def text(self):
        with self.cond:
            return "".join(self.lines)

    def wait_for(self, pattern, count=1):
        """The matches of `pattern` once `count` lines matched; fails when the output ends first or
        `timeout` passes (a guard against a hang, not a figure)."""
        deadline = time.monotonic() + self.timeout
        with self.cond:
            while True:
                found = [m for m in (re.search(pattern, line) for line in self.lines) if m]
                if len(found) >= count:
                    return found
                assert not self.ended, "trainvisor ended early:\n" + self.text()
                assert time.monotonic() < deadline, f"no {pattern!r}:\n" + self.text()
                self.cond.wait(1)

    def wait_end(self):
        """Returns once every line is read (the process has closed its output)."""
        with self.cond:
            while not self.ended:
                self.cond.wait(1)


# What libinfinipath does to a process that loads it: SIGTERM/SIGINT handlers that exit(1), those
# signals unblocked; optionally it then hangs in dlopen (TV_FAKE_HANG seconds). TV_FAKE_LOG
# names a file each loading process appends its library name and command line to.
FAKE_LIB = r'''
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void die(int sig) { (void)sig; exit(1); }
__attribute__((constructor)) static void fake_init(void) {
  const char* log = getenv("TV_FAKE_LOG");
  if (log) {
    char cmd[4096] = {0};
    int fd = open("/proc/self/cmdline", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, cmd, sizeof(cmd) - 1) : 0;
    if (fd >= 0) close(fd);
    for (ssize_t i = 0; i < n; ++i) if (cmd[i] == 0) cmd[i] = ' ';
    FILE* f = fopen(log, "a");
    if (f) { fprintf(f, "%s %s\n", LIBNAME, cmd); fclose(f); }
  }
  signal(SIGTERM, die);
  signal(SIGINT, die);
  sigset_t s; sigemptyset(&s); sigaddset(&s, SIGTERM); sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &s, NULL);
  const char* hang = getenv("TV_FAKE_HANG");
  if (hang) sleep((unsigned)atoi(hang));
}
'''


def fake_vendor_libs(directory, names=("libcuda.so.1", "libfabric.so.1", "libnccl.so.2")):
    """Builds fake vendor libraries (FAKE_LIB) named `names` into `directory`: by default
    libcuda.so.1, libfabric.so.1 and libnccl.so.2."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the fake vendor libraries")
    src = Path(directory) / "fake.c"
    src.write_text(FAKE_LIB)
    for name in names:
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(Path(directory) / name),
                        f'-DLIBNAME="{name}"', str(src), "-lpthread"], check=True)
    return Path(directory)


def hermetic_env(marker, session, python, **extra):
    """The environment of a hostile-input test: a fixed PATH, the sanitizer and TMPDIR settings
    of the caller, and marker=session (kill_marked finds what carries it); a value None in
    `extra` removes that variable."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           "PYTHON_EXEC": python, marker: session, "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": ""}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TMPDIR", "LD_LIBRARY_PATH"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


@contextlib.contextmanager
def tmpfs(path, options):
    """A small tmpfs mounted at `path` for the test (root only; skipped where mount is refused)."""
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def helper(name, *args):
    """The argv of a tests/helpers/ program."""
    return [str(HELPERS / name), *map(str, args)]


class Hermetic:
    """trainvisor run in hermetic_env under a marker of its own (the hostile-input tests): every
    process it starts carries marker=session, so kill_leftovers finds exactly those."""

    def __init__(self, marker, timeout=60):
        self.marker, self.session, self.timeout = marker, uuid.uuid4().hex, timeout

    def env(self, **extra):
        return hermetic_env(self.marker, self.session, PYTHON, **extra)

    def trainvisor(self, *args, env=None, timeout=None):
        return subprocess.run([str(BIN), *map(str, args)], env=env or self.env(),
                              capture_output=True, text=True, timeout=timeout or self.timeout)

    def run(self, *args, env=None, timeout=None):
        return self.trainvisor("run", "--preflight", "none", *args, env=env, timeout=timeout)

    def kill_leftovers(self):
        kill_marked(self.marker, self.session)



# The one form of every error trainvisor prints, whichever command (docs/supervision.md, "Output
# and logs"): a text log line at level E.
ERROR_LINE = re.compile(r"^\[trainvisor \d\d:\d\d:\d\d\.\d{3} E\] (.*)$")


def error_messages(stderr):
    """The messages of trainvisor's error lines in `stderr`, in order."""
    return [m.group(1) for m in map(ERROR_LINE.match, stderr.splitlines()) if m]
