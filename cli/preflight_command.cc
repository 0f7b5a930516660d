// `trainvisor preflight`: the health checks alone (exit 0 pass, 69 fail), or `--nccl-log FILE`
// to judge an existing NCCL log.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/option_tables.h"
#include "common/bounded_read.h"
#include "common/escape.h"
#include "common/exit_codes.h"
#include "common/init.h"
#include "common/json_text.h"
#include "common/options.h"
#include "common/parse_number.h"
#include "health/gpu_check.h"
#include "health/nccl_log.h"
#include "health/preflight.h"
#include "health/transport.h"
#include "launcher/topology/gpu_count.h"
#include "launcher/topology/topology.h"
#include "launcher/topology/topology_options.h"

namespace tv {

namespace {
// `preflight --level`: run's --preflight words but none (a preflight that checks nothing).
constexpr Choice<PreflightLevel> kLevelWords[] = {{"auto", PreflightLevel::kAuto},
                                                  {"basic", PreflightLevel::kBasic},
                                                  {"full", PreflightLevel::kFull}};
}  // namespace

// The topology options are run's (launcher/topology/topology_options.cc): the same facts give
// the same verdict (--require-transport auto, --level auto, the GPUs expected).
std::vector<OptionSpec> preflight_option_specs() {
  using T = OptionType;
  std::vector<OptionSpec> specs = topology_option_specs();
  for (OptionSpec& s : specs)
    if (s.name == "nproc-per-node") s.help = "GPUs expected on this node (auto: the visible ones)";
  std::vector<OptionSpec> own = {
      {.name = "json", .type = T::kFlag, .help = "print the report as JSON"},
      {.name = "require-transport",
       .type = T::kChoice,
       .help = "the inter-node transport required",
       .default_value = "auto",
       .words = words_of(kTransportWords)},
      {.name = "min-busbw",
       .type = T::kNumber,
       .help = "fail below this NCCL bus bandwidth, GB/s",
       .default_value = "0",
       .max = 100000},
      {.name = "nccl-lib",
       .help = "probe this libnccl instead of the workers' one",
       .metavar = "PATH"},
      {.name = "single-node-net",
       .type = T::kFlag,
       .help = "disable NCCL P2P and SHM so the GPUs talk through the network"},
      {.name = "nccl-log",
       .help = "judge this NCCL log instead of running checks",
       .metavar = "PATH"},
      {.name = "level",
       .type = T::kChoice,
       .help = "which checks; auto: full when the job has more than one node and EFA devices are "
               "present, else basic (as run --preflight auto)",
       .default_value = "auto",
       .words = words_of(kLevelWords)},
      {.name = "log-dir",
       .help = "where the probe's per-rank NCCL logs go (default: a temp dir)",
       .metavar = "DIR"},
      {.name = "fi-provider",
       .help = "libfabric provider the libfabric check asks for",
       .default_value = "efa",
       .metavar = "NAME"},
      {.name = "help", .type = T::kFlag, .help = "this text", .short_name = "h"},
  };
  specs.insert(specs.end(), own.begin(), own.end());
  return specs;
}

namespace {

int fail_usage(const Error& e) {
  spdlog::error("{}", e.message);  // escaped by the logger
  return e.exit_code();
}

int judge_log(const Options& opts, TransportRule required_opt) {
  const std::string path = opts.get("nccl-log")->value;
  long nnodes_opt = 1;
  if (auto v = opts.get("nnodes")) {
    auto n = parse_integer<long>(v->value, 1, kMaxNodes);
    if (!n)
      return fail_usage({ErrorKind::kConfig, v->origin + "=\"" + v->value +
                                                 "\": expected an integer from 1 to " +
                                                 std::to_string(kMaxNodes)});
    nnodes_opt = *n;
  }
  auto text = read_regular_file(path, kLogFileCap);
  if (!text) {
    spdlog::error("--nccl-log {}", text.error().message);
    return exit_code_of(ErrorKind::kConfig);
  }
  const NcclLogSummary s = classify_nccl_log(*text);
  const int nnodes = std::max(s.nnodes.value_or(1), static_cast<int>(nnodes_opt));
  const bool efa = efa_devices_present() || (s.provider && s.provider->rfind("efa", 0) == 0);
  const TransportRule required =
      decide_require_transport(required_opt,
                               {nnodes, efa, opts.value_or("instance-type", ""), "--instance-type"})
          .resolved;
  const TransportVerdict v = judge_transport(s, required);
  const bool passed = v.outcome != Outcome::kFail;
  if (opts.flag("json")) {
    nlohmann::json j = summary_to_json(s);
    j.update({{"file", path},
              {"require_transport", transport_word(required)},
              {"outcome", outcome_name(v.outcome)},
              {"message", v.message},
              {"passed", passed}});
    std::printf("%s\n", json_text(j, 2).c_str());
  } else {
    std::printf("%s: transport %s (%s)\n%s\n", path.c_str(), s.transport.c_str(),
                outcome_name(v.outcome), v.message.c_str());
  }
  return passed ? exit_code::kOk : exit_code_of(ErrorKind::kPreflightFailed);
}

Result<PreflightConfig> make_config(const Options& opts, const Environment& env,
                                    TransportRule required) {
  PreflightConfig cfg;
  cfg.env = env;
  cfg.require_transport = required;
  const RealFileSystem fs;
  const RealGpuCounter counter(env);
  auto topo = resolve_topology(opts, env, fs, counter, RealHostAddress());
  if (!topo) return topo.error();
  cfg.nnodes = topo->nnodes;
  cfg.instance_type = topo->instance_type;
  cfg.instance_type_origin = topo->origin_of("instance_type");
  auto bw = opts.get_double("min-busbw");
  if (!bw) return bw.error();
  cfg.min_busbw = *bw;
  // `run`'s rule (health/preflight.h): its workers, and on a node with no GPU device its `auto`
  // is one worker; the count is checked only where the node has NVIDIA GPUs.
  const int visible = counter.count();
  int workers = visible > 0 ? -1 : 1;
  if (auto n = opts.get("nproc-per-node"); n && n->value != "auto" && n->value != "gpu")
    workers = topo->nproc_per_node;
  cfg.expected_gpus = resolve_expected_gpus(workers, visible, nvidia_gpu_functions(fs));
  if (auto lib = opts.get("nccl-lib")) cfg.nccl_lib = lib->value;
  cfg.single_node_net = opts.flag("single-node-net");
  cfg.log_dir = opts.value_or("log-dir", "");
  cfg.fi_provider = opts.text("fi-provider");
  // Standalone there is no worker command: probe the NCCL that python's torch would load, and
  // fall back to the library search path when that python has none.
  cfg.worker_command = {env.get("PYTHON_EXEC").value_or("python3")};
  auto level = choice_of(opts, "level", kLevelWords);
  if (!level) return level.error();
  cfg.level = resolve_preflight_level(*level, cfg.nnodes, efa_devices_present());
  return cfg;
}

}  // namespace

int preflight_command(const std::vector<std::string>& args, const Environment& env) {
  Init::instance().set_phase("preflight");  // a signal: its queries killed, exit 128+N
  auto opts = parse_options(preflight_option_specs(), args, env, ParseMode{false, true});
  if (!opts) return fail_usage(opts.error());
  if (opts->flag("help")) {
    std::printf("usage: trainvisor preflight [OPTIONS]\n\n%s",
                format_help(preflight_option_specs(), true).c_str());
    return exit_code::kOk;
  }
  if (!opts->positional.empty())
    return fail_usage({ErrorKind::kUsage, "unexpected argument '" + opts->positional[0] + "'"});
  auto required = choice_of(*opts, "require-transport", kTransportWords);
  if (!required) return fail_usage(required.error());
  if (opts->has("nccl-log")) return judge_log(*opts, *required);
  auto cfg = make_config(*opts, env, *required);
  if (!cfg) return fail_usage(cfg.error());
  const PreflightReport report = run_preflight(*cfg);
  if (opts->flag("json"))
    std::printf("%s\n", json_text(report_to_json(report), 2).c_str());
  else
    std::printf("%s", format_report(report).c_str());
  return report.passed ? exit_code::kOk : exit_code_of(ErrorKind::kPreflightFailed);
}

}  // namespace tv
