// `trainvisor version`: trainvisor's version and the versions of the libraries it finds: the CUDA
// driver, NCCL (the library search path's and torch's), libfabric and the NCCL net plugin.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/json_field.h"
#include "common/json_text.h"
#include "health/efa_check.h"
#include "health/gpu_check.h"
#include "health/isolated_query.h"
#include "health/nccl_locate.h"
#include "health/nccl_plugin.h"

#ifndef TRAINVISOR_VERSION
#error "TRAINVISOR_VERSION comes from CMake (project VERSION); see CMakeLists.txt"
#endif

namespace tv {
namespace {

// Every library is asked in a child (health/isolated_query.h): never loaded into trainvisor.
nlohmann::json nccl_entry(const Environment& env, const std::string& lib, const std::string& how) {
  auto r = isolated_load_nccl(env, lib);
  std::string error = r ? r->error : r.error().message;
  if (!error.empty()) return {{"found_by", how}, {"library", lib}, {"error", error}};
  return {{"found_by", how}, {"path", r->library_path}, {"version", r->version}};
}

nlohmann::json collect(const Environment& env) {
  nlohmann::json j;
  j["trainvisor"] = TRAINVISOR_VERSION;
  auto query = isolated_query_gpus(env);
  GpuInventory gpus = query ? *query : GpuInventory{};
  if (!query) gpus.error = query.error().message;
  j["cuda_driver"] = gpus.driver_loaded
                         ? nlohmann::json{{"version", cuda_version_string(gpus.driver_version)},
                                          {"path", gpus.driver_path},
                                          {"gpus", gpus.devices.size()}}
                         : nlohmann::json{{"error", gpus.error}};
  j["nccl"] = nlohmann::json::array({nccl_entry(env, "libnccl.so.2", "library search path")});
  const std::string py = env.get("PYTHON_EXEC").value_or("python3");
  if (auto torch = torch_nccl_path(py, env))
    j["nccl"].push_back(nccl_entry(env, *torch, "torch's (found by " + py + ")"));
  auto fab_query = isolated_query_libfabric(env, "efa");
  LibfabricInfo fab = fab_query ? *fab_query : LibfabricInfo{};
  if (!fab_query) fab.error = fab_query.error().message;
  j["libfabric"] = fab.loaded ? nlohmann::json{{"version", fab.version}, {"path", fab.path}}
                              : nlohmann::json{{"error", fab.error}};
  j["nccl_net_plugins"] = nlohmann::json::array();
  for (const auto& p : find_net_plugins(plugin_search_dirs(env)))
    j["nccl_net_plugins"].push_back({{"path", p.path}, {"aws_ofi_nccl", p.version}});
  return j;
}

std::string line_for(const nlohmann::json& e) {
  if (e.contains("error")) return "not found (" + json_field(e, "error", std::string("?")) + ")";
  return json_field(e, "version", std::string("?")) + "  " + json_field(e, "path", std::string());
}

}  // namespace

int version_command(const std::vector<std::string>& args, const Environment& env) {
  const bool json = !args.empty() && args[0] == "--json";
  const nlohmann::json j = collect(env);
  if (json) {
    std::printf("%s\n", json_text(j, 2).c_str());
    return exit_code::kOk;
  }
  std::printf("trainvisor %s\n", TRAINVISOR_VERSION);
  std::printf("cuda driver  %s\n", line_for(j["cuda_driver"]).c_str());
  for (const auto& n : j["nccl"])
    std::printf("nccl         %s  [%s]\n", line_for(n).c_str(),
                n["found_by"].get<std::string>().c_str());
  std::printf("libfabric    %s\n", line_for(j["libfabric"]).c_str());
  if (j["nccl_net_plugins"].empty()) std::printf("net plugin   none found\n");
  for (const auto& p : j["nccl_net_plugins"])
    std::printf("net plugin   %s  %s\n", p["path"].get<std::string>().c_str(),
                p["aws_ofi_nccl"].get<std::string>().c_str());
  return exit_code::kOk;
}

}  // namespace tv
