// SCAFFOLD: replaced by the module's owner in this session.
#include <cstdio>

#include "common/exit_codes.h"
#include "launcher/commands.h"

namespace tv {
int topology_command(const Args&, const Environment&) {
  std::fprintf(stderr, "trainvisor: topology_command is not built yet\n");
  return exit_code::kUsage;
}
}  // namespace tv
