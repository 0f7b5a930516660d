#include "health/nccl_probe.h"

#include <sstream>

#include "common/bounded_read.h"
#include "health/nccl_api.h"
#include "health/subprocess.h"

namespace tv {

namespace {

UniqueIdResult load(const LibraryLoader& loader, const std::string& library, nccl::Api& api) {
  UniqueIdResult r;
  std::string why;
  api = nccl::load(loader, library, &why);
  if (!api.lib) {
    r.error = "cannot load NCCL " + library + ": " + why;
    return r;
  }
  r.library_path = api.lib->path();
  int code = 0;
  if (api.getVersion(&code) == nccl::kSuccess) r.version = nccl::version_string(code);
  return r;
}

}  // namespace

UniqueIdResult load_nccl(const LibraryLoader& loader, const std::string& library) {
  nccl::Api api;
  return load(loader, library, api);
}

UniqueIdResult make_unique_id(const LibraryLoader& loader, const std::string& library) {
  nccl::Api api;
  UniqueIdResult r = load(loader, library, api);
  if (!r.error.empty()) return r;
  nccl::UniqueId id{};
  if (nccl::Result rc = api.getUniqueId(&id); rc != nccl::kSuccess) {
    r.error = "ncclGetUniqueId failed: " + nccl::error_string(api, rc);
    return r;
  }
  r.hex = nccl::to_hex(id);
  return r;
}

std::vector<std::string> probe_rank_env(const ProbeSpec& spec, int local_rank) {
  Environment env = spec.env;
  const int rank = spec.first_rank + local_rank;
  env.set("TV_PROBE_RANK", std::to_string(rank));
  env.set("TV_PROBE_NRANKS", std::to_string(spec.nranks));
  env.set("TV_PROBE_DEVICE", std::to_string(local_rank));
  env.set("TV_PROBE_UNIQUE_ID", spec.unique_id_hex);
  env.set("TV_PROBE_NCCL_LIB", spec.nccl_library);
  env.set("TV_PROBE_BYTES", std::to_string(spec.bytes));
  env.set("TV_PROBE_TIMEOUT_S", std::to_string(spec.timeout_s));
  env.set("NCCL_DEBUG", "INFO");
  env.set("NCCL_DEBUG_SUBSYS", "INIT,NET");
  env.set("NCCL_DEBUG_FILE", spec.log_dir + "/nccl-rank" + std::to_string(rank) + ".log");
  if (spec.single_node_net) {
    env.set("NCCL_P2P_DISABLE", "1");
    env.set("NCCL_SHM_DISABLE", "1");
  }
  return env.to_envp();
}

namespace {

nlohmann::json read_result(const std::string& path) {
  auto text = read_regular_file(path, kConfigFileCap);
  if (!text) return nullptr;
  std::istringstream in(*text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{') last = line;
  if (last.empty()) return nullptr;
  return nlohmann::json::parse(last, nullptr, false);
}

}  // namespace

std::vector<RankOutcome> spawn_probe_ranks(const ProbeSpec& spec) {
  std::vector<pid_t> pids;
  std::vector<RankOutcome> out(spec.local_ranks);
  for (int i = 0; i < spec.local_ranks; ++i) {
    const int rank = spec.first_rank + i;
    const std::string base = spec.log_dir + "/probe-rank" + std::to_string(rank);
    out[i].rank = rank;
    out[i].log_path = spec.log_dir + "/nccl-rank" + std::to_string(rank) + ".log";
    std::string why;
    pid_t pid = spawn_process({{spec.self_exe, "__probe-rank"},
                               probe_rank_env(spec, i),
                               base + ".json",
                               base + ".stderr"},
                              &why);
    if (pid < 0) out[i].result = {{"ok", false}, {"error", why}};
    pids.push_back(pid);
  }
  std::vector<pid_t> live;
  for (pid_t p : pids)
    if (p > 0) live.push_back(p);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(spec.timeout_s + 30);
  auto statuses = wait_all(live, deadline);
  for (size_t i = 0, j = 0; i < pids.size(); ++i) {
    if (pids[i] <= 0) continue;
    out[i].exit_code = statuses[j].code;
    out[i].timed_out = statuses[j].timed_out;
    ++j;
    out[i].result =
        read_result(spec.log_dir + "/probe-rank" + std::to_string(out[i].rank) + ".json");
  }
  return out;
}

}  // namespace tv
