"""PID 1's memory when its stdout's reader stalls (issue #32, item 7; docs/supervision.md, "Output
and logs"): two workers write 100 MB each to stdout while nobody reads trainvisor's stdout pipe.
Lines are dropped and counted, and trainvisor's peak resident set (VmHWM of /proc/PID/status,
read while the reader is still stalled, and ru_maxrss from wait4 once it has exited) stays under
the 64 MiB output budget plus 32 MiB: trainvisor's own memory (about 10 MiB), a spare block per
sink, the line buffers of the workers' pipes and per-rank files.

A bound on memory, not on time: the workers wait for the test's go before they exit, so the
figures are read while the backlog is at its largest.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import subprocess
import time

import tvtest

BUDGET_MIB = 64
SLACK_MIB = 32

# 100 MB of 48-byte lines (short lines cost the most per byte when each is its own allocation),
# in 1 MiB writes; then done-RANK, and the worker waits for the test's go file.
WRITER = r'''
import os, sys, time
out, rank = sys.argv[1], os.environ["RANK"]
line = ("rank %s " % rank + "x" * 40)[:47] + "\n"
per_block = (1 << 20) // len(line)
block = (line * per_block).encode()
left, lines = 100 * 1000 * 1000, 0
while left > 0:
    sys.stdout.buffer.write(block)
    left -= len(block)
    lines += per_block
sys.stdout.flush()
with open(os.path.join(out, "done-" + rank), "w") as f:
    f.write(str(lines))
while not os.path.exists(os.path.join(out, "go")):
    time.sleep(0.05)
'''


def vm_hwm_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


def wait_for_files(paths, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        assert proc.poll() is None, f"trainvisor ended early: {proc.returncode}"
        assert time.monotonic() < deadline, f"never saw {paths}"
        time.sleep(0.05)


def test_a_stalled_stdout_reader_keeps_pid1_within_the_output_budget(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "writer.py").write_text(WRITER)
    err = open(tmp_path / "stderr.log", "wb")
    p = subprocess.Popen([str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "2",
                          "--warm-standby", "off", "--", str(tmp_path / "writer.py"), str(out)],
                         env=tvtest.base_env(), cwd=tmp_path, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=err)
    err.close()
    try:
        # Nobody reads p.stdout until both workers have written everything.
        wait_for_files([out / "done-0", out / "done-1"], p)
        hwm_stalled = vm_hwm_kib(p.pid)
        (out / "go").touch()
        data = p.stdout.read()  # now the reader catches up, to the end
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if p.returncode is None:
            p.kill()
            p.wait()
    log = (tmp_path / "stderr.log").read_text(errors="replace")
    assert p.returncode == 0, log[-4000:]
    limit_kib = (BUDGET_MIB + SLACK_MIB) * 1024
    assert hwm_stalled < limit_kib, (hwm_stalled, log[-2000:])
    # ru_maxrss of wait4 is the largest of trainvisor and the children it reaped (the workers).
    assert usage.ru_maxrss < limit_kib, (usage.ru_maxrss, log[-2000:])
    text = data.decode(errors="replace")
    dropped = sum(int(l.split()[1]) for l in text.splitlines()
                  if l.startswith("[trainvisor] ") and "worker output lines dropped" in l)
    forwarded = sum(1 for l in text.splitlines() if l.startswith("[rank"))
    assert dropped > 0, "nothing was dropped: the reader never stalled"
    # What reached stdout plus what was dropped is every line the workers wrote.
    written = sum(int((out / f"done-{r}").read_text()) for r in "01")
    assert forwarded + dropped == written, (forwarded, dropped, written)
    for line in text.splitlines()[:1000]:
        assert line.startswith(("[rank0]: rank 0 x", "[rank1]: rank 1 x", "[trainvisor] ")), line
