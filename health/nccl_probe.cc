#include "health/nccl_probe.h"

#include <sstream>

#include "common/bounded_read.h"
#include "common/json_parse.h"
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

Environment probe_rank_env(const ProbeSpec& spec, int local_rank) {
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
  return env;
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
  return parse_json_or_discarded(last);
}

}  // namespace

std::vector<RankOutcome> spawn_probe_ranks(const ProbeSpec& spec) {
  ChildGroup group;
  std::vector<RankOutcome> out(spec.local_ranks);
  std::vector<size_t> started;  // indices into `out` of the ranks that started
  for (int i = 0; i < spec.local_ranks; ++i) {
    const int rank = spec.first_rank + i;
    const std::string base = spec.log_dir + "/probe-rank" + std::to_string(rank);
    out[i].rank = rank;
    out[i].log_path = spec.log_dir + "/nccl-rank" + std::to_string(rank) + ".log";
    auto pid = spawn_to_files(group, {spec.self_exe, "__probe-rank"}, probe_rank_env(spec, i),
                              base + ".json", base + ".stderr");
    if (!pid)
      out[i].result = {{"ok", false}, {"error", pid.error().message}};
    else
      started.push_back(static_cast<size_t>(i));
  }
  const auto deadline = ChildGroup::Clock::now() + std::chrono::seconds(spec.timeout_s + 30);
  const auto ends = group.wait_all(deadline);
  for (size_t j = 0; j < started.size(); ++j) {
    RankOutcome& r = out[started[j]];
    r.exit_code = ends[j].code;
    r.timed_out = ends[j].timed_out;
    r.result = read_result(spec.log_dir + "/probe-rank" + std::to_string(r.rank) + ".json");
  }
  return out;
}

}  // namespace tv
