#!/usr/bin/env bash
# Launch overhead, trainvisor vs torchrun, four workers that do nothing:
#   trainvisor run --preflight none --nproc-per-node 4 -- /bin/true
#   torchrun --standalone --nproc_per_node 4 --monitor_interval 0.1 --no_python /bin/true
# (torchrun = Debian 12's torch 1.13 through bench/torchrun_compat.py on /usr/bin/python3).
#
# Usage: bench/launch.sh [N]   N runs of each (default 10), alternating which goes first.
# Env: TRAINVISOR (binary; default $BUILD_DIR/trainvisor, BUILD_DIR default build),
#      PYTHON (default /usr/bin/python3),
#      TV_PREFLIGHT (default none: torchrun runs no health checks, so neither does trainvisor;
#      on a GPU machine TV_PREFLIGHT=auto adds the default basic preflight to the figure),
#      TV_FLAGS (more `run` options, e.g. "--gpu-health off"; default none: trainvisor's defaults).
#
# What is measured, per run:
#  - wall: start to exit of the launcher command, nanosecond clock (date +%s%N), which includes
#    starting, supervising and reaping all four workers;
#  - max RSS: /usr/bin/time -v "Maximum resident set size", i.e. getrusage of the launcher as
#    reaped: the largest single process of its tree (the launcher itself or one worker), not a sum;
#  - tree peak: the largest SUM of PSS (/proc/PID/smaps_rollup: shared pages split between their
#    sharers, so a fork's copy-on-write pages are not counted twice) over the launcher and all its
#    descendants at one moment, sampled every ~2 ms in separate runs (so the sampler does not slow
#    the timed runs); it includes what forked helpers add. A sampler can miss very short peaks.
# Medians over N runs are printed side by side.
set -euo pipefail

n="${1:-10}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tv="${TRAINVISOR:-${BUILD_DIR:-$root/build}/trainvisor}"
py="${PYTHON:-/usr/bin/python3}"
[[ -x "$tv" ]] || { echo "launch.sh: TRAINVISOR=$tv is not an executable; build it first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "launch.sh: /usr/bin/time (package time) is missing" >&2; exit 2; }

read -r -a tv_flags <<<"${TV_FLAGS:-}"
tv_cmd=("$tv" run --preflight "${TV_PREFLIGHT:-none}" --nproc-per-node 4 "${tv_flags[@]}" -- /bin/true)
tr_cmd=("$py" "$root/bench/torchrun_compat.py" --standalone --nproc_per_node 4
        --monitor_interval 0.1 --no_python /bin/true)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Runs "$@" once under /usr/bin/time -v; prints "WALL_MS MAXRSS_KIB". Fails if the command does.
measure() {
  local t0 t1 rc=0
  t0=$(date +%s%N)
  /usr/bin/time -v -o "$work/time" "$@" >"$work/out" 2>&1 || rc=$?
  t1=$(date +%s%N)
  if ((rc != 0)); then
    echo "launch.sh: '$*' exited $rc:" >&2
    tail -20 "$work/out" >&2
    exit 1
  fi
  local rss
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
  echo "$(((t1 - t0) / 1000)) $rss"
}

# Runs "$@" once while sampling the summed PSS of its process tree; prints the peak in KiB.
tree_peak() {
  "$py" - "$@" <<'PY'
import os, subprocess, sys, time

def children(pid):
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return kids

def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0

proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = 0
while proc.poll() is None:
    tree, todo = [], [proc.pid]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children(pid)
    peak = max(peak, sum(pss_kib(p) for p in tree))
    time.sleep(0.002)
if proc.returncode != 0:
    sys.exit(f"launch.sh: {sys.argv[1:]} exited {proc.returncode}")
print(peak)
PY
}

median() { sort -n | awk '{v[NR]=$1} END {m=int((NR+1)/2); print (NR%2 ? v[m] : (v[m]+v[m+1])/2)}'; }

: >"$work/tv" && : >"$work/tr" && : >"$work/tv_tree" && : >"$work/tr_tree"
measure "${tv_cmd[@]}" >/dev/null  # warm the page cache for both
measure "${tr_cmd[@]}" >/dev/null
for ((i = 0; i < n; i++)); do
  if ((i % 2 == 0)); then
    measure "${tv_cmd[@]}" >>"$work/tv"
    measure "${tr_cmd[@]}" >>"$work/tr"
  else
    measure "${tr_cmd[@]}" >>"$work/tr"
    measure "${tv_cmd[@]}" >>"$work/tv"
  fi
done
for ((i = 0; i < (n < 5 ? n : 5); i++)); do
  tree_peak "${tv_cmd[@]}" >>"$work/tv_tree"
  tree_peak "${tr_cmd[@]}" >>"$work/tr_tree"
done

col() { awk -v c="$2" '{print $c}' "$work/$1" | median; }
tv_wall=$(col tv 1) tr_wall=$(col tr 1) tv_rss=$(col tv 2) tr_rss=$(col tr 2)
tv_tree=$(median <"$work/tv_tree") tr_tree=$(median <"$work/tr_tree")
echo "trainvisor: ${tv_cmd[*]}"
echo "torchrun:   torchrun ${tr_cmd[*]:2}   (torch $("$py" -c 'import torch; print(torch.__version__)'))"
echo "medians of $n alternating runs ($(nproc) CPUs)"
printf '%-34s %12s %12s\n' "" trainvisor torchrun
awk -v a="$tv_wall" -v b="$tr_wall" 'BEGIN {printf "%-34s %12.1f %12.1f\n", "wall time (ms)", a / 1000, b / 1000}'
awk -v a="$tv_rss" -v b="$tr_rss" 'BEGIN {printf "%-34s %12.1f %12.1f\n", "max RSS, largest process (MiB)", a / 1024, b / 1024}'
awk -v a="$tv_tree" -v b="$tr_tree" 'BEGIN {printf "%-34s %12.1f %12.1f\n", "peak PSS, whole tree (MiB, sampled)", a / 1024, b / 1024}'
