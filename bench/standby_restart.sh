#!/usr/bin/env bash
# Warm standbys (docs/standby.md): kill -> every replacement rank ready again, on the same DDP job
# (bench/standby_restart_worker.py: NCCL on GPUs, gloo on CPU), under trainvisor with
# --warm-standby on, with it off, and torchrun (bench/torchrun_compat.py, torch 1.13 to 2.x),
# REPEATS alternating rounds; prints one table and the memory of each standby.
#   bench/standby_restart.sh TRAINVISOR PYTHON OUTDIR [REPEATS=3] [NPROC=2]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$2" "$here/standby_restart.py" "$1" "$2" "$3" "${4:-3}" "${5:-2}"
