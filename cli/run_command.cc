// `trainvisor run [OPTIONS] -- CMD`: parses, asks plan_run (launcher/plan/run_plan.h) what the run
// will do, on this machine's facts, and wires the steps (launcher/run/run_steps.h) in their order:
// plan, limits, node rank, preflight, resume lookup, banner, work directory, cluster, Supervisor,
// export, report.
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <memory>

#include "checkpoint/resume.h"
#include "cli/commands.h"
#include "cli/run_options.h"
#include "cli/torchrun_options.h"
#include "common/exit_codes.h"
#include "common/file_system.h"
#include "common/init.h"
#include "common/log.h"
#include "launcher/node/work_dir.h"
#include "launcher/plan/run_plan.h"
#include "launcher/rendezvous/rdzv_descriptors.h"
#include "launcher/run/run_steps.h"
#include "launcher/topology/step_claim.h"

namespace tv {
namespace {

int refuse(const Error& e) {
  spdlog::error("{}", e.message);
  return e.exit_code();
}

void print_help() {
  std::printf(
      "usage: trainvisor run [OPTIONS] [--] CMD [ARGS...]\n"
      "  CMD ending in .py runs under python3 -u ($PYTHON_EXEC); -m MOD runs a module;\n"
      "  --no-python runs CMD as given. Every option can also be set as\n"
      "  TRAINVISOR_<OPTION> in the environment.\n\noptions:\n%s",
      format_help(run_option_specs(), true).c_str());
}

}  // namespace

int run_command(const Args& args, const Environment& env) {
  const LoopTimeClock clock;
  const double started_at = clock.now();
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    print_help();
    return exit_code::kOk;
  }
  Init& init = Init::instance();  // a signal before the supervisor runs ends the run (143 ...)
  init.set_phase("option parsing");
  auto opts = parse_options(run_option_specs(), args, env, ParseMode{true, true});
  if (!opts) return refuse(opts.error());
  if (auto s = apply_torchrun_options(*opts); !s) return refuse(s.error());
  const auto log_format = choice_of(*opts, "log-format", kLogFormatWords);
  if (!log_format) return refuse(log_format.error());
  if (*log_format == LogFormat::kJson) init_logging(LogFormat::kJson);
  if (auto s = change_to_workdir(*opts); !s) return refuse(s.error());
  if (auto s = resolve_sagemaker_train(*opts, env); !s) return refuse(s.error());
  init.set_phase("topology resolution");
  const std::string cwd = current_directory();
  const RealFileSystem fs;
  const RealGpuCounter gpus(env);
  const RealHostAddress host;
  auto plan = plan_run(*opts, env, real_plan_facts(fs, gpus, host, cwd));
  if (!plan) return refuse(plan.error());
  if (const std::string& why = plan->topology.not_training; !why.empty()) {
    // docs/platforms/sagemaker.md, "Heterogeneous clusters": SageMaker ends the job when every
    // container has exited, so this one leaves the training to the others at once.
    spdlog::info("not training on this node: {}: exit 0", why);
    return exit_code::kOk;
  }
  // Held to the end: a second trainvisor of this Slurm step on this node is refused (78).
  auto step_claim = claim_slurm_step(plan->topology, env);
  if (!step_claim) return refuse(step_claim.error());
  if (auto s = check_open_files(plan->topology.nproc_per_node); !s) return refuse(s.error());
  // Node 0 of a multi-node job: its descriptors for every node, decided before the rendezvous.
  if (const Topology& t = plan->topology;
      t.slots() > 1 && !t.rank_by_rendezvous && t.node_rank == 0)
    if (auto s = coordinator_descriptors_possible(t.slots(), t.nproc_per_node); !s)
      return refuse(s.error());
  if (auto v = opts->get("link-logs"); v && plan->ckpt_dir)
    if (auto s = link_logs(v->value, *plan->ckpt_dir); !s) spdlog::warn("{}", s.error().message);
  boost::asio::io_context io;
  // Made early by a rank the rendezvous assigns, or by a multi-node preflight (joins early).
  // The rendezvous cluster, once assign_node_rank or the multi-node preflight made it.
  std::unique_ptr<NetworkCluster> network;
  if (auto s = assign_node_rank(*plan, io, network); !s) return refuse(stop_over_lost(s.error()));
  resolve_gpu_peak(plan->observability, env);
  auto obs = Observability::make(io, plan->observability, clock, started_at);
  if (!obs) return refuse(obs.error());
  GoodputAccountant& goodput = (*obs)->accountant();
  plan->sup.observer = obs->get();
  // The job's poisoned checkpoints so far count against --resume-fallback (the ledger's marks).
  plan->policy.fallbacks_used = static_cast<int>((*obs)->poisoned().size());
  plan->sup.progress_step = [o = obs->get()] { return o->generation_step(); };
  if (plan->sup.stall) {
    plan->sup.stall->prior_longest_startup = (*obs)->prior_longest_startup();
    plan->sup.stall->prior_longest_save = (*obs)->prior_longest_save();
  }
  init.set_phase("preflight");
  goodput.enter(Phase::kPreflight);
  if (auto s = run_preflight_if_asked(*plan, env, io, network); !s) {
    const Error e = stop_over_lost(s.error());
    goodput.ending(e.exit_code());
    (*obs)->report();
    return refuse(e);
  }
  // The first lookup: a signal during it ends the run at once.
  const std::string resume = hook_resume(*plan, goodput, **obs, io);
  log_banner(banner_facts(*plan, env, resume));
  init.set_phase("start");
  goodput.enter(Phase::kRendezvous);
  WorkDir wd;  // error files and heartbeats need a directory: --log-dir, else a temporary one
  if (auto s = wd.open(opts->get("log-dir"), env, cwd); !s) return refuse(s.error());
  plan->sup.work_dir = wd.path();
  plan->sup.keep_logs = opts->has("log-dir");
  plan->sup.json_worker_lines = *log_format == LogFormat::kJson;
  plan->sup.first_attempt = wd.first_attempt();

  std::unique_ptr<Cluster> cluster = std::move(network);
  if (!cluster) cluster = make_cluster(io, *plan);
  InitSpawner spawner(io);
  Supervisor supervisor(io, plan->sup, *cluster, spawner);
  (*obs)->on_step([&supervisor](std::int64_t step) { supervisor.progress_seen(step); });
  auto watcher = watch_checkpoints(io, *plan, goodput, supervisor);
  int code = supervisor.run();  // signals are the supervisor's while it runs
  if (watcher) watcher->stop();
  if (code == exit_code::kOk) code = export_after_success(*plan, fs, cwd);
  init.set_phase("exit");
  (*obs)->report();
  return code;
}

}  // namespace tv
