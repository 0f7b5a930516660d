#!/usr/bin/env bash
# Builds every libFuzzer harness (tests/fuzz/fuzz_*.cc) with clang and runs each for N seconds.
#   scripts/run-fuzzers.sh [SECONDS_EACH=5]
# Env: BUILD_DIR (default build-fuzz), JOBS (default 2), FUZZ_SKIP_BUILD=1 to run the harnesses
# already built under $BUILD_DIR/tests/fuzz/ without configuring or building.
# Seeds come from tests/fuzz/corpus/<name>/ when it exists, plus the tests' own data listed in
# extra_seeds below (the real NCCL logs of tests/data/nccl/); new
# inputs go to a temporary corpus, so the checked-in seeds are never modified. Crashes are saved under $BUILD_DIR/fuzz-artifacts/.
# Exit 0 only when every harness built and ran clean.
set -euo pipefail

seconds="${1:-5}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS_EACH]" >&2; exit 64; }
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
jobs="${JOBS:-2}"

mapfile -t names < <(find "$root/tests/fuzz" -maxdepth 1 -name 'fuzz_*.cc' -printf '%f\n' |
                     sed 's/\.cc$//' | sort)
if ((${#names[@]} == 0)); then
  echo "no fuzz_*.cc harness in tests/fuzz"
  exit 0
fi

if [[ "${FUZZ_SKIP_BUILD:-0}" != 1 ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DTRAINVISOR_FUZZ=ON -DBUILD_TESTING=OFF -DTRAINVISOR_BENCH=OFF >/dev/null
  cmake --build "$build" -j "$jobs" --target "${names[@]}"
fi

# Real inputs the parsers meet, beside the checked-in corpus (directories; missing ones skipped).
declare -A extra_seeds=(
  [fuzz_nccl_log]="$root/tests/data/nccl"
)

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
for name in "${names[@]}"; do
  bin="$build/tests/fuzz/$name"
  if [[ ! -x "$bin" ]]; then
    echo "== $name: FAILED (not built: $bin)"
    failed=$((failed + 1))
    continue
  fi
  corpus=("$work/$name")
  mkdir -p "$work/$name"
  [[ -d "$root/tests/fuzz/corpus/$name" ]] && corpus+=("$root/tests/fuzz/corpus/$name")
  for d in ${extra_seeds[$name]:-}; do
    [[ -d "$d" ]] && corpus+=("$d")
  done
  echo "== $name: ${seconds}s, seeds: ${corpus[*]:1}"
  if "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
       -artifact_prefix="$artifacts/$name-" -print_final_stats=1 "${corpus[@]}" \
       >"$work/$name.log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done' "$work/$name.log" || true
    echo "== $name: ok"
    passed=$((passed + 1))
  else
    tail -n 40 "$work/$name.log"
    echo "== $name: FAILED (artifacts in $artifacts)"
    failed=$((failed + 1))
  fi
done
echo "fuzzers: $passed passed, $failed failed"
((failed == 0))
