"""Runs commands alternately, R times each, and returns each one's (wall s, user+sys s) samples
(wait4 rusage of the command's whole process tree) and its last stdout: the timing loop the
checkpoint benchmarks share (bench/checkpoint_latest.sh, bench/checkpoint_dirs.sh)."""
import os
import subprocess
import time


def alternate(cmds, runs):
    stats = {k: [] for k in cmds}
    answers = {}
    for _ in range(runs):
        for name, argv in cmds.items():
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            out = p.stdout.read()
            _, _, ru = os.wait4(p.pid, 0)
            stats[name].append((time.perf_counter() - t0, ru.ru_utime + ru.ru_stime))
            answers[name] = out.decode().strip()
    return stats, answers
