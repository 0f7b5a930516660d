# A training image whose ENTRYPOINT (PID 1) is trainvisor.
#
#   docker build -t my-training --build-arg BASE_IMAGE=<your Debian 12 based training image> .
#   docker run --gpus all my-training run --nproc-per-node auto train.py --epochs 10
#
# trainvisor is built on Debian 12 and needs a runtime base with the same libraries (glibc 2.36,
# Debian 12's spdlog/fmt/OpenSSL): BASE_IMAGE must be Debian 12 based. CUDA, NCCL and libfabric
# are never linked in: trainvisor dlopen()s them at run time, the same libraries the workers load,
# so they come from the base image (libnccl, libcudart, libfabric + aws-ofi-nccl for EFA) and from
# the NVIDIA container toolkit (libcuda.so from the host driver). Python, torch and the training
# code also come from the base image (or from layers you add on top of this one).

# The runtime base (an ARG used in FROM must be declared before the first FROM).
ARG BASE_IMAGE=debian:12-slim

# ---- builder: Debian 12, the project's own dependency script, a cmake release build ----------
FROM debian:12 AS builder
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
# Only what the binary is built from (tests and benchmarks are off).
COPY CMakeLists.txt ./
COPY common common
COPY launcher launcher
COPY health health
COPY checkpoint checkpoint
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DTRAINVISOR_BENCH=OFF \
 && cmake --build /build --target trainvisor \
 && /build/trainvisor version
# The Debian packages that hold the shared libraries the binary links (spdlog, fmt, OpenSSL, ...),
# for the runtime stage to install by name.
RUN for lib in $(ldd /build/trainvisor | awk '/=> \// {print $3}'); do \
      dpkg -S "*/$(basename "$(dirname "$lib")")/$(basename "$lib")" | cut -d: -f1; \
    done | sort -u > /build/runtime-packages.txt \
 && cat /build/runtime-packages.txt

# ---- runtime: the training base image plus trainvisor as PID 1 ----------------------------------
FROM ${BASE_IMAGE}
COPY --from=builder /build/runtime-packages.txt /opt/trainvisor/runtime-packages.txt
RUN apt-get update -qq \
 && xargs -a /opt/trainvisor/runtime-packages.txt \
      env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
 && rm -rf /var/lib/apt/lists/*
COPY --from=builder /build/trainvisor /usr/local/bin/trainvisor
COPY examples /opt/trainvisor/examples
# trainvisor reaps orphans and forwards SIGTERM to the workers' process groups, then SIGKILLs
# them after --grace-period (default 25 s: under Kubernetes' 30 s); no tini needed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/trainvisor"]
CMD ["version"]
