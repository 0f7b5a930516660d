// One rank of the NCCL probe, the body of `trainvisor __probe-rank` (see health/nccl_probe.h for
// the environment it reads: TV_PROBE_RANK, TV_PROBE_NRANKS, TV_PROBE_DEVICE, TV_PROBE_BYTES,
// TV_PROBE_TIMEOUT_S, TV_PROBE_NCCL_LIB, TV_PROBE_UNIQUE_ID). It runs in a child of the preflight,
// never in PID 1: it loads the CUDA driver API and the given libnccl (both dlopen'd). Prints one
// JSON line on stdout; returns 0 when the all-reduce ran and its result was right, 1 otherwise,
// 64 when the variables are missing or out of range.
#pragma once

#include "common/environment.h"

namespace tv {

int run_probe_rank(const Environment& env);

}  // namespace tv
