#!/usr/bin/env bash
# Every benchmark of bench/ with trainvisor's defaults, beside its peer where it has one; prints
# one table of the headline figures in the form of docs/benchmarks.md ("Headline figures") and
# keeps each benchmark's whole output in OUT/<name>.txt. --docs docs/benchmarks.md regenerates
# that table in the docs. Run it on the H200 host at the end of every issue that touches a
# measured path (bench/README.md).
#   bench/all.sh TRAINVISOR OUT [--docs docs/benchmarks.md] [SECTION...]
# Env: PYTHON (python3 with torch), TV_NODES (rendezvous sizes), QUICK=1 (fewer repeats).
set -euo pipefail
exec "${PYTHON_DRIVER:-python3}" "$(dirname "$0")/all.py" "$@"
