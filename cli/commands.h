// The subcommands of the trainvisor binary. Each takes its arguments (after the command word)
// and the process environment, and returns the process exit code. main() only dispatches.
// Every command lives in cli/; the library folders expose functions and types only.
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"

namespace tv {

using Args = std::vector<std::string>;

int run_command(const Args& args, const Environment& env);         // cli/run_command.cc
int topology_command(const Args& args, const Environment& env);    // cli/topology_command.cc
int checkpoint_command(const Args& args, const Environment& env);  // cli/checkpoint_command.cc
int preflight_command(const Args& args, const Environment& env);   // cli/preflight_command.cc
int render_command(const Args& args, const Environment& env);      // cli/render_command.cc
int version_command(const Args& args, const Environment& env);     // cli/version_command.cc
int stacks_command(const Args& args, const Environment& env);      // cli/stacks_command.cc
int report_command(const Args& args, const Environment& env);      // cli/report_command.cc
// The hidden `__probe-rank`: one NCCL probe rank, re-exec'd by the preflight.
int probe_rank_command(const Args& args, const Environment& env);  // cli/probe_rank_command.cc
// The hidden `__query`: loads one vendor library in a child of trainvisor and prints what it
// found (health/isolated_query.h); PID 1 never loads one itself.
int query_command(const Args& args, const Environment& env);  // cli/query_command.cc
// The hidden `__options-doc`: docs/options.md from the option tables (cli/option_tables.h).
int options_doc_command(const Args& args, const Environment& env);  // cli/options_doc_command.cc

}  // namespace tv
