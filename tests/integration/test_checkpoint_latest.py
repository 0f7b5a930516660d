"""`trainvisor checkpoint latest|watch|link-logs` against real trees on disk (real torch.save
files, DCP directories written the way PyTorch's FileSystemWriter does, writers killed mid-write,
concurrent writers, deep trees, unreadable directories, symlink loops)."""
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import pytest

import tvtest

BIN = str(tvtest.BIN)
TORCH_PY = tvtest.PYTHON
RUN1 = "logs/skrl/Isaac-Ant-v0/2025-01-02_10-00-00_ppo_torch"
RUN2 = "logs/skrl/Isaac-Ant-v0/2025-01-02_12-30-00_ppo_torch"

# Writes torch.save() files; "partial" saves to memory, writes half the bytes and waits to be
# killed, so the file on disk is exactly what a crash mid-save leaves.
WRITER = textwrap.dedent("""
    import io, os, sys, time, torch
    mode, path = sys.argv[1], sys.argv[2]
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    os.makedirs(os.path.dirname(path), exist_ok=True)
    state = {"policy": torch.randn(size, 16), "timestep": 1}
    if mode == "save":
        torch.save(state, path)
    elif mode == "partial":
        buf = io.BytesIO(); torch.save(state, buf); data = buf.getvalue()
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2]); f.flush()
            print("half", flush=True)
            time.sleep(600)
    elif mode == "slow":  # torch.save to the final path in small pieces, like a slow disk
        buf = io.BytesIO(); torch.save(state, buf); data = buf.getvalue()
        with open(path, "wb") as f:
            for i in range(0, len(data), 65536):
                f.write(data[i:i + 65536]); f.flush(); time.sleep(0.01)
""")


def tv(*args, timeout=120):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def writer(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    return lambda *a: [TORCH_PY, str(script), *a]


def save(writer, path, size=1000):
    subprocess.run(writer("save", str(path), str(size)), check=True, timeout=300)


def age(path, seconds=3600):
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_newest_real_torch_file_and_json(tmp_path, writer):
    d = tmp_path / RUN1 / "checkpoints"
    for step in (1000, 2000, 10000):
        save(writer, d / f"agent_{step}.pt")
    save(writer, d / "best_agent.pt")
    r = tv("checkpoint", "latest", "--dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(d / "agent_10000.pt")
    j = json.loads(tv("checkpoint", "latest", "--dir", str(tmp_path), "--json").stdout)
    assert j["path"] == str(d / "agent_10000.pt") and j["format"] == "skrl" and j["step"] == 10000
    assert j["bytes"] == os.path.getsize(d / "agent_10000.pt")
    best = tv("checkpoint", "latest", "--dir", str(tmp_path), "--resume", "best")
    assert best.stdout.strip() == str(d / "best_agent.pt")


def test_writer_killed_mid_save_is_skipped(tmp_path, writer):
    d = tmp_path / RUN1 / "checkpoints"
    save(writer, d / "agent_1000.pt")
    p = subprocess.Popen(writer("partial", str(d / "agent_2000.pt"), "200000"),
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "half"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(d / "agent_2000.pt")
    r = tv("checkpoint", "latest", "--dir", str(tmp_path), "--settle", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(d / "agent_1000.pt")
    assert "agent_2000.pt" in r.stderr and "skipping" in r.stderr  # one log line for the skip
    assert r.stderr.count("agent_2000.pt") == 1


def test_resumed_isaac_lab_layout_orders_runs_first(tmp_path, writer):
    save(writer, tmp_path / RUN1 / "checkpoints" / "agent_48000.pt")
    save(writer, tmp_path / RUN2 / "checkpoints" / "agent_800.pt")
    r = tv("checkpoint", "latest", "--dir", str(tmp_path / "logs"), "--format", "skrl")
    assert r.stdout.strip() == str(tmp_path / RUN2 / "checkpoints" / "agent_800.pt")


def test_concurrent_writers_never_yield_a_partial_file(tmp_path, writer):
    d = tmp_path / RUN1 / "checkpoints"
    save(writer, d / "agent_0.pt")
    writers = [subprocess.Popen(writer("slow", str(d / f"agent_{w * 1000 + i}.pt"), "60000"))
               for w in (1, 2, 3) for i in (1,)]
    try:
        seen = set()
        for _ in range(8):
            r = tv("checkpoint", "latest", "--dir", str(tmp_path))
            assert r.returncode == 0, r.stderr
            path = r.stdout.strip()
            assert zipfile.ZipFile(path).testzip() is None  # complete, every member readable
            seen.add(path)
    finally:
        for w in writers:
            w.wait(timeout=300)
    r = tv("checkpoint", "latest", "--dir", str(tmp_path))
    assert r.stdout.strip() == str(d / "agent_3001.pt")


REAL_PT = os.path.join(os.path.dirname(__file__), "..", "data", "checkpoint", "agent_1000.pt")


def is_ext4(path):
    return subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True,
                          text=True).stdout.strip() in ("ext2/ext3", "ext4")


def linked_run(base, n):
    """base/tree/RUN1/checkpoints with agent_0.pt .. agent_<n-1>.pt, hard links to one real
    torch.save file (base/src.pt, an hour old: settled); ext4 allows 65,000 links. (src, dir)."""
    src = base / "src.pt"
    shutil.copyfile(REAL_PT, src)
    age(src)
    d = base / "tree" / RUN1 / "checkpoints"
    d.mkdir(parents=True)
    for i in range(n):
        os.link(src, d / f"agent_{i}.pt")
    return src, d


def traced(pid, tracer, timeout=60):
    """Returns once strace (`tracer`) is attached to every thread of `pid` (/proc/PID/task/*/status:
    TracerPid), so each syscall from here on is in its trace; the timeout guards against a hang."""
    deadline = time.monotonic() + timeout
    while True:
        tracers = set()
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                status = open(f"/proc/{pid}/task/{task}/status").read()
            except OSError:
                continue  # a thread that ended meanwhile
            tracers.add(int(status.split("TracerPid:")[1].split()[0]))
        if tracers == {tracer.pid}:
            return
        assert tracer.poll() is None, f"strace exited {tracer.returncode} before it attached"
        assert time.monotonic() < deadline, f"strace never attached to every thread of {pid}"
        time.sleep(0.01)


def test_a_large_directory_listed_in_parallel_slices_misses_no_name(tmp_path):
    """30,000 checkpoints in one directory: on ext4 trainvisor lists it in parallel slices of
    its hash positions (checkpoint/split_listing.h), one per CPU up to 8. A newest checkpoint
    placed under 48 different names (so in every slice, whatever the hash seed) is found every
    time; strace shows the slices' lseeks."""
    src, d = linked_run(tmp_path, 30000)
    root = str(tmp_path / "tree")
    for k, i in enumerate(range(7, 30000, 30000 // 48)):
        newest = d / f"agent_{10**9 + k}.pt"
        os.rename(d / f"agent_{i}.pt", newest)
        r = tv("checkpoint", "latest", "--dir", root)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == str(newest), (k, r.stderr)
    if not shutil.which("strace") or not is_ext4(d) or len(os.sched_getaffinity(0)) < 2:
        return
    trace = tmp_path / "trace"
    # LeakSanitizer cannot run under ptrace (the ASan build of the CI).
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=lseek", "-o", str(trace), BIN,
                        "checkpoint", "latest", "--dir", root], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    seeks = [line for line in trace.read_text().splitlines() if "SEEK_SET" in line]
    assert len(seeks) >= 1, trace.read_text()
    # The watcher rescans beside training: one pass, no slices, whatever the directory's size.
    # strace attaches once a new checkpoint was reported (its first scan is over: under strace,
    # stat'ing 30,000 checkpoints takes a minute) and sees the rescan that finds the next one.
    watch = subprocess.Popen([BIN, "checkpoint", "watch", "--dir", root, "--polling",
                              "--poll-interval", "0.2"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    watch_trace = tmp_path / "watch-trace"
    tracer = None
    try:
        time.sleep(1)
        later = d / f"agent_{2 * 10**9}.pt"
        os.link(src, later)
        ready, _, _ = select.select([watch.stdout], [], [], 120)
        assert ready, "the watcher reported nothing in 120 s"
        assert str(later) in watch.stdout.readline()
        tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=lseek,getdents64", "-p",
                                   str(watch.pid), "-o", str(watch_trace)])
        traced(watch.pid, tracer)  # a steady scan lists nothing, so make the next one walk
        os.link(src, d / f"agent_{3 * 10**9}.pt")
        ready, _, _ = select.select([watch.stdout], [], [], 120)
        assert ready, "the watcher reported nothing in 120 s"
        assert f"agent_{3 * 10**9}.pt" in watch.stdout.readline()
    finally:
        if tracer:
            tracer.send_signal(signal.SIGINT)  # detaches
            tracer.wait(timeout=30)
        watch.send_signal(signal.SIGTERM)
        watch.communicate(timeout=30)
    text = watch_trace.read_text()
    assert "getdents64" in text and "SEEK_SET" not in text, text[-2000:]


def pids_cgroup(name):
    """A pids cgroup of our own (v1 or v2), or None; the caller removes it."""
    v1 = "/sys/fs/cgroup/pids"
    if os.path.isdir(v1) and os.path.exists(os.path.join(v1, "cgroup.procs")):
        path = os.path.join(v1, name)
    elif os.path.exists("/sys/fs/cgroup/cgroup.controllers") and "pids" in open(
            "/sys/fs/cgroup/cgroup.subtree_control").read():
        path = os.path.join("/sys/fs/cgroup", name)
    else:
        return None
    os.makedirs(path, exist_ok=True)
    return path


def tv_in_cgroup(cgroup, limit, *args):
    with open(os.path.join(cgroup, "pids.max"), "w") as f:
        f.write(str(limit))
    return subprocess.run(["bash", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, BIN,
                           *args], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a pids cgroup")
def test_under_the_lowest_pids_limit_the_answer_is_the_same_and_below_it_exit_71(tmp_path):
    """A container's pids.max counts threads. At the lowest limit trainvisor itself runs under,
    the lookup over a large directory gives the same answer (on a machine with more CPUs than
    trainvisor has threads of its own, its slice threads cannot all start there and are read by
    the calling thread; SplitListing.SlicesWhoseThreadsCannotStartAreReadByTheCaller covers that
    on any machine). One below that: one line naming pids.max and exit 71, not
    std::terminate."""
    cgroup = pids_cgroup(f"tv-test-{os.getpid()}")
    if cgroup is None:
        pytest.skip("no pids cgroup controller")
    try:
        empty = tmp_path / "empty"
        empty.mkdir()
        lowest = next(n for n in range(1, 32)
                      if tv_in_cgroup(cgroup, n, "checkpoint", "latest", "--dir",
                                      str(empty)).returncode == 1)
        _, d = linked_run(tmp_path, 30000)
        r = tv_in_cgroup(cgroup, lowest, "checkpoint", "latest", "--dir", str(tmp_path / "tree"))
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == str(d / "agent_29999.pt")
        if lowest > 1:
            r = tv_in_cgroup(cgroup, lowest - 1, "checkpoint", "latest", "--dir", str(empty))
            assert r.returncode == 71, r.stderr
            assert "pids.max" in r.stderr and "terminate" not in r.stderr
    finally:
        os.rmdir(cgroup)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mke2fs"), reason="needs root and mke2fs")
def test_an_unhashed_ext4_directory_is_listed_whole_when_its_slices_cannot_seek(tmp_path):
    """ext4 without dir_index (an old file system, or a directory whose hash index was dropped):
    positions are byte offsets and an lseek to a hash position fails with EINVAL. The directory
    is then listed in one pass, every name once."""
    image, mnt = tmp_path / "linear.img", tmp_path / "mnt"
    mnt.mkdir()
    with open(image, "wb") as f:
        f.truncate(128 << 20)
    subprocess.run(["mke2fs", "-q", "-F", "-t", "ext4", "-N", "40000", "-O", "^dir_index",
                    str(image)], check=True)
    mounted = subprocess.run(["mount", "-o", "loop", str(image), str(mnt)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:  # a machine without loop devices (some containers)
        pytest.skip(f"cannot loop-mount an ext4 image: {mounted.stderr.strip()}")
    try:
        _, d = linked_run(mnt, 36000)
        assert os.stat(d).st_size >= 2 * 256 * 1024  # large enough to be split on 2 CPUs
        r = tv("checkpoint", "latest", "--dir", str(mnt / "tree"))
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == str(d / "agent_35999.pt")
        assert "skipping" not in r.stderr
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


REAL_DCP = os.path.join(os.path.dirname(__file__), "..", "data", "checkpoint", "dcp_real",
                        "two_ranks")


def write_dcp(d, shards=2, metadata=True, tmp_only=False):
    """The file sequence of torch.distributed.checkpoint.FileSystemWriter, with the bytes of a
    real 2-rank torch 2.11 save (tests/data/checkpoint/dcp_real)."""
    d.mkdir(parents=True, exist_ok=True)
    for rank in range(shards):
        shutil.copyfile(os.path.join(REAL_DCP, f"__{rank}_0.distcp"), d / f"__{rank}_0.distcp")
    if metadata or tmp_only:
        shutil.copyfile(os.path.join(REAL_DCP, ".metadata"), d / ".metadata.tmp")
        if not tmp_only:
            os.rename(d / ".metadata.tmp", d / ".metadata")


def test_dcp_in_each_state(tmp_path):
    c = tmp_path / "checkpoints"
    write_dcp(c / "iter_000001000")
    latest = lambda: tv("checkpoint", "latest", "--dir", str(tmp_path), "--format", "dcp")
    assert latest().stdout.strip() == str(c / "iter_000001000")
    write_dcp(c / "iter_000002000", metadata=False)           # shards only
    assert latest().stdout.strip() == str(c / "iter_000001000")
    write_dcp(c / "iter_000002000", tmp_only=True)            # .metadata.tmp not renamed yet
    assert latest().stdout.strip() == str(c / "iter_000001000")
    os.rename(c / "iter_000002000/.metadata.tmp", c / "iter_000002000/.metadata")
    assert latest().stdout.strip() == str(c / "iter_000002000")
    # Saving again into the same dir: the shard is being rewritten, shorter than .metadata says.
    (c / "iter_000002000/__0_0.distcp").write_bytes(b"new")
    assert latest().stdout.strip() == str(c / "iter_000001000")
    (c / "latest_checkpoint.txt").write_text("iter_000002000\n")  # a pointer changes nothing
    assert latest().stdout.strip() == str(c / "iter_000001000")
    j = json.loads(tv("checkpoint", "latest", "--dir", str(tmp_path), "--json").stdout)
    assert j["format"] == "dcp" and j["step"] == 1000


def test_glob_needs_its_marker(tmp_path):
    (tmp_path / "step_100.ckpt").write_bytes(b"x")
    (tmp_path / "step_200.ckpt").write_bytes(b"x")
    fmt = "glob:step_*.ckpt"
    assert tv("checkpoint", "latest", "--dir", str(tmp_path), "--format", fmt).returncode == 1
    (tmp_path / "step_100.ckpt.done").touch()
    assert tv("checkpoint", "latest", "--dir", str(tmp_path), "--format", fmt).stdout.strip() == \
        str(tmp_path / "step_100.ckpt")


def test_very_deep_tree(tmp_path, writer):
    d = tmp_path
    for _ in range(300):
        d = d / "deep"
    save(writer, d / "agent_5.pt", 10)
    r = tv("checkpoint", "latest", "--dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(d / "agent_5.pt")


def test_symlink_loops_end(tmp_path, writer):
    d = tmp_path / RUN1 / "checkpoints"
    save(writer, d / "agent_7.pt", 10)
    os.symlink(tmp_path, d / "loop")
    os.symlink(tmp_path / "self", tmp_path / "self")
    os.symlink("/nonexistent", tmp_path / "dangling")
    r = tv("checkpoint", "latest", "--dir", str(tmp_path), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(d / "agent_7.pt")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to drop to an unprivileged user (root reads any directory)")
def test_unreadable_subdirectories_are_skipped(writer):
    import pathlib
    import tempfile
    tmp_path = pathlib.Path(tempfile.mkdtemp(prefix="tv-unreadable-", dir="/tmp"))
    base = tmp_path / "tree"
    save(writer, base / RUN1 / "checkpoints" / "agent_1.pt", 10)
    save(writer, base / RUN2 / "checkpoints" / "agent_9.pt", 10)
    locked = base / RUN2
    for root, dirs, files in os.walk(tmp_path):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    os.chmod(locked, 0o000)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BIN,
                        "checkpoint", "latest", "--dir", str(base)],
                       capture_output=True, text=True, timeout=60)
    os.chmod(locked, 0o755)
    shutil.rmtree(tmp_path)
    if "Permission denied" in r.stderr and "skipping" not in r.stderr:
        pytest.skip("the binary itself is not reachable as an unprivileged user: " + r.stderr)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(base / RUN1 / "checkpoints" / "agent_1.pt")
    assert "Permission denied" in r.stderr


def test_exit_codes(tmp_path):
    r = tv("checkpoint", "latest", "--dir", str(tmp_path / "missing"))
    assert r.returncode == 1 and r.stdout == "" and "no checkpoint yet under" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    # Candidates, none complete: a different line.
    (tmp_path / "nn").mkdir()
    (tmp_path / "model_100.pt").write_bytes(b"PK cut off")
    r = tv("checkpoint", "latest", "--dir", str(tmp_path), "--settle", "0")
    assert r.returncode == 1 and r.stdout == ""
    assert tvtest.error_messages(r.stderr)[0].startswith("no complete checkpoint under"), r.stderr
    r = tv("checkpoint", "latest", "--dir", str(tmp_path), "--format", "torch")
    # the option this command has, once (before: --checkpoint-format, run's name)
    said = tvtest.error_messages(r.stderr)
    assert r.returncode == 78 and len(said) == 1, r.stderr
    assert said[0].startswith("--format: 'torch': expected one of auto, skrl, "), r.stderr
    assert "--checkpoint-format" not in r.stderr
    assert tv("checkpoint", "latest").returncode == 64
    assert tv("checkpoint", "newest", "--dir", str(tmp_path)).returncode == 64
    assert tv("checkpoint", "latest", "--dir", str(tmp_path), "--bogus").returncode == 64


def test_link_logs_is_safe_to_repeat(tmp_path):
    ckpt = tmp_path / "opt_ml_checkpoints"
    logs = tmp_path / "workspace" / "logs"
    (logs / "skrl").mkdir(parents=True)                # the framework already wrote something
    (logs / "skrl" / "events.out").write_text("e")
    for _ in range(2):                                  # a restart, or another node, repeats it
        r = tv("checkpoint", "link-logs", "--dir", str(ckpt), str(logs))
        assert r.returncode == 0, r.stderr
        assert os.path.islink(logs) and os.path.samefile(logs, ckpt / "logs")
        assert (ckpt / "logs" / "skrl" / "events.out").read_text() == "e"
    (tmp_path / "file").write_text("x")
    r = tv("checkpoint", "link-logs", "--dir", str(ckpt), str(tmp_path / "file"))
    assert r.returncode == 78 and "--link-logs" in r.stderr


def watch(tmp_path, *extra, complete=None):
    """`checkpoint watch` started and its first scan over: it says so on stderr, with how many
    complete checkpoints were there already (`complete`: the number expected)."""
    p = subprocess.Popen([BIN, "checkpoint", "watch", "--dir", str(tmp_path),
                          "--poll-interval", "0.2", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    assert f"checkpoint watch: first scan of {tmp_path} done in " in line, line
    if complete is not None:
        assert f" {complete} complete checkpoint(s) there already (not reported)" in line, line
    return p


def test_a_watch_of_a_directory_not_there_yet_says_it_waits_and_reports_its_saves(tmp_path, writer):
    """A sidecar often starts before the trainer has made its checkpoint directory: the watch
    says it waits for it (not "0 complete checkpoints"), then reports the first save."""
    d = tmp_path / "later"
    p = subprocess.Popen([BIN, "checkpoint", "watch", "--dir", str(d), "--poll-interval", "0.2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        assert f"checkpoint watch: {d} does not exist yet: watching for it to appear" in line, line
        save(writer, d / RUN1 / "checkpoints" / "agent_7.pt", 10)
        first = json.loads(p.stdout.readline())
        assert first["path"].endswith("agent_7.pt") and first["step"] == 7, first
    finally:
        p.terminate()
        assert p.wait(timeout=10) == 0


@pytest.mark.parametrize("mode", [[], ["--polling"]], ids=["inotify", "polling"])
def test_watcher_reports_each_new_complete_checkpoint(tmp_path, writer, mode):
    d = tmp_path / RUN1 / "checkpoints"
    save(writer, d / "agent_1.pt", 10)                  # there before: not reported
    p = watch(tmp_path, *mode, complete=1)
    try:
        part = subprocess.Popen(writer("partial", str(d / "agent_3.pt"), "100000"),
                                stdout=subprocess.PIPE, text=True)
        assert part.stdout.readline().strip() == "half"
        part.kill()
        part.wait()
        save(writer, d / "agent_2.pt", 10)
        first = json.loads(p.stdout.readline())
        save(writer, d / "agent_4.pt", 10)
        second = json.loads(p.stdout.readline())
    finally:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err  # ended by the SIGTERM above: a watch's clean stop
    assert first["path"] == str(d / "agent_2.pt") and first["since_previous_seconds"] == -1
    assert second["path"] == str(d / "agent_4.pt") and second["since_previous_seconds"] >= 0
    assert second["bytes"] == os.path.getsize(d / "agent_4.pt")
    assert "agent_3.pt" not in out                       # the cut-off file is never reported
    assert "agent_1.pt" not in out
