#!/usr/bin/env bash
# What carrying the workers' output costs: 4 workers each write MB megabytes of 100-byte lines,
# one write(2) per line as a training script's `print(..., flush=True)` does (the same Python
# writer under both; `cat` of the file instead with WRITER=cat), through `trainvisor run` with its defaults
# (every line to its rank's log file under --log-dir and, prefixed, to trainvisor's own stdout, a
# file here), against the same 4 writers straight to 4 files. Wall time, medians of R alternating
# runs, and the ratio (issue 41: at most 1.5x). LOG_FORMAT=json: the forwarded lines as JSON objects
# (--log-format json, docs/observability.md "JSON lines").
# Usage: [LOG_FORMAT=text|json] bench/output_cost.sh [TRAINVISOR_BIN] [MB=8.25] [R=5]
set -euo pipefail
BIN=${1:-build/trainvisor}
MB=${2:-8.25}
R=${3:-5}
work=$(mktemp -d "${BENCH_DIR:-/tmp}/tv-bench-output.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 - "$work/lines" "$MB" <<'PY'
import sys
line = ("x" * 99 + "\n").encode()
with open(sys.argv[1], "wb") as f:
    f.write(line * int(float(sys.argv[2]) * 1e6 / len(line)))
PY
now() { date +%s%N; }
cat >"$work/writer.py" <<'PY'
import os, sys
out = sys.stdout.fileno()
with open(sys.argv[1], "rb") as f:
    for line in f:
        os.write(out, line)
PY
if [ "${WRITER:-python}" = cat ]; then writer=(cat "$work/lines"); else
  writer=(python3 "$work/writer.py" "$work/lines"); fi
direct() {
  local t0 i
  t0=$(now)
  for i in 0 1 2 3; do "${writer[@]}" >"$work/direct.$i" & done
  wait
  echo $(($(now) - t0))
}
through() {
  local t0
  rm -rf "$work/logs"
  t0=$(now)
  "$BIN" run --nproc-per-node 4 --preflight none --log-dir "$work/logs" \
    --log-format "${LOG_FORMAT:-text}" --no-python -- \
    "${writer[@]}" >"$work/tv.out" 2>"$work/tv.err"
  echo $(($(now) - t0))
}
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: >"$work/d"
: >"$work/t"
for _ in $(seq "$R"); do
  direct >>"$work/d"
  through >>"$work/t"
done
d=$(med <"$work/d")
t=$(med <"$work/t")
lines=$(wc -l <"$work/tv.out")
awk -v f="${LOG_FORMAT:-text}" -v w="${WRITER:-python}" -v d="$d" -v t="$t" -v mb="$MB" -v r="$R" -v lines="$lines" 'BEGIN {
  printf "4 workers x %s MB of 100-byte lines (%s, --log-format %s), medians of %d alternating runs:\n", mb, w, f, r
  printf "  straight to files:  %.1f ms\n", d / 1e6
  printf "  through trainvisor: %.1f ms (%d lines on its stdout)\n", t / 1e6, lines
  printf "  ratio: %.2fx (target: at most 1.5x)\n", t / d
}'
