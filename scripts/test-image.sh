#!/usr/bin/env bash
# CI's container tests (scripts/test.sh runs this after the portable build): builds the test image
# once per run and runs tests/container against it, trainvisor as PID 1. Unlike
# scripts/container-test.sh (the Dockerfile's builder stage compiles the binary again: ~30 min)
# the image is
#   a `debootstrap --variant=minbase bookworm` root (a tarball cached per UTC day under TV_CACHE,
#   so a second run on the same machine that day reuses it; older ones are deleted), imported with
#   `podman import`, plus the portable binary at /usr/local/bin/trainvisor (ENTRYPOINT) and the
#   test helper programs (build/helpers: tv_exit, tv_env_dump, ...) at /usr/local/lib/tv-helpers.
# Causes outside the project (not root, no podman/debootstrap, the mirror unreachable, no working
# container runtime on this host) print one "skipped:" line and exit 0; a test that fails, fails.
#   scripts/test-image.sh [PORTABLE_BIN=build-portable/trainvisor] [HELPERS=build/helpers]
# Env: TV_CACHE (default /var/cache/trainvisor), TV_IMAGE (default localhost/trainvisor-ci:latest),
#      DEBIAN_MIRROR, TV_PYTHON (default /usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(realpath "${1:-$root/build-portable/trainvisor}")"
helpers="$(realpath "${2:-$root/build/helpers}")"
cache="${TV_CACHE:-/var/cache/trainvisor}"
image="${TV_IMAGE:-localhost/trainvisor-ci:latest}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
day="$(date -u +%Y%m%d)"
rootfs_tar="$cache/debian-12-minbase-$day.tar"
base="localhost/trainvisor-ci-base:$day"
image_helpers=/usr/local/lib/tv-helpers
# ulimits the container's init may set without CAP_SYS_RESOURCE (podman's defaults are above
# what an unprivileged-resource host allows); loopback only (--network none has `lo`).
run_opts=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096 --network none)

skip() { echo "skipped: container tests (scripts/test-image.sh): $*"; exit 0; }
step() { echo "== $1 ($(date -u +%T))"; SECONDS=0; }
took() { echo "   took ${SECONDS} s"; }

[ "$(id -u)" -eq 0 ] || skip "needs root"
for tool in podman debootstrap; do command -v "$tool" >/dev/null || skip "no $tool (scripts/install-deps.sh)"; done
[ -x "$bin" ] || { echo "error: the portable binary $bin is missing (scripts/build-portable.sh)" >&2; exit 1; }
[ -x "$helpers/tv_exit" ] || { echo "error: no helper programs in $helpers (build the tv_* targets)" >&2; exit 1; }

total=0
step "Debian 12 minbase root ($rootfs_tar)"
if [[ ! -f "$rootfs_tar" ]]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  debootstrap --variant=minbase bookworm "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
    skip "debootstrap from $mirror failed: $(tail -1 "$tmp/debootstrap.log")"
  rm -rf "$tmp/rootfs/var/cache/apt/archives/"*.deb "$tmp/rootfs/var/lib/apt/lists/"*
  tar --numeric-owner -C "$tmp/rootfs" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
  rm -rf "$tmp"
  trap - EXIT
  find "$cache" -maxdepth 1 -name 'debian-12-minbase-*.tar' ! -name "${rootfs_tar##*/}" -delete
fi
took; total=$((total + SECONDS))

step "image $image: the root + the portable binary + the helpers"
if ! podman image exists "$base"; then
  out="$(podman import -q "$rootfs_tar" "$base" 2>&1)" || skip "podman import failed: $out"
fi
ctr="$(podman create "$base" /bin/true 2>&1)" || skip "podman create failed: $ctr"
trap 'podman rm -f "$ctr" >/dev/null 2>&1 || true' EXIT
# the inputs were checked above: a failure here is podman's
out="$(podman cp "$bin" "$ctr:/usr/local/bin/trainvisor" 2>&1 && podman cp "$helpers" "$ctr:$image_helpers" 2>&1 &&
  podman commit -q --change 'ENTRYPOINT ["/usr/local/bin/trainvisor"]' --change 'CMD ["version"]' \
    "$ctr" "$image" 2>&1)" || skip "podman cp/commit failed: $(echo "$out" | tail -1)"
podman rm -f "$ctr" >/dev/null
trap - EXIT
took; total=$((total + SECONDS))

step "container runtime (crun where it works, else runc)"
runtime=""
why=""
for r in crun runc; do
  command -v "$r" >/dev/null || { why+=" $r: not installed;"; continue; }
  # /bin/true of the Debian root: a binary that cannot run fails the tests, it is not skipped
  if out="$(timeout 60 podman --runtime "$r" run --rm "${run_opts[@]}" --entrypoint /bin/true "$image" 2>&1)"; then
    runtime="$r"
    break
  fi
  why+=" $r: $(echo "$out" | tail -1);"
done
[ -n "$runtime" ] || skip "no container runtime works on this host:$why"
echo "   $runtime"
took; total=$((total + SECONDS))

step "container tests, trainvisor as PID 1 (tests/container)"
export TV_PODMAN="podman --runtime $runtime" TV_PODMAN_RUN_OPTS="${run_opts[*]}" TV_IMAGE="$image"
export TV_IMAGE_HELPERS="$image_helpers" TRAINVISOR_BIN="$bin" TV_SOURCE_DIR="$root"
"${TV_PYTHON:-/usr/bin/python3}" -m pytest -q -p no:cacheprovider "$root/tests/container"
took; total=$((total + SECONDS))
echo "== container tests: ${total} s in all"
