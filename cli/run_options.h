// The option table of `trainvisor run` (docs/options.md mirrors it). `topology` and `preflight`
// accept the same topology options, so every command resolves the same topology. The words of its
// enumerated options are launcher/plan/run_choices.h's tables, which plan_run reads through.
#pragma once

#include <vector>

#include "common/options.h"
#include "launcher/plan/run_choices.h"

namespace tv {

std::vector<OptionSpec> run_option_specs();

}  // namespace tv
