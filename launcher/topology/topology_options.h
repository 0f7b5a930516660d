// The options that decide the topology (platform, nnodes, ranks, master, resource config).
// `run`, `topology` and `preflight` accept the same ones, so every command resolves the same
// topology; `run` adds its own (cli/run_options.h).
#pragma once

#include <vector>

#include "common/options.h"

namespace tv {

std::vector<OptionSpec> topology_option_specs();

}  // namespace tv
