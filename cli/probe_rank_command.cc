// `trainvisor __probe-rank`: one rank of the NCCL probe, which is health's (health/probe_rank.h).
#include "cli/commands.h"
#include "health/probe_rank.h"

namespace tv {

int probe_rank_command(const std::vector<std::string>&, const Environment& env) {
  return run_probe_rank(env);
}

}  // namespace tv
