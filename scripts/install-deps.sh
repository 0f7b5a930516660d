#!/usr/bin/env bash
# Installs everything trainvisor needs to build and test, from Debian 12 packages only.
# Idempotent: packages already present are skipped by apt; safe to run again.
#   scripts/install-deps.sh              build + test (CI, development)
#   scripts/install-deps.sh --build-only only what the portable binary is built from (the
#                                        Dockerfile's builder stage)
set -euo pipefail

build_packages=(
  g++ cmake ninja-build binutils ccache
  libboost1.81-dev libboost-filesystem1.81-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libfabric-dev libssl-dev zlib1g-dev
)
test_packages=(
  build-essential pkg-config clang clang-format libclang-rt-14-dev libboost1.81-all-dev
  libfabric-bin googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-torch python3-pytest python3-yaml python3-jsonschema python3-botocore
  iproute2 util-linux procps time hyperfine strace e2fsprogs
  podman buildah runc debootstrap
  slurm-wlm munge  # tests/integration/test_slurm.py: a real Slurm cluster (scripts/slurm-cluster.sh)
  prometheus  # promtool: tests/integration/test_observability.py lints the scraped /metrics
  nodejs  # tests/otlp/receiver.js: OpenTelemetry's own OTLP definitions decode the push
)
# Optional: a test that needs one prints a 'skipped:' line where it is absent, so a failed install
# (offline, a mirror without it) is one warning here, never a failed setup.
optional_test_packages=(
  chromium  # tests/integration/test_report.py loads `trainvisor report --html`'s page headless
)

packages=("${build_packages[@]}")
[ "${1:-}" = "--build-only" ] || packages+=("${test_packages[@]}")
# Debian's npm, unless an npm is there already (a nodejs that carries its own conflicts with it).
[ "${1:-}" = "--build-only" ] || command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# OpenTelemetry's OTLP message definitions for tests/integration/test_otlp.py: npm's
# @opentelemetry/otlp-transformer (its protobufjs root generated from opentelemetry-proto), pinned
# by tests/otlp/package-lock.json, into tests/otlp/node_modules (git ignores it). Installed once;
# offline and not installed yet: one "skipped:" line, and test_otlp.py skips saying so.
if [ "${1:-}" != "--build-only" ]; then
  otlp_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/otlp"
  root_js="$otlp_dir/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js"
  if [ -f "$root_js" ] && [ "$otlp_dir/node_modules/.package-lock.json" -nt "$otlp_dir/package-lock.json" ]; then
    :  # installed, and the lock has not changed since
  elif npm ci --prefix "$otlp_dir" --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null 2>&1; then
    echo "installed: tests/otlp/node_modules (@opentelemetry/otlp-transformer, npm ci)"
  else
    echo "skipped: tests/otlp/node_modules: npm ci failed (offline?); tests/integration/test_otlp.py will skip"
  fi
fi

[ "${1:-}" = "--build-only" ] && exit 0
optional_missing=()
for p in "${optional_test_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    optional_missing+=("$p")
done
if ((${#optional_missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  ((${#missing[@]})) || $sudo_cmd apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${optional_missing[@]}" ||
    echo "install-deps: optional ${optional_missing[*]} not installed; the tests that need it skip" >&2
fi
