#!/usr/bin/env bash
# `trainvisor checkpoint latest` vs the seeds' `find ... -printf '%T@ %p\n' | sort -n | tail -1`
# over N checkpoints (default 100,000: 20 Isaac Lab runs x 5,000 agent_<step>.pt, each a real
# torch.save file copied from tests/data), warm page cache, median of R alternating runs.
# Usage: bench/checkpoint_latest.sh [TRAINVISOR_BIN] [N] [R]
set -euo pipefail
BIN=${1:-build/trainvisor}
N=${2:-100000}
R=${3:-7}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(mktemp -d /tmp/tv-bench-ckpt.XXXXXX)
trap 'rm -rf "$TREE"' EXIT

python3 - "$TREE" "$N" "$SRC/tests/data/checkpoint/agent_1000.pt" <<'PY'
import os, shutil, sys, time
root, n, pt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(pt, "rb").read()
runs = 20
per = max(1, n // runs)
t0 = time.time() - 10 * 86400
k = 0
for r in range(runs):
    d = os.path.join(root, "logs/skrl/Isaac-Ant-v0", f"2025-01-{r + 1:02d}_10-00-00_ppo_torch", "checkpoints")
    os.makedirs(d)
    for s in range(per):
        p = os.path.join(d, f"agent_{(s + 1) * 100}.pt")
        with open(p, "wb") as f:
            f.write(data)
        t = t0 + k
        os.utime(p, (t, t))
        k += 1
print(f"created {k} checkpoints in {runs} runs under {root}", file=sys.stderr)
PY

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
tv_times=(); find_times=()
for ((i = 0; i < R; i++)); do
  t=$(now); tv_out=$("$BIN" checkpoint latest --dir "$TREE" 2>/dev/null); e=$(now)
  tv_times+=("$(echo "$e - $t" | bc -l)")
  t=$(now); find_out=$(find "$TREE" -name '*.pt' -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2-); e=$(now)
  find_times+=("$(echo "$e - $t" | bc -l)")
done
tv_med=$(printf '%s\n' "${tv_times[@]}" | median)
find_med=$(printf '%s\n' "${find_times[@]}" | median)
printf '%-58s %10s\n' "command ($N checkpoints, median of $R)" "seconds"
printf '%-58s %10.4f\n' "trainvisor checkpoint latest --dir D" "$tv_med"
printf '%-58s %10.4f\n' "find D -name '*.pt' -printf '%T@ %p\\n' | sort -n | tail -1" "$find_med"
echo "trainvisor: $tv_out"
echo "find:       $find_out"
[[ "$tv_out" == "$find_out" ]] && echo "same answer" || echo "DIFFERENT answers"
