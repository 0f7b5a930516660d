// What trainvisor knows about the EC2 instance types the seeds name (g5, g6, g6e, g7e, p4d, p4de,
// p5, p5e, p5en, p6): GPUs, GPU model, whether the GPUs have RT cores (Isaac Sim needs them), EFA
// interfaces, vCPUs and memory. One table (common/instance_facts.cc, sources in docs/render.md),
// used to fill defaults and to refuse impossible combinations. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tv {

struct InstanceFacts {
  std::string_view type;  // without "ml.", e.g. "p5.48xlarge"
  int gpus;
  std::string_view gpu;  // "H100", "L4", ...
  bool rt_cores;         // ray-tracing cores (RTX rendering: Isaac Sim, Omniverse)
  int efa;               // EFA interfaces (network cards with EFA)
  int vcpus;
  int memory_gib;
};

// `type` with or without the "ml." prefix; nullopt when the table does not have it.
std::optional<InstanceFacts> instance_facts(std::string_view type);

// "ml.p5.48xlarge" -> "p5.48xlarge"; a type without the prefix is returned as it is.
std::string_view without_ml_prefix(std::string_view type);

}  // namespace tv
