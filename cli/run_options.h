// The option table of `trainvisor run` (docs/options.md mirrors it). `topology` and `preflight`
// accept the same topology options, so every command resolves the same topology.
#pragma once

#include <vector>

#include "common/options.h"
#include "launcher/topology/topology_options.h"

namespace tv {

std::vector<OptionSpec> run_option_specs();

}  // namespace tv
