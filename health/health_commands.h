// The commands this module implements; launcher/commands.h includes this header (health/ does
// not include launcher headers). probe_rank_command is the hidden `__probe-rank`: one NCCL probe
// rank, re-exec'd by the preflight.
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"

namespace tv {
int preflight_command(const std::vector<std::string>& args, const Environment& env);
int version_command(const std::vector<std::string>& args, const Environment& env);
int probe_rank_command(const std::vector<std::string>& args, const Environment& env);
}  // namespace tv
