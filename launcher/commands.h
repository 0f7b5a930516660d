// The subcommands of the trainvisor binary. Each takes its arguments (after the command word)
// and the process environment, and returns the process exit code. main() only dispatches.
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"
#include "health/health_commands.h"  // preflight, version, __probe-rank

namespace tv {

using Args = std::vector<std::string>;

int run_command(const Args& args, const Environment& env);         // launcher/run_command.cc
int topology_command(const Args& args, const Environment& env);    // launcher/topology_command.cc
int checkpoint_command(const Args& args, const Environment& env);  // checkpoint/checkpoint_command.cc

}  // namespace tv
