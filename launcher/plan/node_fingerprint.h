// This node's fingerprint for the rendezvous (launcher/rendezvous/fingerprint.h;
// docs/coordination.md, "Node fingerprint"), from facts already gathered and from files: the
// torch child's answer (torch, its CUDA, the NCCL wheel beside it: health/torch_version.h), the
// kernel driver's /proc/driver/nvidia files (the driver version, each GPU's model), aws-ofi-nccl's
// version from its file's bytes (health/nccl_plugin.h), both read through `fs`, the environment
// and trainvisor's own version. No child is started and no vendor library is loaded: nothing is
// added to the start path but a few file reads.
#pragma once

#include <optional>
#include <string>

#include "common/environment.h"
#include "common/file_system.h"
#include "health/torch_version.h"
#include "launcher/rendezvous/fingerprint.h"

namespace tv {

rdzv::Fingerprint node_fingerprint(const Environment& env, const std::optional<TorchVersion>& torch,
                                   const FileSystem& fs, const std::string& version);

// "550.54.15" of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
// 550.54.15  Tue ...", or "... Open Kernel Module for x86_64  570.86.15 ..."); "" when absent.
std::string driver_version_in(const std::string& proc_version);
// The GPU models of /proc/driver/nvidia/gpus/*/information ("Model: \t NVIDIA H200"), distinct,
// in bus order, joined with ", "; "" when there is none.
std::string gpu_models(const FileSystem& fs);

}  // namespace tv
