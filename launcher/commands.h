// The subcommands of the trainvisor binary. Each takes its arguments (after the command word)
// and the process environment, and returns the process exit code. main() only dispatches.
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"

namespace tv {

using Args = std::vector<std::string>;

int run_command(const Args& args, const Environment& env);         // launcher/run_command.cc
int topology_command(const Args& args, const Environment& env);    // launcher/topology_command.cc
int preflight_command(const Args& args, const Environment& env);   // health/preflight_command.cc
int version_command(const Args& args, const Environment& env);     // health/version_command.cc
int checkpoint_command(const Args& args, const Environment& env);  // checkpoint/checkpoint_command.cc
// Hidden: one NCCL probe rank, re-exec'd by the preflight (health/probe_rank_command.cc).
int probe_rank_command(const Args& args, const Environment& env);

}  // namespace tv
