#include "health/preflight.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "common/bounded_read.h"
#include "common/escape.h"
#include "common/json_field.h"
#include "common/parse_number.h"
#include "health/efa_check.h"
#include "health/gpu_check.h"
#include "health/isolated_query.h"
#include "health/nccl_locate.h"
#include "health/nccl_log.h"
#include "health/nccl_plugin.h"
#include "health/nccl_probe.h"
#include "health/subprocess.h"
#include "health/transport.h"

namespace tv {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kWarn:
      return "warn";
    case Outcome::kFail:
      return "fail";
    case Outcome::kSkip:
      return "skip";
  }
  return "?";
}

bool decide_passed(const std::vector<CheckResult>& checks) {
  return std::none_of(checks.begin(), checks.end(),
                      [](const CheckResult& c) { return c.outcome == Outcome::kFail; });
}

namespace {

std::string make_log_dir(const std::string& wanted) {
  if (!wanted.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(wanted, ec);
    return wanted;
  }
  char tmpl[] = "/tmp/trainvisor-preflight-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

constexpr std::size_t kMaxProbeBytes = std::size_t{16} << 30;

struct ProbeFigures {
  double busbw = -1;  // the slowest rank's
  bool all_ok = true;
  std::string first_error;
};

ProbeFigures figures(const std::vector<RankOutcome>& ranks) {
  ProbeFigures f;
  for (const auto& r : ranks) {
    const bool ok = json_field(r.result, "ok", false) && r.exit_code == 0;
    if (ok) {
      const double bw = json_field(r.result, "busbw_GBps", 0.0);
      f.busbw = f.busbw < 0 ? bw : std::min(f.busbw, bw);
      continue;
    }
    f.all_ok = false;
    if (!f.first_error.empty()) continue;
    if (r.timed_out)
      f.first_error = "rank " + std::to_string(r.rank) + " timed out and was killed";
    else if (r.result.is_object())
      f.first_error = "rank " + std::to_string(r.rank) + ": " +
                      json_field(r.result, "error", std::string("failed"));
    else
      f.first_error = "rank " + std::to_string(r.rank) + " exited " + std::to_string(r.exit_code) +
                      " without a result";
  }
  return f;
}

// A check whose child (the vendor-library query) hung, crashed or answered nothing.
CheckResult failed_query(const std::string& name, const Error& e) {
  return {name, Outcome::kFail, e.message, {{"error", e.message}}};
}

nlohmann::json ranks_json(const std::vector<RankOutcome>& ranks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : ranks)
    out.push_back({{"rank", r.rank},
                   {"exit_code", r.exit_code},
                   {"timed_out", r.timed_out},
                   {"result", r.result},
                   {"nccl_log", r.log_path}});
  return out;
}

UniqueIdResult group_library(const PreflightConfig& cfg, const std::string& library) {
  // The id is node 0's; this node only loads the library (in a child) for its path and version.
  auto loaded = isolated_load_nccl(cfg.env, library);
  UniqueIdResult r = loaded ? *loaded : UniqueIdResult{};
  if (!loaded) r.error = loaded.error().message;
  if (r.error.empty() && cfg.group->unique_id_hex.empty())
    r.error =
        "node 0 supplied no NCCL unique id (it has no GPU or could not load NCCL; see its log)";
  r.hex = cfg.group->unique_id_hex;
  return r;
}

void probe_checks(const PreflightConfig& cfg, int gpus, TransportRule required,
                  bool single_node_net, std::vector<CheckResult>& out) {
  const NcclLocation where = locate_worker_nccl(cfg.worker_command, cfg.env, cfg.nccl_lib);
  // Alone, this node makes the id: in a child that stays alive until the ranks are done.
  std::unique_ptr<NcclIdHost> host;
  if (!cfg.group) host = std::make_unique<NcclIdHost>(cfg.env, where.library);
  UniqueIdResult id = host ? host->result() : group_library(cfg, where.library);
  nlohmann::json details = {{"nccl_library", where.library}, {"found_by", where.how}};
  if (!id.error.empty()) {
    out.push_back(
        {"nccl-probe", Outcome::kFail, id.error + " (found by " + where.how + ")", details});
    return;
  }
  ProbeSpec spec;
  spec.self_exe = self_exe();
  spec.nccl_library = id.library_path.empty() ? where.library : id.library_path;
  spec.unique_id_hex = id.hex;
  spec.nranks = spec.local_ranks = gpus;
  if (cfg.group) {
    spec.first_rank = cfg.group->first_rank;
    spec.nranks = cfg.group->nranks;
  }
  spec.single_node_net = single_node_net;
  spec.log_dir = make_log_dir(cfg.log_dir);
  spec.env = cfg.env;
  if (auto b = cfg.env.get("TRAINVISOR_PROBE_BYTES")) {
    auto bytes = parse_integer<std::size_t>(*b, 4, kMaxProbeBytes);
    if (!bytes) {
      out.push_back({"nccl-probe", Outcome::kFail,
                     "TRAINVISOR_PROBE_BYTES=\"" + escape_control(*b) +
                         "\": expected an integer from 4 to " + std::to_string(kMaxProbeBytes),
                     details});
      return;
    }
    spec.bytes = *bytes;
  }
  const auto ranks = spawn_probe_ranks(spec);
  std::string logs;
  for (const auto& r : ranks) logs += read_output_file(r.log_path);  // unreadable: left out
  const NcclLogSummary summary = classify_nccl_log(logs);
  const ProbeFigures fig = figures(ranks);
  details.update({{"nccl_path", spec.nccl_library},
                  {"nccl_version", id.version},
                  {"log_dir", spec.log_dir},
                  {"single_node_net", single_node_net},
                  {"bytes", spec.bytes},
                  {"ranks", ranks_json(ranks)},
                  {"busbw_GBps", fig.busbw},
                  {"log", summary_to_json(summary)}});
  char bw[64];
  std::snprintf(bw, sizeof(bw), "%.1f GB/s", fig.busbw);
  std::string msg = "NCCL " + id.version + " (" + spec.nccl_library + ", " + where.how + "), " +
                    std::to_string(gpus) + " rank(s)" +
                    (cfg.group ? " of " + std::to_string(spec.nranks) : std::string()) + ", " +
                    std::to_string(spec.bytes >> 20) + " MiB all-reduce";
  if (fig.all_ok)
    out.push_back(
        {"nccl-probe", Outcome::kPass, msg + ": busbw " + bw + ", result checked", details});
  else
    out.push_back({"nccl-probe", Outcome::kFail,
                   msg + ": " + fig.first_error + " (NCCL logs in " + spec.log_dir + ")", details});
  TransportVerdict v = judge_transport(summary, required);
  out.push_back({"nccl-transport", v.outcome, v.message, summary_to_json(summary)});
  if (cfg.min_busbw > 0 && fig.all_ok) {
    char floor[160];
    std::snprintf(floor, sizeof(floor), "busbw %.1f GB/s against --min-busbw %.1f GB/s", fig.busbw,
                  cfg.min_busbw);
    out.push_back({"busbw",
                   fig.busbw >= cfg.min_busbw ? Outcome::kPass : Outcome::kFail,
                   floor,
                   {{"busbw_GBps", fig.busbw}, {"min_busbw_GBps", cfg.min_busbw}}});
  }
}

}  // namespace

PreflightReport run_preflight(const PreflightConfig& cfg) {
  const auto start = std::chrono::steady_clock::now();
  PreflightReport report;
  const RealFileSystem fs;
  const auto gpu_query = isolated_query_gpus(cfg.env);
  const GpuInventory gpus = gpu_query ? *gpu_query : GpuInventory{};
  report.checks.push_back(gpu_query ? gpu_check(gpus, cfg.expected_gpus)
                                    : failed_query("gpu", gpu_query.error()));
  const auto health_query = isolated_query_gpu_health(cfg.env);
  report.checks.push_back(health_query ? gpu_health_check(*health_query, !gpus.devices.empty())
                                       : failed_query("gpu-health", health_query.error()));
  const RdmaInventory rdma = find_rdma_devices(fs);
  const bool efa = !rdma.efa.empty();
  const int nnodes = cfg.single_node_net ? std::max(2, cfg.nnodes) : cfg.nnodes;
  const TransportDecision decision = decide_require_transport(
      cfg.require_transport, {nnodes, efa, cfg.instance_type, cfg.instance_type_origin});
  const TransportRule required = decision.resolved;
  report.checks.push_back(
      {"require-transport",
       Outcome::kPass,
       "--require-transport " + std::string(transport_word(cfg.require_transport)) + " -> " +
           transport_word(required) + (decision.reason.empty() ? "" : " (" + decision.reason + ")"),
       {{"requested", transport_word(cfg.require_transport)},
        {"resolved", transport_word(required)},
        {"decided_by", decision.reason},
        {"worker_env", transport_worker_env(required, cfg.env)}}});
  report.checks.push_back(efa_devices_check(rdma, required));
  const auto fabric = isolated_query_libfabric(cfg.env, cfg.fi_provider);
  report.checks.push_back(fabric ? libfabric_check(*fabric, efa, required)
                                 : failed_query("libfabric", fabric.error()));
  report.checks.push_back(
      nccl_plugin_check(find_net_plugins(plugin_search_dirs(cfg.env)), cfg.env, efa, required));
  const int ngpus = static_cast<int>(gpus.devices.size());
  const int ranks = cfg.expected_gpus > 0 ? std::min(cfg.expected_gpus, ngpus) : ngpus;
  if (cfg.level == PreflightLevel::kFull && ranks > 0) {
    // On one node the network is only exercised with P2P and SHM off.
    const bool net =
        cfg.single_node_net ||
        (cfg.nnodes <= 1 && (required == TransportRule::kEfa || required == TransportRule::kNet));
    probe_checks(cfg, ranks, required, net, report.checks);
  } else if (cfg.level == PreflightLevel::kFull) {
    report.checks.push_back(
        {"nccl-probe", Outcome::kSkip, "no GPU: the NCCL probe needs one", nullptr});
  }
  report.passed = decide_passed(report.checks);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::unique_ptr<NcclIdHost> make_probe_unique_id(const PreflightConfig& cfg) {
  const NcclLocation where = locate_worker_nccl(cfg.worker_command, cfg.env, cfg.nccl_lib);
  return std::make_unique<NcclIdHost>(cfg.env, where.library);
}

std::string preflight_summary(const PreflightReport& r, int node_rank) {
  const std::string node = "node " + std::to_string(node_rank) + ": ";
  for (const auto& c : r.checks) {
    if (c.outcome != Outcome::kFail) continue;
    // The list of usual causes stays in the node's own report (logged there once).
    std::string message = c.message;
    if (auto at = message.find(efa_fallback_causes()); at != std::string::npos)
      message.replace(at, efa_fallback_causes().size(),
                      "(usual causes: in node " + std::to_string(node_rank) + "'s log)");
    return node + c.name + ": " + message;
  }
  for (const auto& c : r.checks)
    if (c.name == "nccl-probe") return node + "passed (" + c.message + ")";
  return node + "passed";
}

nlohmann::json report_to_json(const PreflightReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks)
    checks.push_back({{"name", c.name},
                      {"outcome", outcome_name(c.outcome)},
                      {"message", c.message},
                      {"details", c.details}});
  return {{"passed", r.passed}, {"seconds", r.seconds}, {"checks", checks}};
}

std::string format_report(const PreflightReport& r) {
  size_t width = 5;
  for (const auto& c : r.checks) width = std::max(width, c.name.size());
  std::string out;
  char line[128];
  std::snprintf(line, sizeof(line), "%-*s  %-4s  %s\n", static_cast<int>(width), "CHECK", "",
                "RESULT");
  out += line;
  for (const auto& c : r.checks) {
    std::snprintf(line, sizeof(line), "%-*s  %-4s  ", static_cast<int>(width), c.name.c_str(),
                  outcome_name(c.outcome));
    out += line + c.message + "\n";
  }
  std::snprintf(line, sizeof(line), "preflight %s in %.1f s\n", r.passed ? "PASSED" : "FAILED",
                r.seconds);
  return out + line;
}

}  // namespace tv
