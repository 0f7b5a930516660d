#!/usr/bin/env bash
# `trainvisor checkpoint latest` vs `find D -maxdepth 1 -name 'iter_*' | sort | tail -1` over N
# Megatron torch_dist checkpoint directories (default 10,000 iter_<07d>/ of one run, each a real
# torch 2.11 DCP save from tests/data plus common.pt and metadata.json, hard links), warm page
# cache, alternating, median of R runs of wall and user+sys time. find|sort|tail only names the
# last directory by name; trainvisor also checks the chosen one's content.
# Usage: [BENCH_DIR=/tmp] bench/checkpoint_dirs.sh [TRAINVISOR_BIN] [N] [R]
set -euo pipefail
BIN=${1:-build/trainvisor}
N=${2:-10000}
R=${3:-7}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(mktemp -d "${BENCH_DIR:-/tmp}/tv-bench-dirs.XXXXXX")
trap 'rm -rf "$TREE"' EXIT
python3 - "$TREE/gpt" "$N" "$SRC/tests/data/checkpoint" <<'PY'
import os, shutil, sys
d, n, data = sys.argv[1], int(sys.argv[2]), sys.argv[3]
proto = os.path.join(d, "proto")
shutil.copytree(os.path.join(data, "dcp_real", "one_rank"), proto)
shutil.copy(os.path.join(data, "agent_1000.pt"), os.path.join(proto, "common.pt"))
with open(os.path.join(proto, "metadata.json"), "w") as f:
    f.write('{"sharded_backend": "torch_dist", "sharded_backend_version": 1}')
for i in range(1, n + 1):
    it = os.path.join(d, f"iter_{i * 10:07d}")
    os.mkdir(it)
    for name in os.listdir(proto):
        os.link(os.path.join(proto, name), os.path.join(it, name))
shutil.rmtree(proto)
with open(os.path.join(d, "latest_checkpointed_iteration.txt"), "w") as f:
    f.write(str(n * 10))
print(f"created {n} iter_* directories in {d}", file=sys.stderr)
PY
PYTHONPATH="$SRC/bench" python3 - "$BIN" "$TREE/gpt" "$R" <<'PY'
import os, statistics, subprocess, sys, time
binary, d, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmds = {
    "trainvisor checkpoint latest --dir D": [binary, "checkpoint", "latest", "--dir", d],
    "find D -maxdepth 1 -name 'iter_*' | sort | tail -1": [
        "bash", "-c", f"find '{d}' -maxdepth 1 -name 'iter_*' | sort | tail -1"],
}
from alternate import alternate  # bench/alternate.py (PYTHONPATH)
stats, answers = alternate(cmds, runs)
print(f"{'command (%d iter_* directories, median of %d)' % (len(os.listdir(d)) - 1, runs):64} {'wall s':>9} {'cpu s':>9}")
med = {}
for name, rows in stats.items():
    med[name] = [statistics.median(r[i] for r in rows) for i in range(2)]
    print(f"{name:64} {med[name][0]:9.4f} {med[name][1]:9.4f}")
tv, fd = med[list(cmds)[0]], med[list(cmds)[1]]
print(f"speed-up: {fd[0] / tv[0]:.2f}x wall, {fd[1] / tv[1]:.2f}x cpu")
a = list(answers.values())
print("trainvisor:", a[0]); print("find:      ", a[1]); print("same answer" if a[0] == a[1] else "DIFFERENT answers")
PY
