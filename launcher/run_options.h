// The option table of `trainvisor run` (docs/options.md mirrors it). `topology` and `preflight`
// accept the same topology options, so every command resolves the same topology.
#pragma once

#include <vector>

#include "common/options.h"

namespace tv {

std::vector<OptionSpec> run_option_specs();
// The subset that decides the topology (platform, nnodes, ranks, master, resource config).
std::vector<OptionSpec> topology_option_specs();

}  // namespace tv
