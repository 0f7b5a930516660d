#!/usr/bin/env bash
# `trainvisor checkpoint latest` vs `find D -name '*.pt' -printf '%T@ %p\n' | sort -n | tail -1`
# over N checkpoints in ONE directory (default 100,000 agent_<step>.pt of one Isaac Lab run, each
# a real torch.save file copied from tests/data), side by side in one run: warm page cache,
# alternating, median of R runs of wall, user+sys time and peak RSS (GNU time).
# A third row is the floor both pay: the bare directory listing (bench/list_dir.c), one thread.
# trainvisor lists a large ext4 directory in parallel slices: its CPU column is all its threads.
# Usage: [BENCH_DIR=/tmp] bench/checkpoint_latest.sh [TRAINVISOR_BIN] [N] [R]   (BENCH_DIR: where the
# tree is made, i.e. which file system is measured)
set -euo pipefail
BIN=${1:-build/trainvisor}
N=${2:-100000}
R=${3:-7}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(mktemp -d "${BENCH_DIR:-/tmp}/tv-bench-ckpt.XXXXXX")
trap 'rm -rf "$TREE"' EXIT
DIR="$TREE/logs/skrl/Isaac-Ant-v0/2025-01-20_10-00-00_ppo_torch/checkpoints"

python3 - "$DIR" "$N" "$SRC/tests/data/checkpoint/agent_1000.pt" <<'PY'
import os, sys, time
d, n, pt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(pt, "rb").read()
os.makedirs(d)
t0 = time.time() - 10 * 86400
for s in range(n):
    p = os.path.join(d, f"agent_{(s + 1) * 100}.pt")
    with open(p, "wb") as f:
        f.write(data)
    os.utime(p, (t0 + s, t0 + s))
print(f"created {n} checkpoints in {d}", file=sys.stderr)
PY

# The floor: the bare directory listing (bench/list_dir.c: getdents64 and a count, nothing else),
# which find and trainvisor both pay; shown when a C compiler is there.
LIST=""
if command -v cc >/dev/null && cc -O2 -o "$TREE/list_dir" "$SRC/bench/list_dir.c"; then
  LIST="$TREE/list_dir"
fi

# Wall time, user+sys CPU (microsecond resolution, wait4 rusage of the command's whole process
# tree), medians of R alternating runs; then peak RSS of the largest process (GNU time, R more
# runs of each).
PYTHONPATH="$SRC/bench" python3 - "$TREE" "$R" "$BIN" "$DIR" "$LIST" <<'PY'
import os, statistics, subprocess, sys, time
tree, runs, binary, directory, lister = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
cmds = {
    "trainvisor checkpoint latest --dir D": [binary, "checkpoint", "latest", "--dir", tree],
    "find D -name '*.pt' -printf '%T@ %p\\n' | sort -n | tail -1": [
        "bash", "-c", f"find '{tree}' -name '*.pt' -printf '%T@ %p\\n' | sort -n | tail -1 | cut -d' ' -f2-"],
}
if lister:
    cmds["(floor) bare getdents64 listing: bench/list_dir.c"] = [lister, directory]
from alternate import alternate  # bench/alternate.py (PYTHONPATH)
stats, answers = alternate(cmds, runs)
# Peak RSS from GNU time, after the timed runs: wait4's ru_maxrss of a child forked from this
# Python keeps the ~14 MB the child had before exec.
for name, argv in cmds.items():
    for row in stats[name]:
        rss = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True).stderr.split()[-1]
        stats[name][stats[name].index(row)] = (*row, int(rss) / 1024)
print(f"{'command (%d checkpoints in one directory, median of %d)' % (len(os.listdir(os.path.dirname(answers[next(iter(cmds))]))), runs):64} {'wall s':>9} {'cpu s':>9} {'peak RSS MB':>12}")
med = {}
for name, rows in stats.items():
    m = [statistics.median(r[i] for r in rows) for i in range(3)]
    med[name] = m
    print(f"{name:64} {m[0]:9.4f} {m[1]:9.4f} {m[2]:12.1f}")
tv, fd = med[list(cmds)[0]], med[list(cmds)[1]]
print(f"speed-up: {fd[0] / tv[0]:.1f}x wall, {fd[1] / tv[1]:.1f}x cpu")
if lister:
    fl = med[list(cmds)[2]]
    print(f"trainvisor beyond the bare listing: {(tv[0] - fl[0]) * 1000:.1f} ms wall, "
          f"{(tv[1] - fl[1]) * 1000:.1f} ms cpu; find beyond it: {(fd[0] - fl[0]) * 1000:.1f} ms wall")
a = list(answers.values())
print("trainvisor:", a[0]); print("find:      ", a[1]); print("same answer" if a[0] == a[1] else "DIFFERENT answers")
PY
