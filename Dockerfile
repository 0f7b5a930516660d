# trainvisor as PID 1 of a training image. Three stages:
#   builder     Debian 12 with only the build dependencies; builds the portable binary
#               (scripts/build-portable.sh, the same build CI runs) and checks it
#               (scripts/check-portable.sh: glibc >= 2.35 is all it needs).
#   trainvisor  FROM scratch: the binary alone, at /trainvisor, for any image to COPY --from.
#   (last)      an example: BASE_IMAGE plus the binary as ENTRYPOINT. No package is installed.
#
#   podman build --target trainvisor -t trainvisor-bin .      # the binary alone
#   podman build --build-arg BASE_IMAGE=nvcr.io/nvidia/isaac-lab:2.1.0 -t my-training .
#   podman run --stop-timeout 35 my-training run --nproc-per-node auto train.py
#
# Your own image needs three lines (docs/deployment.md):
#   FROM nvcr.io/nvidia/isaac-lab:2.1.0
#   COPY --from=trainvisor-bin /trainvisor /usr/local/bin/trainvisor
#   ENTRYPOINT ["/usr/local/bin/trainvisor"]
#
# CUDA, NCCL and libfabric are never linked: trainvisor dlopen()s the ones the base image and the
# NVIDIA container toolkit provide, the same libraries the workers load.

# Any image with glibc >= 2.35 (Ubuntu 22.04 and later, Debian 12). Declared before the first FROM.
ARG BASE_IMAGE=debian:12-slim

FROM debian:12 AS builder
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
# The sources (.dockerignore leaves out tests, benchmarks, docs and build trees).
COPY . .
RUN bash scripts/build-portable.sh /build \
 && bash scripts/check-portable.sh /build/trainvisor \
 && /build/trainvisor version

FROM scratch AS trainvisor
COPY --from=builder /build/trainvisor /trainvisor

FROM ${BASE_IMAGE}
COPY --from=trainvisor /trainvisor /usr/local/bin/trainvisor
# trainvisor forwards SIGTERM to the workers' process groups, reaps every orphan and SIGKILLs what
# is left after --grace-period (default: a few seconds under the platform's stop window; 8 s under
# docker's and podman's 10 s: pass --stop-timeout and TRAINVISOR_GRACE_PERIOD for longer).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/trainvisor"]
CMD ["version"]
