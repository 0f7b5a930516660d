// Vendor libraries (libcuda, libnccl, libfabric) are loaded only in child processes, never in
// trainvisor itself: PID 1 must answer signals at every moment, and those libraries bring their
// own threads, locks and signal handlers (libfabric's psm provider loads libinfinipath, which
// installs SIGTERM/SIGINT handlers that call exit(1) and can deadlock).
//
// Each query re-executes trainvisor as the hidden `trainvisor __query KIND [ARG]`, which loads the
// library, prints one JSON line and exits. The parent waits for it until a deadline
// (TRAINVISOR_CHECK_TIMEOUT seconds, default 60); a child that hangs is killed and the query
// fails with a message saying so, as does one that crashes or answers nothing.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/children.h"
#include "common/environment.h"
#include "common/result.h"
#include "health/efa_check.h"
#include "health/gpu_check.h"
#include "health/gpu_watch.h"
#include "health/nccl_probe.h"

namespace tv {

// The deadline of one query: TRAINVISOR_CHECK_TIMEOUT (whole seconds, 1..3600), default 60.
std::chrono::seconds query_timeout(const Environment& env);

// The CUDA driver and its GPUs, asked in a child. Error: the child hung (killed), crashed or
// answered nothing; its message says which.
Result<GpuInventory> isolated_query_gpus(const Environment& env);
// fi_getinfo for `provider`, asked in a child.
Result<LibfabricInfo> isolated_query_libfabric(const Environment& env, const std::string& provider);
// NVML's reading of every visible GPU (health/gpu_watch.h), asked in a child.
Result<GpuHealthSnapshot> isolated_query_gpu_health(const Environment& env);
// The same child for a caller that runs it on its own event loop (the start banner's query beside
// the workers: launcher/workers/side_query.h): its command line, and its answer read from
// its output and exit code (timed_out: killed at query_timeout(env)).
std::vector<std::string> gpu_health_query_argv();
Result<GpuHealthSnapshot> gpu_health_answer(const std::string& output, int exit_code,
                                            bool timed_out, const Environment& env);
// Loads `library` in a child: its path and version (hex stays empty), or the load error.
Result<UniqueIdResult> isolated_load_nccl(const Environment& env, const std::string& library);

// A child that called ncclGetUniqueId and stays alive, because NCCL's bootstrap root runs in the
// process that made the id and must live until every rank initialized. Killed on destruction.
class NcclIdHost {
 public:
  NcclIdHost(const Environment& env, const std::string& library);
  // The id (hex), the library's path and version; error set when the child failed or hung.
  const UniqueIdResult& result() const { return result_; }

 private:
  ChildGroup group_;
  UniqueIdResult result_;
};

// The child side, `trainvisor __query KIND [ARG]`: gpu | gpu-health | libfabric PROVIDER | nccl
// LIBRARY | nccl-unique-id LIBRARY | gpu-watch SECONDS. Prints one JSON line on stdout; exit 0, or
// 64 for unknown arguments. nccl-unique-id then waits (pause) until it is killed; gpu-watch prints
// a line per event until it is killed (health/gpu_watch.h).
int vendor_query_main(const std::vector<std::string>& args, const Environment& env);

// The trainvisor binary (/proc/self/exe), for re-executing it.
std::string self_exe();

// JSON forms of the answers (also used by the tests).
void to_json(nlohmann::json& j, const GpuDevice& d);
void from_json(const nlohmann::json& j, GpuDevice& d);
void to_json(nlohmann::json& j, const GpuInventory& g);
void from_json(const nlohmann::json& j, GpuInventory& g);
void to_json(nlohmann::json& j, const LibfabricInfo& i);
void from_json(const nlohmann::json& j, LibfabricInfo& i);
void to_json(nlohmann::json& j, const UniqueIdResult& u);
void from_json(const nlohmann::json& j, UniqueIdResult& u);

}  // namespace tv
