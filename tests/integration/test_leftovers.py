"""Only what a worker started is a worker's leftover (launcher/workers/descendants.h), with the
real binary: a sidecar an entrypoint started before `exec trainvisor run` lives through a restart
and the run's end; the GPU health watch (on the fake NVML, tests/helpers/fake_nvml/) is one
process for the whole run, never "left behind"; a grandchild a worker detached (setsid, its
parent gone: tests/helpers/tv_grandchild.cc) is still killed at the generation's end.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import re
import subprocess
from pathlib import Path

import tvtest

BIN = str(tvtest.BIN)
DEADLINE_S = 120  # guards against a hang only


def alive(pid):
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def test_a_sidecar_survives_restarts_and_a_workers_detached_grandchild_does_not(tmp_path):
    # Generation 0 detaches a grandchild (its parent exits) and fails; generation 1 records
    # whether that grandchild still runs, then succeeds. The sidecars hold no pipe of the test.
    worker = tmp_path / "w.sh"
    worker.write_text(
        'if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then\n'
        f'  {tvtest.HELPERS / "tv_grandchild"} {tmp_path}/gc.pid exit\n'
        "  exit 3\n"
        "fi\n"
        # Running or not, from its state (`kill -0` also reaches a zombie Init has yet to reap:
        # killed, it runs no more; descendants.h counts it dead).
        f'st=$(sed "s/.*) //" /proc/$(cat {tmp_path}/gc.pid)/stat 2>/dev/null | cut -c1)\n'
        f'case "$st" in ""|Z|X) echo gone ;; *) echo "alive $st" ;; esac > {tmp_path}/gc.state\n')
    entry = (f"sleep 600 >/dev/null 2>&1 & echo $! > {tmp_path}/plain.pid\n"
             f"setsid sleep 600 >/dev/null 2>&1 & echo $! > {tmp_path}/setsid.pid\n"
             f"exec {BIN} run --preflight none --gpu-health off --warm-standby off "
             "--nproc-per-node 1 --max-restarts 1 --no-python -- /bin/sh " + str(worker))
    p = subprocess.run(["/bin/sh", "-c", entry], env=tvtest.base_env(), capture_output=True,
                       text=True, timeout=DEADLINE_S)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "gc.state").read_text().strip() == "gone", p.stderr
    assert p.stderr.count("killed 1 process(es) the workers left behind") == 1, p.stderr
    for name in ("plain.pid", "setsid.pid"):
        sidecar = int((tmp_path / name).read_text())
        assert alive(sidecar), (name, p.stderr)


def watch_children(tmp_path):
    """A worker script that writes the pids of trainvisor's `__query gpu-watch` children."""
    return ('for t in /proc/$PPID/task/*; do for c in $(cat $t/children); do\n'
            '  tr "\\0" " " < /proc/$c/cmdline | grep -q "__query gpu-watch" && echo $c\n'
            f'done; done >> {tmp_path}/watch.$TORCHELASTIC_RESTART_COUNT\n')


def test_the_gpu_watch_is_one_process_for_the_whole_run_and_never_a_leftover(tmp_path):
    # In each generation local rank 0 waits until it sees the watch among trainvisor's children,
    # records its pid, waits for the watch's first counter read, and fails in the first two: two
    # restarts. Rank 1 waits in a sleep that
    # leaves nothing behind (a shell killed mid-fork would leave a real leftover).
    worker = tmp_path / "w.sh"
    worker.write_text(
        'if [ "$LOCAL_RANK" != 0 ]; then\n'
        '  [ "$TORCHELASTIC_RESTART_COUNT" -ge 2 ] && exit 0\n'
        "  exec sleep 600\n"
        "fi\n"
        f'while [ ! -s {tmp_path}/watch.$TORCHELASTIC_RESTART_COUNT ]; do\n'
        + watch_children(tmp_path) + "done\n"
        # The watch prints "watching" before its first counter read ("poll" in the fake's log):
        # once that is logged the line is in trainvisor's pipe, so a run that ends fast under
        # load (the watch runs at nice 19) still logs it.
        f"until grep -q '^poll' {tmp_path}/nvml.log 2>/dev/null; do sleep 0.01; done\n"
        '[ "$TORCHELASTIC_RESTART_COUNT" -ge 2 ] || exit 3\n')
    env = tvtest.base_env(LD_LIBRARY_PATH=tvtest.HELPERS / "fake_nvml",
                          TV_FAKE_NVML_LOG=tmp_path / "nvml.log",
                          PYTHON_EXEC="/nonexistent/python3")
    p = subprocess.run([BIN, "run", "--preflight", "none", "--gpu-health", "on",
                        "--gpu-health-interval", "0.1", "--warm-standby", "off",
                        "--nproc-per-node", "2", "--max-restarts", "2", "--no-python", "--",
                        "/bin/sh", str(worker)],
                       env=env, capture_output=True, text=True, timeout=DEADLINE_S)
    assert p.returncode == 0, p.stderr
    seen = [set((tmp_path / f"watch.{g}").read_text().split()) for g in range(3)]
    assert seen[0] == seen[1] == seen[2] and len(seen[0]) == 1, (seen, p.stderr)
    logged = re.findall(r"GPU health watch: watching this node's GPUs \(pid (\d+)\)", p.stderr)
    assert set(logged) == seen[0], p.stderr
    assert "GPU health watch ended" not in p.stderr
    assert "process(es) the workers left behind" not in p.stderr
    assert "generation 2: starting" in p.stderr
