// The commands this module implements (declared in launcher/commands.h too, with the same
// signatures; health/ does not include launcher headers).
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"

namespace tv {
int preflight_command(const std::vector<std::string>& args, const Environment& env);
int version_command(const std::vector<std::string>& args, const Environment& env);
int probe_rank_command(const std::vector<std::string>& args, const Environment& env);
}  // namespace tv
