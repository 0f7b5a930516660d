#!/usr/bin/env python3
"""Launch of 4 no-op workers, two trainvisor binaries alternated run by run, so that the machine's
drift between two series does not read as a difference between the binaries:
  trainvisor run --preflight none --nproc-per-node 4 -- /bin/true
Prints each binary's median, p10 and p90 wall time (start to exit, all four workers reaped).

Usage: bench/launch_alternate.py NAME=BIN NAME=BIN [RUNS=60]
"""
import statistics
import sys

from alternate import alternate  # bench/, the script's own folder, is on sys.path


def main(argv):
    bins = [a.split("=", 1) for a in argv if "=" in a]
    runs = int(next((a for a in argv if "=" not in a), "60"))
    if len(bins) != 2:
        sys.exit(__doc__)
    cmds = {name: [path, "run", "--preflight", "none", "--nproc-per-node", "4", "--", "/bin/true"]
            for name, path in bins}
    stats, _ = alternate(cmds, runs)
    for name, samples in stats.items():
        w = sorted(s[0] * 1000 for s in samples)
        print(f"{name}: launch 4 workers median {statistics.median(w):.1f} ms, "
              f"p10 {w[len(w) // 10]:.1f}, p90 {w[9 * len(w) // 10]:.1f} (n={len(w)})")


if __name__ == "__main__":
    main(sys.argv[1:])
