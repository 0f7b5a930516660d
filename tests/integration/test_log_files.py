"""The per-rank log files under --log-dir against the real binary (docs/supervision.md, "Output
and logs"): they keep the worker's bytes as written, whatever the console does with them.

A worker writes one line of 1 MiB and more with no newline: its stdout.log holds exactly those
bytes (before, a newline every 64 KiB), while the console gets it in 64 KiB pieces, each after
the first marked as continuing the line ("[rank0]+ ").

A log disk that stalls (each write(2) to stdout.log held 2 s by strace's delay injection) holds up
neither the worker nor /healthz: the files are written by a thread of their own within a bounded
budget, the rest dropped and counted.
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import tvtest

SPLIT = 64 * 1024
LONG_LINE = r'''
import sys
size = int(sys.argv[1])
sys.stdout.buffer.write((b"0123456789abcdef" * (size // 16 + 1))[:size])
sys.stdout.flush()
'''


def test_a_line_longer_than_the_split_size_is_kept_whole_in_its_log_file(tmp_path):
    size = 16 * SPLIT + 123
    script = tmp_path / "worker.py"
    script.write_text(LONG_LINE)
    logs = tmp_path / "logs"
    argv = [str(tvtest.BIN), "run", "--nproc-per-node", "1", "--preflight", "none",
            "--log-dir", str(logs), "--failure-file", str(tmp_path / "failure"),
            "--termination-log", str(tmp_path / "termlog"), "--", tvtest.PYTHON, str(script),
            str(size)]
    r = subprocess.run(argv, env=tvtest.base_env(TMPDIR=tmp_path), cwd=tmp_path,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    written = (b"0123456789abcdef" * (size // 16 + 1))[:size]
    kept = (logs / "attempt_0" / "rank_0" / "stdout.log").read_bytes()
    assert kept.count(b"\n") == 0 and len(kept) == size, (len(kept), kept.count(b"\n"))
    assert kept == written
    pieces = [p for p in r.stdout.split(b"\n") if p]
    assert [p[:9] for p in pieces] == [b"[rank0]: "] + [b"[rank0]+ "] * 16, [p[:9] for p in pieces]
    assert b"".join(p[9:] for p in pieces) == written
    assert all(len(p) == 9 + SPLIT for p in pieces[:-1])


# A worker that writes `size` bytes of 1 KiB lines to stdout, then asks trainvisor's /healthz
# itself, and says how long each took (on stderr, whose log file is not slowed).
SLOW_DISK_WORKER = r'''
import sys, time, urllib.request
port, size = int(sys.argv[1]), int(sys.argv[2])
line = b"x" * 1023 + b"\n"
start = time.monotonic()
for _ in range(size // len(line)):
    sys.stdout.buffer.write(line)
sys.stdout.flush()
wrote = time.monotonic() - start
start = time.monotonic()
answer = urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=600).read()
sys.stderr.write("wrote %d bytes in %.2f s; /healthz answered %r in %.3f s\n"
                 % (size, wrote, answer.strip(), time.monotonic() - start))
'''
DROPPED = re.compile(r"log file (\S+): (\d+) bytes of the worker's output \((\d+) lines\) dropped")


def slow_log_disk_run(tmp_path, delay_us, size=48 << 20):
    """`run` under strace, each write(2) to rank 0's stdout.log delayed `delay_us` (strace -P: only
    the calls on that path); trainvisor's stdout (the forwarded lines) to /dev/null."""
    script = tmp_path / "worker.py"
    script.write_text(SLOW_DISK_WORKER)
    logs = tmp_path / "logs"
    port = tvtest.free_port()
    strace = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=write",
              "-e", f"inject=write:delay_enter={delay_us}",
              "-P", str(logs / "attempt_0" / "rank_0" / "stdout.log")]
    argv = [*strace, str(tvtest.BIN), "run", "--nproc-per-node", "1", "--preflight", "none",
            "--log-dir", str(logs), "--metrics-port", str(port),
            "--failure-file", str(tmp_path / "failure"), "--termination-log",
            str(tmp_path / "termlog"), "--", tvtest.PYTHON, str(script), str(port), str(size)]
    return subprocess.run(argv, env=tvtest.base_env(TMPDIR=tmp_path), cwd=tmp_path,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, errors="replace", timeout=300)


def test_a_stalled_log_disk_neither_blocks_the_worker_nor_the_event_loop(tmp_path):
    # Each write to stdout.log takes 2 s: before, the event loop made them itself, 64 KiB at a
    # time (48 MiB: 25 minutes, the worker blocked on its pipe and /healthz unanswered all along).
    # Now the writer thread waits for the disk; the worker's 48 MiB go beyond the 32 MiB budget,
    # the rest is dropped and counted, the worker and /healthz never wait for the disk.
    if not shutil.which("strace"):
        pytest.skip("skipped: no strace")
    r = slow_log_disk_run(tmp_path, 2_000_000)
    assert r.returncode == 0, r.stderr[-3000:]
    assert re.search(r"/healthz answered b'ok' in", r.stderr), r.stderr[-3000:]
    # One budget and one thread for every file: stderr.log's line may wait behind stdout.log's.
    dropped = {Path(p).name: (int(n), int(lines)) for p, n, lines in DROPPED.findall(r.stderr)}
    assert "stdout.log" in dropped, r.stderr[-3000:]
    assert dropped["stdout.log"][0] > 0 and dropped["stdout.log"][1] > 0, dropped
    assert "the log disk is slower than the worker's output" in r.stderr
