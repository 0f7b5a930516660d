#include "launcher/plan/run_plan.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "common/exit_codes.h"
#include "health/efa_check.h"
#include "health/nccl_locate.h"
#include "health/preflight.h"
#include "launcher/node/model_export.h"
#include "launcher/plan/master_port.h"
#include "launcher/plan/node_fingerprint.h"
#include "launcher/plan/run_choices.h"
#include "launcher/plan/run_rules.h"
#include "launcher/workers/standby.h"

namespace tv {

using std::chrono::milliseconds;

// A duration in seconds, bounded by its row (a week or less: cli/run_options.cc): a bounded value
// never wraps when it becomes milliseconds or a deadline.
Result<milliseconds> seconds_option(const Options& o, const std::string& name) {
  auto v = o.get_double(name);
  if (!v) return v.error();
  return milliseconds(static_cast<long>(*v * 1000));
}

// Every path a worker is given is absolute: a worker that changes directory (Hydra does) still
// finds its error file, heartbeat and checkpoints. The current directory is trainvisor's
// (PlanFacts::cwd), which never changes. As std::filesystem::absolute was: "" stays "" (its
// invalid argument), and a relative path stays as given when the directory is unknown.
namespace {

std::string job_run_id(const Options& o, const Topology& t) {
  if (auto v = o.get("run-id")) return v->value;
  return t.job_id.empty() ? "none" : t.job_id;
}

// Which job a ledger is (docs/observability.md, "Which job"): the platform's job identity when it
// gives one, else the run id. A fixed --rdzv_id on a launcher line never makes a new platform
// job continue an old one's ledger.
std::string ledger_job_id(const Options& o, const Topology& t) {
  auto id = o.get("rdzv-id");
  const bool from_rdzv_id = id && t.origin.count("job_id") && t.origin.at("job_id") == id->origin;
  return !t.job_id.empty() && !from_rdzv_id ? t.job_id : job_run_id(o, t);
}

// The OTLP push's variables (docs/observability.md, "OTLP push"): a bad one is one warning, never
// a refusal (the OpenTelemetry specification's rule for an SDK's settings).
// --otlp-endpoint is trainvisor's own option: a bad one is refused (78).
Result<std::optional<OtlpConfig>> read_otlp_setup(const Options& o, const Environment& env) {
  auto setup = read_otlp_config(env, o.get("otlp-endpoint"));
  if (!setup.refused.empty()) return Error{ErrorKind::kConfig, setup.refused};
  for (const auto& w : setup.warnings) spdlog::warn("{}", w);
  return setup.config;
}

std::optional<std::string> checkpoint_dir(const Options& o, const PlanFacts& facts) {
  auto v = o.get("checkpoint-dir");
  return checkpoint_dir_rule(v ? std::optional(absolute_path(v->value, facts.cwd)) : std::nullopt,
                             facts.fs);
}

// The torch the workers import (a child of their python: PlanFacts::workers_python), which
// decides the version-dependent variables of their environment, and whether a `-m MOD` is there;
// an empty answer when the command is not python.
WorkersPython query_workers_python(const Options& o, const std::vector<std::string>& argv,
                                   const Interpreter& py, const Environment& env,
                                   const PlanFacts& facts) {
  const bool python_form = !o.flag("no-python") && argv.front() == py.path;
  const auto python = python_form ? std::optional(py.path) : worker_python(argv, env);
  if (!python) return {};
  const std::string module = python_form && o.flag("module") ? o.positional.front() : "";
  auto v = facts.workers_python(*python, env, module);
  if (!v.torch)
    spdlog::info(
        "torch: {} has no torch that could be read (workers get both "
        "NCCL_ASYNC_ERROR_HANDLING names)",
        *python);
  return v;
}

// `-m MOD` whose top-level package the workers' python cannot find: python would print "No module
// named MOD" and exit 1 in every worker of every generation, so nothing starts (as for a missing
// script: check_python_script).
Status check_python_module(const Options& o, const WorkersPython& answer, const Interpreter& py) {
  if (answer.module_found.value_or(true)) return ok_status();
  return Error{ErrorKind::kNotFound,
               o.positional.front() + ": no such module: " + py.path +
                   " cannot find it (importlib.util.find_spec): expected the module to run "
                   "with -m (nothing started)"};
}

// Stores a parsed option in `out`, or passes its error on.
template <class T, class U>
Status assign(Result<T> parsed, U& out) {
  if (!parsed) return parsed.error();
  out = static_cast<U>(*parsed);
  return ok_status();
}

// --grace-period, else a few seconds under the platform's stop window (common/stop_window.h).
Result<milliseconds> grace_period(const Options& o, const Environment& env, const Topology& t) {
  std::optional<milliseconds> given;
  if (o.has("grace-period")) {
    auto g = seconds_option(o, "grace-period");
    if (!g) return g.error();
    given = *g;
  }
  return grace_rule(given, t.platform, env.has("KUBERNETES_SERVICE_HOST"));
}

// --hang-timeout S (silence), or auto (the progress rules, with --startup-timeout and
// --stall-floor); the start-up deadline learned from the ledger is filled in by run itself.
Status read_hang_rules(const Options& o, RunPlan& p) {
  if (o.text("hang-timeout") != "auto") {
    if (auto v = o.get("startup-timeout"))
      return Error{ErrorKind::kUsage, v->origin + " is only used with --hang-timeout auto"};
    return assign(seconds_option(o, "hang-timeout"), p.sup.hang_timeout);
  }
  StallRules rules;
  auto floor = o.get_double("stall-floor");
  if (!floor) return floor.error();
  rules.floor = *floor;
  if (o.get("startup-timeout")) {
    auto s = o.get_double("startup-timeout");
    if (!s) return s.error();
    rules.startup_timeout = *s;
  }
  p.sup.stall = rules;
  return ok_status();
}

Status read_timing(const Options& o, const Environment& env, RunPlan& p) {
  for (const Status& s : {assign(o.get_int("max-restarts"), p.policy.max_restarts),
                          assign(grace_period(o, env, p.topology), p.sup.grace),
                          assign(seconds_option(o, "rdzv-timeout"), p.rdzv_timeout),
                          assign(seconds_option(o, "peer-timeout"), p.peer_timeout),
                          assign(seconds_option(o, "rdzv-last-call"), p.rdzv_last_call)})
    if (!s) return s;
  if (auto s = read_hang_rules(o, p); !s) return s;
  if (auto s = assign(choice_of(o, "hang-stacks", kHangStacksWords), p.sup.stacks); !s) return s;
  if (auto s = assign(choice_of(o, "retry-policy", kRetryPolicyWords), p.policy.retry); !s)
    return s;
  if (auto s = assign(o.get_int("resume-fallback"), p.policy.resume_fallback); !s) return s;
  if (auto v = o.get("save-signal")) {
    auto sig = save_signal_number(v->value);
    if (!sig) return sig.error();
    p.sup.save_signal = *sig;
  }
  return ok_status();
}

// --gpu-health: the watch child's request (`trainvisor __query gpu-watch SECONDS`); its
// environment is the workers' base (CUDA_VISIBLE_DEVICES says which GPUs are the job's), set in
// plan_run.
Status read_gpu_health(const Options& o, const PlanFacts& facts, RunPlan& p) {
  auto mode = choice_of(o, "gpu-health", kGpuHealthWords);
  if (!mode) return mode.error();
  auto interval = o.get_double("gpu-health-interval");
  if (!interval) return interval.error();
  if (*mode == GpuHealthMode::kOff) return ok_status();
  const std::string exe = facts.self_exe();
  p.sup.gpu_health = SpawnRequest{
      exe, {exe, "__query", "gpu-watch", fmt::format("{}", *interval)}, p.sup.base_env};
  // Slurm's step-wide SIGUSR1 (a warning before the time limit) reaches the watch too; its
  // default action would end it. Stop signals: cli/query_command.cc.
  p.sup.gpu_health->ignore_user_signals = true;
  p.sup.gpu_health_required = *mode == GpuHealthMode::kOn;
  return ok_status();
}

Status read_health_and_checkpoints(const Options& o, const PlanFacts& facts,
                                   const std::vector<std::string>& argv, RunPlan& p) {
  const FileSystem& fs = facts.fs;
  if (auto s = read_gpu_health(o, facts, p); !s) return s;
  auto pf = choice_of(o, "preflight", kPreflightWords);
  if (!pf) return pf.error();
  auto rt = choice_of(o, "require-transport", kTransportWords);
  if (!rt) return rt.error();
  auto bw = o.get_double("min-busbw");
  if (!bw) return bw.error();
  p.preflight = *pf;
  p.require_transport = *rt;
  p.min_busbw = *bw;
  p.ckpt_dir = checkpoint_dir(o, facts);
  if (p.ckpt_dir && !fs.is_directory(*p.ckpt_dir))
    spdlog::warn(
        "--checkpoint-dir {}: no such directory on this node: nothing to resume from until the "
        "workers create it (a rendered Slurm job passes /opt/ml/checkpoints unless checkpoint_dir "
        "names a shared directory)",
        *p.ckpt_dir);
  p.ckpt_format = o.text("checkpoint-format");
  if (auto s = validate_checkpoint_format(p.ckpt_format); !s) return s;
  auto mode = choice_of(o, "resume", kResumeWords);
  if (!mode) return mode.error();
  const auto experiment = o.get("checkpoint-experiment");
  p.resume = resume_rule({p.ckpt_dir, p.ckpt_format, *mode, argv,
                          experiment ? std::optional(experiment->value) : std::nullopt});
  if (auto v = o.get("resume-arg")) {
    if (auto ok = validate_resume_arg(v->value); !ok) return ok;
    p.resume_arg = v->value;
  }
  if (p.sup.save_signal != 0 && !p.ckpt_dir)
    return Error{ErrorKind::kConfig,
                 "--save-signal needs --checkpoint-dir: the save is confirmed when the checkpoint "
                 "watcher sees it there"};
  return ok_status();
}

// --export's target: --export-dir, else SageMaker's SM_MODEL_DIR, else /opt/ml/model where
// SageMaker's resource config is (a bring-your-own-container job has no SM_* variables).
Status read_export(const Options& o, const Environment& env, const PlanFacts& facts, RunPlan& p) {
  auto what = o.get("export");
  if (!what) return ok_status();
  p.export_what = what->value;
  const auto dir = o.get("export-dir");
  auto target = export_dir_rule(
      {*what, dir ? std::optional(dir->value) : std::nullopt, o.text("resource-config")}, env,
      facts.fs);
  if (!target) return target.error();
  p.export_dir = *target;
  // Copying the export directory into itself: refused before anything starts (both paths' links
  // and a glob's matches through the FileSystem, a relative path against the cwd fact).
  if (auto overlap = export_overlap(p.export_what.value(), p.export_dir, facts.fs, facts.cwd))
    return Error{ErrorKind::kConfig, *overlap};
  return ok_status();
}

Status read_warm_standby(const Options& o, RunPlan& p) {
  auto mode = choice_of(o, "warm-standby", kWarmStandbyWords);
  if (!mode) return mode.error();
  return assign(parse_warm_standby(*mode, o.value_or("warm-import", "")), p.sup.warm);
}

Status read_rendezvous(const Options& o, RunPlan& p) {
  if (auto v = o.get("rdzv-token")) p.rdzv_token = v->value;
  PortsAsked asked{std::nullopt, p.topology.master_port, p.topology.origin["master_port"],
                   p.topology.slots()};
  if (o.has("rdzv-port")) {
    auto port = o.get_int("rdzv-port");
    if (!port) return port.error();
    asked.rdzv_port = static_cast<int>(*port);
  }
  return assign(rendezvous_port_rule(asked), p.rdzv_port);
}

// What this node's trainvisor listens on, which the workers' MASTER_PORT must not be.
ListenersAsked listeners(const Options& o, const RunPlan& p) {
  return {p.topology.slots(), p.rdzv_port, o.get("rdzv-port"), p.observability.metrics_port,
          o.get("metrics-port")};
}

// The preflight's plan (RunPlan::transport, preflight_level, expected_gpus). The GPUs are read
// only when a preflight runs: the PCI bus's functions are no read for the launch path.
Status plan_preflight(const Environment& env, const PlanFacts& facts, RunPlan& p) {
  const Topology& t = p.topology;
  const bool efa = !find_rdma_devices(facts.fs).efa.empty();
  p.transport = decide_require_transport(
      p.require_transport, {t.nnodes, efa, t.instance_type, t.origin_of("instance_type")});
  p.preflight_level = resolve_preflight_level(p.preflight, t.nnodes, efa);
  // Hot spares: the full preflight's cross-node probe is one NCCL group over a fixed set of nodes,
  // which a spare that joins later would never complete; auto's full becomes basic on every node.
  if (t.spare_nodes > 0 && p.preflight_level == PreflightLevel::kFull) {
    if (p.preflight == PreflightLevel::kFull)
      return Error{ErrorKind::kConfig,
                   "--preflight full with --spare-nodes " + std::to_string(t.spare_nodes) +
                       ": expected basic, none or auto (the cross-node NCCL probe needs a fixed "
                       "set of nodes; a spare may join later)"};
    spdlog::info(
        "preflight: basic on every node (auto would be full): with --spare-nodes the cross-node "
        "probe has no fixed set of nodes");
    p.preflight_level = PreflightLevel::kBasic;
  }
  for (const auto& [k, v] : transport_worker_env(p.transport.resolved, env))
    p.sup.layout.extra.emplace(k, v);
  if (p.preflight_level == PreflightLevel::kNone) return ok_status();
  // GPUs are expected only on a node that has some (resolve_expected_gpus): CPU-only (gloo) jobs
  // still pass, a GPU node without its driver fails.
  p.visible_gpus = facts.gpus.count();
  p.expected_gpus =
      resolve_expected_gpus(t.nproc_per_node, p.visible_gpus, nvidia_gpu_functions(facts.fs));
  return ok_status();
}

}  // namespace

Result<RunPlan> plan_run(const Options& o, const Environment& env, const PlanFacts& facts) {
  const FileSystem& fs = facts.fs;
  RunPlan p;
  auto topo = resolve_topology(o, env, fs, facts.gpus, facts.host);
  if (!topo) return topo.error();
  p.topology = *topo;
  if (!p.topology.not_training.empty()) return p;  // run_command exits 0 (no workers here)
  const Interpreter py = find_interpreter(env, fs);
  auto argv = build_worker_argv(o, py.path);
  if (!argv) return argv.error();
  p.interpreter = py;
  auto exe = facts.executable(argv->front(), env);
  if (!exe) return exe.error();
  const WorkersPython answer = query_workers_python(o, *argv, py, env, facts);
  p.torch = answer.torch;
  // What every node must share, sent in its joins (docs/coordination.md, "Node fingerprint").
  if (p.topology.slots() > 1) p.fingerprint = node_fingerprint(env, p.torch, fs, facts.version);
  if (auto s =
          assign(choice_of(o, "node-fingerprint", kNodeFingerprintWords), p.check_fingerprints);
      !s)
    return s.error();
  if (auto s = read_timing(o, env, p); !s) return s.error();
  if (auto s = read_export(o, env, facts, p); !s) return s.error();
  if (auto s = read_health_and_checkpoints(o, facts, *argv, p); !s) return s.error();
  for (auto* step : {read_rendezvous, read_warm_standby})
    if (auto s = step(o, p); !s) return s.error();
  auto obs = read_observability_options(o, env.has("KUBERNETES_SERVICE_HOST"));
  if (!obs) return obs.error();
  // After every option value is checked (a bad value is 64/78 first), before anything starts.
  if (auto s = check_python_script(o, fs); !s) return s.error();
  if (auto s = check_python_module(o, answer, py); !s) return s.error();
  p.observability = *obs;
  if (p.sup.stall) {
    p.sup.stall->saves_expected = p.ckpt_dir.has_value();
    if (!p.observability.progress_regex)
      spdlog::warn(
          "--hang-timeout auto without --progress-regex: only the heartbeat file "
          "(TRAINVISOR_HEARTBEAT_FILE) tells a step; a job that never touches it ends at its "
          "start-up deadline");
  }
  if (auto s = master_port_rule(p.topology, listeners(o, p)); !s) return s.error();
  const Topology& t = p.topology;
  p.observability.goodput.nnodes = t.nnodes;
  p.observability.goodput.node_rank = t.node_rank;
  p.observability.goodput.nproc_per_node = t.nproc_per_node;
  p.observability.goodput.checkpoints_watched = p.ckpt_dir.has_value();
  p.observability.goodput.gpus = t.nnodes * t.nproc_per_node;
  p.observability.ledger_dir = p.ckpt_dir;
  p.observability.job_id = ledger_job_id(o, t);
  auto otlp = read_otlp_setup(o, env);
  if (!otlp) return otlp.error();
  p.observability.otlp = *otlp;
  p.sup.layout = WorkerLayout{
      t.nnodes,         t.node_rank,           t.nproc_per_node, t.master_addr, o.text("role"),
      job_run_id(o, t), p.policy.max_restarts, t.worker_env,     std::nullopt};
  if (p.torch) p.sup.layout.torch = std::pair{p.torch->major, p.torch->minor};
  p.sup.executable = *exe;
  p.sup.argv = *argv;
  p.sup.base_env = env;
  // trainvisor's own secret stays with trainvisor: no worker (or standby) inherits it.
  p.sup.base_env.erase("TRAINVISOR_RDZV_TOKEN");
  if (p.sup.gpu_health) p.sup.gpu_health->env = p.sup.base_env;
  p.sup.failure_file = o.text("failure-file");
  p.sup.signals_reach_workers = signals_reach_workers_rule(env);
  p.sup.termination_log = termination_log_rule(o.get("termination-log"), fs);
  if (auto st = plan_preflight(env, facts, p); !st) return st.error();
  return p;
}

}  // namespace tv
