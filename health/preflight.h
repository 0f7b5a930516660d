// The health preflight: GPU, EFA/libfabric and NCCL checks run before the first start of the
// workers (`run --preflight`) or alone (`trainvisor preflight`).
//
// Each check returns a CheckResult (name, outcome, message for a person, details for machines);
// one place (decide_passed in preflight.cc) decides whether the report passes: it passes when no
// check failed. Warnings and skips never fail a report.
//
// run_preflight() is single-node: the NCCL probe starts one `trainvisor __probe-rank` process per
// local GPU and hands them an ncclUniqueId made by this process (see health/nccl_probe.h for the
// seam the multi-node probe will use). It blocks until every check finished or timed out, spawns
// and waits for its own children only (waitpid on their pids), and must therefore run before a
// reaper that calls waitpid(-1) is started. Not thread-safe: call it from one thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"

namespace tv {

struct PreflightConfig {
  std::string level = "basic";  // basic | full
  int expected_gpus = -1;       // -1: don't check
  int nnodes = 1;
  std::string require_transport =
      "auto";            // auto|efa|net|any, resolved inside with nnodes + EFA presence
  double min_busbw = 0;  // GB/s, nccl-tests' bus bandwidth; 0: no floor
  std::optional<std::string> nccl_lib;  // --nccl-lib: the libnccl to probe instead of the workers'
  bool single_node_net = false;         // NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 for the probe
  std::vector<std::string>
      worker_command;  // the workers' argv (to find torch's libnccl when it is python)
  Environment env;
  std::string log_dir;              // where per-rank NCCL logs go ("" = a temp dir)
  std::string fi_provider = "efa";  // the libfabric provider the libfabric check asks for
};

enum class Outcome { kPass, kWarn, kFail, kSkip };

struct CheckResult {
  std::string name;
  Outcome outcome;
  std::string message;
  nlohmann::json details;
};

struct PreflightReport {
  std::vector<CheckResult> checks;
  bool passed = false;
  double seconds = 0;
};

PreflightReport run_preflight(const PreflightConfig&);  // single node; multi-node probe comes later
std::string format_report(const PreflightReport&);      // the human table
nlohmann::json report_to_json(const PreflightReport&);

// Extra worker environment implied by the transport requirement (e.g. NCCL_NET when efa is
// required and NCCL_NET is unset).
std::map<std::string, std::string> transport_worker_env(
    const std::string& resolved_require_transport, const Environment& env);
// "auto" -> "efa" when nnodes > 1 and EFA devices are present, else "any"; others unchanged.
std::string resolve_require_transport(const std::string& requested, int nnodes,
                                      bool efa_devices_present);
bool efa_devices_present();  // sysfs: /sys/class/infiniband/* with driver efa

// Helpers shared by the commands.
const char* outcome_name(Outcome o);  // "pass" | "warn" | "fail" | "skip"
bool decide_passed(const std::vector<CheckResult>& checks);

}  // namespace tv
