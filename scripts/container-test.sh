#!/usr/bin/env bash
# Builds the image from the Dockerfile with no registry, then runs the container tests with
# trainvisor as PID 1 (tests/container/test_container.py):
#   1. a Debian 12 root from debootstrap (cached), imported as debian:12 and debian:12-slim,
#   2. podman build of the Dockerfile: the builder compiles the portable binary, the last stage
#      puts it into debian:12-slim as ENTRYPOINT,
#   3. podman run/stop: stop -> 143 with the workers signalled first, a worker that ignores
#      SIGTERM, orphaned grandchildren reaped, SageMaker's `train` argument, the default grace
#      period under podman's 10 s stop timeout.
# Needs root, podman, runc, debootstrap (scripts/install-deps.sh) and a Debian mirror (apt).
# Env: TV_CACHE (default ~/.cache/trainvisor) for the root tarball (rebuilt after 30 days),
#      TV_IMAGE (default localhost/trainvisor-test:latest), DEBIAN_MIRROR.
# Prints the time of each step and the image sizes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TV_CACHE:-$HOME/.cache/trainvisor}"
image="${TV_IMAGE:-localhost/trainvisor-test:latest}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
rootfs_tar="$cache/debian-12-minbase.tar"
# runc, not crun; ulimits the container's init may set without CAP_SYS_RESOURCE (podman's
# defaults are above what an unprivileged-resource host allows).
podman_opts=(--runtime runc)
run_opts=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
export TV_PODMAN="podman ${podman_opts[*]}" TV_PODMAN_RUN_OPTS="${run_opts[*]}" TV_IMAGE="$image"

step() { echo "== $1 ($(date +%T))"; SECONDS=0; }
took() { echo "   took ${SECONDS} s"; }

step "Debian 12 root (debootstrap, cached in $rootfs_tar)"
if [[ ! -f "$rootfs_tar" ]] || [[ -n "$(find "$rootfs_tar" -mtime +30)" ]]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  debootstrap --variant=minbase bookworm "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" ||
    { tail -20 "$tmp/debootstrap.log"; exit 1; }
  rm -rf "$tmp/rootfs/var/cache/apt/archives/"*.deb "$tmp/rootfs/var/lib/apt/lists/"*
  tar --numeric-owner -C "$tmp/rootfs" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
  rm -rf "$tmp"
  trap - EXIT
fi
podman "${podman_opts[@]}" import -q "$rootfs_tar" docker.io/library/debian:12 >/dev/null
podman tag docker.io/library/debian:12 docker.io/library/debian:12-slim
took

step "podman build of the Dockerfile (no registry: FROM resolves to the imported root)"
build=(podman "${podman_opts[@]}" build --pull=never --network=host "${run_opts[@]}" -f "$root/Dockerfile")
"${build[@]}" --target trainvisor -t localhost/trainvisor-bin:latest "$root"
"${build[@]}" -t "$image" "$root"
took
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'trainvisor|debian' || true

step "container tests, trainvisor as PID 1"
"${TV_PYTHON:-/usr/bin/python3}" -m pytest -q -s -p no:cacheprovider "$root/tests/container"
took
