// SCAFFOLD: replaced by the module's owner in this session.
#include <cstdio>

#include "common/exit_codes.h"
#include "launcher/commands.h"

namespace tv {
int probe_rank_command(const Args&, const Environment&) {
  std::fprintf(stderr, "trainvisor: probe_rank_command is not built yet\n");
  return exit_code::kUsage;
}
}  // namespace tv
