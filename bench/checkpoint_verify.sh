#!/usr/bin/env bash
# What verifying the chosen checkpoint costs: `trainvisor checkpoint latest` on a directory with
# one real torch.save file of SIZE_MB (the CRC-32 of every stored entry is checked against the
# central directory, reading every byte once), beside reading the file (`cat > /dev/null`) and
# Python's zipfile.testzip() (the same CRC check), warm page cache, median of R runs.
# Usage: bench/checkpoint_verify.sh [TRAINVISOR_BIN] [SIZE_MB] [R]
set -euo pipefail
BIN=${1:-build/trainvisor}
MB=${2:-1024}
R=${3:-5}
TREE=$(mktemp -d /tmp/tv-bench-verify.XXXXXX)
trap 'rm -rf "$TREE"' EXIT
F="$TREE/run/checkpoints/agent_100.pt"
/usr/bin/python3 - "$F" "$MB" <<'PY'
import os, sys, time, torch
path, mb = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.dirname(path))
# Several tensors, as a model's state dict: 16 entries of MB/16 each.
torch.save({f"layer{i}.weight": torch.randn(mb * 1024 * 1024 // 4 // 16) for i in range(16)}, path)
t = time.time() - 3600
os.utime(path, (t, t))
PY
cat "$F" > /dev/null
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
run() { local t e; t=$(now); eval "$1" > /dev/null 2>&1; e=$(now); echo "$e - $t" | bc -l; }
a=(); b=(); c=()
for ((i = 0; i < R; i++)); do
  a+=("$(run "'$BIN' checkpoint latest --dir '$TREE'")")
  b+=("$(run "cat '$F' > /dev/null")")
  c+=("$(run "python3 -c 'import zipfile,sys; assert zipfile.ZipFile(sys.argv[1]).testzip() is None' '$F'")")
done
printf '%-60s %10s\n' "$(du -m "$F" | cut -f1) MB torch.save file, median of $R" "seconds"
printf '%-60s %10.3f\n' "trainvisor checkpoint latest (end record + CRC-32 of all)" "$(printf '%s\n' "${a[@]}" | median)"
printf '%-60s %10.3f\n' "cat FILE > /dev/null" "$(printf '%s\n' "${b[@]}" | median)"
printf '%-60s %10.3f\n' "python3 zipfile.ZipFile(FILE).testzip()" "$(printf '%s\n' "${c[@]}" | median)"
