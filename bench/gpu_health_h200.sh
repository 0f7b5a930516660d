#!/bin/bash
# The GPU health watch on a real GPU machine: what NVML reads (the preflight's `__query
# gpu-health`, the watch's first lines) and the watch child's CPU cost (utime+stime from
# /proc/PID/stat over SECONDS, default 60, at the default interval of 15 s). Run from the
# repository root with the binary in .device/ and its non-glibc libraries in .device/lib/:
#   bench/gpu_health_h200.sh OUTDIR [SECONDS] [INTERVAL]
# Writes OUTDIR/{health.json,watch.jsonl,cost.txt}. docs/health.md has the figures.
set -u
out=${1:?usage: bench/gpu_health_h200.sh OUTDIR [SECONDS] [INTERVAL]}
seconds=${2:-60}
interval=${3:-15}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tv=$PWD/.device/trainvisor
nvidia-smi -L
nvidia-smi --query-gpu=index,uuid,pci.bus_id,ecc.errors.uncorrected.volatile.total,clocks_event_reasons.active --format=csv 2>/dev/null ||
  nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv
"$tv" version
t0=$(date +%s.%N)
"$tv" __query gpu-health > "$out/health.json"
t1=$(date +%s.%N)
echo "== __query gpu-health: exit $?, wall $(python3 -c "print(round($t1 - $t0, 3))") s"
python3 -m json.tool "$out/health.json" | head -60

"$tv" preflight --level basic | grep -E "^(CHECK|gpu)"

"$tv" __query gpu-watch "$interval" > "$out/watch.jsonl" &
pid=$!
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
sleep 2  # NVML's init and the first reading
c0=$(cpu)
sleep "$seconds"
c1=$(cpu)
threads=$(ls "/proc/$pid/task" | wc -l)
rss=$(awk '/VmRSS/{print $2, $3}' "/proc/$pid/status")
kill "$pid"
wait "$pid" 2>/dev/null
python3 - "$c0" "$c1" "$ticks" "$seconds" "$interval" "$threads" "$rss" <<'PY' | tee "$out/cost.txt"
import sys
c0, c1, hz, secs, interval = (float(x) for x in sys.argv[1:6])
used = (c1 - c0) / hz
print(f"gpu-watch child: {used:.3f} CPU s in {secs:.0f} s at --gpu-health-interval {interval:g}: "
      f"{100 * used / secs:.4f}% of one core (target <= 0.1%); first 2 s (NVML init): "
      f"{c0 / hz:.3f} CPU s; threads {sys.argv[6]}, RSS {sys.argv[7]}")
PY
echo "== the watch's lines:"
cat "$out/watch.jsonl"
