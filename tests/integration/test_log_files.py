"""The per-rank log files under --log-dir against the real binary (docs/supervision.md, "Output
and logs"): they keep the worker's bytes as written, whatever the console does with them.

A worker writes one line of 1 MiB and more with no newline: its stdout.log holds exactly those
bytes (before, a newline every 64 KiB), while the console gets it in 64 KiB pieces, each after
the first marked as continuing the line ("[rank0]+ ").
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import subprocess

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
