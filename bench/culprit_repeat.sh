#!/usr/bin/env bash
# The job-wide culprit from NCCL flight-recorder dumps, repeated (docs/supervision.md, "The
# culprit"): RUNS runs of each case of tests/integration/test_hang_culprit.py's flight-recorder
# test (two trainvisor nodes of two ranks on loopback, dumps in torch 2.11's format; `fr-hang`:
# the verdict is trainvisor's, `fr-abort`: rank 0 aborts as torch's watchdog does). Prints, per
# case, how many runs named the culprit on both nodes, and the seconds from the first failure
# line (`generation 0 failed:`) to the decision (`job: generation 0 ...:`) on node 0: median and
# worst.
#
# usage: bench/culprit_repeat.sh [BUILD_DIR] [RUNS]   (defaults: build, 100)
set -uo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath "${1:-build}")"
runs="${2:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$build/trainvisor" "$work/trainvisor"  # a rebuild meanwhile does not change the runs
export TRAINVISOR_BIN="$work/trainvisor" TV_HELPERS="$build/helpers" TV_SOURCE_DIR="$src" \
  TV_PYTHON="${TV_PYTHON:-/usr/bin/python3}"
secs() {  # [trainvisor HH:MM:SS.mmm ...] -> seconds of the day
  sed -E 's/^\[trainvisor ([0-9]+):([0-9]+):([0-9.]+).*/\1 \2 \3/' | awk '{printf "%.3f\n", $1*3600+$2*60+$3}'
}
for mode in fr-abort fr-hang; do
  pass=0
  : >"$work/latency"
  for i in $(seq "$runs"); do
    rm -rf "$work/t"
    if "$TV_PYTHON" -m pytest -q -p no:cacheprovider --basetemp="$work/t" \
      "$src/tests/integration/test_hang_culprit.py" -k "$mode" >"$work/log" 2>&1; then
      pass=$((pass + 1))
      err=$(ls "$work"/t/*0/node0.err)
      a=$(grep -m1 'generation 0 failed:' "$err" "${err%0.err}1.err" | sed 's/^[^:]*://' | secs | sort -n | head -1)
      b=$(grep -m1 '\] job: generation 0 ' "$err" | secs)
      awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f\n", b-a}' >>"$work/latency"
    else
      tail -20 "$work/log"
    fi
  done
  sort -n "$work/latency" -o "$work/latency"
  n=$(wc -l <"$work/latency")
  med=$(awk -v n="$n" 'NR==int((n+1)/2){print}' "$work/latency")
  worst=$(tail -1 "$work/latency")
  echo "$mode: culprit named in $pass/$runs runs; failure to decision: median ${med:-?} s, worst ${worst:-?} s"
done
