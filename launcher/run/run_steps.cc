// The steps of `trainvisor run` (cli/run_command.cc wires them, in this order): the working
// directory and SageMaker's `train`, the plan's facts, this node's limits, the node rank from the
// rendezvous, the preflight (one node or every node), the first resume lookup and its hook, the
// banner's facts, the cluster, the checkpoint watch, the export after success.
#include "launcher/run/run_steps.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "checkpoint/resume.h"
#include "common/exit_codes.h"
#include "common/init.h"
#include "common/open_files.h"
#include "common/process.h"
#include "health/gpu_check.h"
#include "health/isolated_query.h"
#include "health/nccl_probe.h"
#include "health/torch_version.h"
#include "launcher/job/local_cluster.h"
#include "launcher/job/root_cause.h"
#include "launcher/node/model_export.h"
#include "launcher/node/node_run.h"
#include "launcher/observability/gpu_peak.h"
#include "launcher/run/export_exclude.h"
#include "launcher/run/resume_hook.h"
#include "launcher/topology/resource_config.h"
#include "launcher/workers/sagemaker_train.h"
#include "launcher/workers/spawner.h"

#ifndef TRAINVISOR_VERSION
#define TRAINVISOR_VERSION "unknown"
#endif

namespace tv {
namespace {
constexpr std::size_t kSkippedNamed = 20;  // paths the export's one warning names
}  // namespace

// A node lost before the workers start while this node has a stop signal of its own, taken or
// still pending: a quicker node's exit was read first (node_run.h: lost_exit_code).
Error stop_over_lost(Error e) {
  return stopped_over_lost(std::move(e), Init::instance().pending_stop_signal());
}

// The run succeeded: --export's copy decides the exit code. A failed copy is 73 with its reason
// in the failure file and the termination log, so a job whose model is missing never reads as
// complete (SageMaker would upload an empty model.tar.gz and mark the job Completed). `fs` and
// `cwd` are the ones plan_run was given (the real file system, the directory run is in).
int export_after_success(const RunPlan& p, const FileSystem& fs, const std::string& cwd) {
  if (!p.export_what) return exit_code::kOk;
  Init::instance().set_phase("export");
  auto r = export_model(*p.export_what, p.export_dir, fs, cwd,
                        incomplete_checkpoints_under(*p.export_what, p.ckpt_format));
  if (r) {
    spdlog::info("export: {} file(s), {} bytes from {} into {} ({})", r->files, r->bytes,
                 *p.export_what, p.export_dir, fmt::join(r->moved, ", "));
    if (!r->own.empty())
      spdlog::info("export: left out trainvisor's own file(s): {}", fmt::join(r->own, ", "));
    if (!r->left_out.empty())
      spdlog::warn("export: left out {} incomplete checkpoint path(s): {}", r->left_out.size(),
                   fmt::join(r->left_out, ", "));
    if (!r->skipped.empty()) {  // one line, each path once (the first few of a long list)
      const auto named = static_cast<std::ptrdiff_t>(std::min(r->skipped.size(), kSkippedNamed));
      spdlog::warn("export: skipped {} link(s) or special file(s) (links are never followed): {}{}",
                   r->skipped.size(),
                   fmt::join(r->skipped.begin(), r->skipped.begin() + named, ", "),
                   r->skipped.size() > kSkippedNamed ? ", ..." : "");
    }
    return exit_code::kOk;
  }
  const std::string text = "the workers succeeded, but --export failed: " + r.error().message;
  spdlog::error("{}", text);
  for (const auto& [path, only_if_absent] :
       {std::pair{p.sup.failure_file, true}, std::pair{p.sup.termination_log, false}}) {
    if (path.empty()) continue;
    if (auto w = write_root_cause_file(path, text, only_if_absent, 1024); !w)
      spdlog::warn("export: {}", w.error().message);
  }
  return r.error().exit_code();
}

// Below what a run needs, trainvisor's own descriptors would run out part way (Boost's event loop
// aborts, a worker's pipes fail as if its command could not run): one line and 71 before anything.
Status check_open_files(int workers) {
  const OpenFileLimit limit = open_file_limit();
  const std::uint64_t needed = open_files_needed(workers);
  if (limit.soft == 0 || limit.soft >= needed) return ok_status();
  return Error{ErrorKind::kOsError,
               "RLIMIT_NOFILE (ulimit -n) is " + std::to_string(limit.soft) +
                   ": trainvisor needs at least " + std::to_string(needed) + " open files for " +
                   std::to_string(workers) +
                   " worker(s) on this node: raise it (ulimit -n, docker run --ulimit nofile=, "
                   "the container runtime's limits)"};
}

namespace {
NetworkClusterConfig network_config(const RunPlan& p) {
  const Topology& t = p.topology;
  NetworkClusterConfig c;
  c.node_rank = t.rank_by_rendezvous ? rdzv::kRankUnassigned : t.node_rank;
  const auto from = t.origin.find("node_rank");
  c.who.rank_from = t.rank_by_rendezvous     ? "none given"
                    : from == t.origin.end() ? ""
                                             : from->second;
  c.nnodes = t.nnodes + t.spare_nodes;  // the rendezvous' slots; the world is t.nnodes
  c.min_nnodes = t.min_nnodes;
  c.spare_nodes = t.spare_nodes;
  c.last_call = p.rdzv_last_call;
  c.nproc_per_node = t.nproc_per_node;
  c.master_addr = t.master_addr;
  c.rdzv_port = p.rdzv_port;
  c.base_master_port = t.master_port;
  c.rdzv_timeout = std::chrono::ceil<std::chrono::seconds>(p.rdzv_timeout);
  c.peer_timeout = p.peer_timeout;
  c.token = derive_rdzv_token(p.rdzv_token, t.job_id);
  c.policy = p.policy;
  c.fingerprint = p.fingerprint;
  c.check_fingerprints = p.check_fingerprints;
  if ((!p.rdzv_token || p.rdzv_token->empty()) && t.job_id.empty())
    spdlog::warn(
        "rdzv: no --rdzv-token (TRAINVISOR_RDZV_TOKEN) and no platform job id: the rendezvous key "
        "is public, so anyone who can reach port {} can join this job as a node, stop it or choose "
        "its exit code. Pass the same secret with --rdzv-token or TRAINVISOR_RDZV_TOKEN on every "
        "node (a Kubernetes Secret, a SageMaker/Batch job setting: docs/coordination.md, "
        "\"Security\")",
        c.rdzv_port);
  return c;
}
}  // namespace

namespace {
// `--preflight full` across nodes: every node's checks and NCCL ranks, one communicator, through
// the rendezvous (docs/health.md, "Several nodes"); every node shares the verdict.
Status run_multinode_preflight(RunPlan& p, const PreflightConfig& cfg, bool gpus,
                               boost::asio::io_context& io,
                               std::unique_ptr<NetworkCluster>& cluster) {
  const Topology& t = p.topology;
  NetworkClusterConfig nc = network_config(p);
  // Node 0's id is made by a child that hosts NCCL's bootstrap root until the probe is over.
  std::unique_ptr<NcclIdHost> id_host;
  if (t.node_rank == 0) {
    // No GPU here: no id, and every node with no GPU skips its probe.
    if (gpus) id_host = make_probe_unique_id(cfg);
    const UniqueIdResult id = id_host ? id_host->result() : UniqueIdResult{};
    if (!id.error.empty()) spdlog::warn("preflight: no NCCL unique id for the probe: {}", id.error);
    nc.preflight_unique_id = id.hex;
  }
  Init::instance().set_phase("rendezvous (--preflight full)");
  // A node whose rank the rendezvous gave has its cluster already (assign_node_rank).
  std::unique_ptr<NetworkCluster> net = std::move(cluster);
  if (!net)
    net = std::make_unique<NetworkCluster>(io, nc);
  else if (nc.preflight_unique_id)
    net->set_preflight_unique_id(*nc.preflight_unique_id);
  const int nproc = t.nproc_per_node;
  // The probe runs on the cluster's thread, joined before preflight() returns.
  auto st = net->preflight([cfg, nproc, nnodes = t.slots(), node = t.node_rank,
                            read = &p.preflight_gpus](const std::string& uid) {
    PreflightConfig c = cfg;
    c.group = ProbeGroup{uid, node * nproc, nnodes * nproc};
    const auto report = run_preflight(c);
    *read = gpu_health_of(report);
    spdlog::info("preflight (full, node {} of {}, {:.1f} s):\n{}", node, nnodes, report.seconds,
                 format_report(report));
    return PreflightVerdict{report.passed, preflight_summary(report, node)};
  });
  cluster = std::move(net);
  if (!st && st.error().exit_code() == exit_code_of(ErrorKind::kPreflightFailed))
    return Error{ErrorKind::kPreflightFailed,
                 "preflight failed: not starting the workers on any node: " + st.error().message};
  return st;
}
}  // namespace

Status run_preflight_if_asked(RunPlan& p, const Environment& env, boost::asio::io_context& io,
                              std::unique_ptr<NetworkCluster>& cluster) {
  const Topology& t = p.topology;
  const PreflightLevel level = p.preflight_level;  // plan_run's (plan_preflight)
  if (!p.transport.reason.empty())
    spdlog::info("--require-transport {} -> {} ({})", transport_word(p.require_transport),
                 transport_word(p.transport.resolved), p.transport.reason);
  if (level == PreflightLevel::kNone) return ok_status();
  PreflightConfig cfg;
  cfg.level = level;
  const bool gpus = p.visible_gpus > 0;
  cfg.expected_gpus = p.expected_gpus;
  cfg.nnodes = p.topology.nnodes;
  cfg.require_transport = p.require_transport;
  cfg.instance_type = t.instance_type;
  cfg.instance_type_origin = t.origin_of("instance_type");
  cfg.min_busbw = p.min_busbw;
  cfg.worker_command = p.sup.argv;
  cfg.env = env;
  if (p.topology.slots() > 1 && level == PreflightLevel::kFull)
    return run_multinode_preflight(p, cfg, gpus, io, cluster);
  auto report = run_preflight(cfg);
  p.preflight_gpus = gpu_health_of(report);
  spdlog::info("preflight ({}, {:.1f} s):\n{}", level_word(level), report.seconds,
               format_report(report));
  if (!report.passed)
    return Error{ErrorKind::kPreflightFailed, "preflight failed: not starting the workers"};
  return ok_status();
}

// No node rank from the options or a platform: the rendezvous gives it (docs/coordination.md,
// "Node ranks") before anything that names the rank (the banner, the workers' RANK and
// GROUP_RANK, the failure file, node 0's ledger); the cluster that found it runs the job.
Status assign_node_rank(RunPlan& p, boost::asio::io_context& io,
                        std::unique_ptr<NetworkCluster>& cluster) {
  if (!p.topology.rank_by_rendezvous) return ok_status();
  Init::instance().set_phase("rendezvous (node rank)");
  auto net = std::make_unique<NetworkCluster>(io, network_config(p));
  auto rank = net->assign_rank();
  if (!rank) return rank.error();
  Topology& t = p.topology;
  t.node_rank = *rank;
  t.rank_by_rendezvous = false;
  t.origin["node_rank"] = net->rank_origin();
  p.sup.layout.node_rank = *rank;
  p.observability.goodput.node_rank = *rank;
  cluster = std::move(net);
  return ok_status();
}

std::unique_ptr<Cluster> make_cluster(boost::asio::io_context& io, const RunPlan& p) {
  const Topology& t = p.topology;
  if (t.slots() == 1) return std::make_unique<LocalCluster>(io, p.policy, t.master_port);
  return std::make_unique<NetworkCluster>(io, network_config(p));
}

namespace {
// The banner's GPUs: the preflight's NVML reading when it ran (never a second query); none and no
// child at all where the container has no NVIDIA device node (a CPU job); else nothing now: one
// `__query gpu-health` child beside the first workers (a side query of the Supervisor, bounded by
// TRAINVISOR_CHECK_TIMEOUT) prints the line when it answers, so no query is on the start path. A
// failed or hung query is one "unknown" line, never a failed run.
std::optional<BannerGpus> banner_gpus_of(RunPlan& p, const Environment& env) {
  const RealGpuCounter counter(env);
  const GpuVisibility devices{counter.count(), counter.describe()};
  const int workers = p.topology.nproc_per_node;
  if (p.preflight_gpus)
    return banner_gpus(Result<GpuHealthSnapshot>(*p.preflight_gpus), "NVML, read in the preflight",
                       devices, workers);
  if (devices.count == 0) return banner_gpus(std::nullopt, "", devices, workers);
  const auto argv = gpu_health_query_argv();
  SideQueryRequest q{SpawnRequest{argv.front(), argv, p.sup.base_env},
                     query_timeout(p.sup.base_env), nullptr};
  q.done = [devices, workers, env = p.sup.base_env](const SideQueryEnd& e) {
    const Result<GpuHealthSnapshot> read =
        !e.not_started.empty()
            ? Result<GpuHealthSnapshot>(
                  Error{ErrorKind::kFailed, "trainvisor __query gpu-health: " + e.not_started})
            : gpu_health_answer(e.output, exit_code_from_status(e.wait_status), e.timed_out, env);
    log_banner_item(gpus_item(
        banner_gpus(read, "NVML, read by trainvisor __query gpu-health", devices, workers)));
  };
  p.sup.side_queries.push_back(std::move(q));
  return std::nullopt;
}
}  // namespace

BannerFacts banner_facts(RunPlan& p, const Environment& env, const std::string& resume) {
  BannerFacts f;
  char host[256] = {};
  f.host = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  f.topology = p.topology;
  f.gpus = banner_gpus_of(p, env);
  f.command = fmt::format("{}", fmt::join(p.sup.argv, " "));
  if (!p.sup.argv.empty() && p.sup.argv.front() == p.interpreter.path)
    f.interpreter = p.interpreter.path + " (from " + p.interpreter.origin + ")";
  if (p.torch) f.torch = p.torch->text;
  f.resume = resume;
  if (p.export_what) f.exported = *p.export_what + " -> " + p.export_dir + " at success";
  return f;
}

namespace {
// The banner's resume item: the checkpoint, or the lookup's own reason for none (nothing yet,
// nothing complete, an unknown layout, runs of other experiments, runs that cannot be ordered).
std::string resume_item(const Selection& found, const std::string& dir) {
  if (found.checkpoint)
    return found.checkpoint->path + " (step " + std::to_string(found.checkpoint->step) + ")";
  return "nothing (" + (found.why_none.empty() ? "no checkpoint under " + dir : found.why_none) +
         ")";
}
}  // namespace

// The resume hook: the newest complete checkpoint at each (re)start, told to the goodput
// accountant. The first lookup runs here, before the supervisor, in the phase "resume lookup",
// off this thread while `io` runs (launcher/run/resume_hook.h): a SIGTERM during it (a lookup over
// 100,000 files takes seconds; a hung NFS directory, forever) ends the run at once through Init
// (143, no child left), as in every phase before the supervisor; generation 0 takes its answer.
// No worker of the job runs anywhere before generation 0, so nothing writes in between.
// Returns the banner's resume item: the checkpoint generation 0 resumes, or why none (the same
// reason the lookup gives: checkpoint/resume.h, Selection::why_none).
std::string hook_resume(RunPlan& p, GoodputAccountant& goodput, Observability& obs,
                        boost::asio::io_context& io) {
  if (!p.ckpt_dir) return "nothing (no --checkpoint-dir)";
  if (!p.resume) return "nothing (--resume none)";
  // A later generation's lookup runs off the Supervisor's loop, where a signal is posted, not
  // acted on: the flag Init sets on its signal thread ends that lookup early (supervisor.cc
  // then starts nothing).
  p.resume->stop = &Init::instance().stop_requested();
  Init::instance().set_phase("resume lookup");
  Selection found = first_resume_lookup(*p.resume, obs, io);
  std::string said = resume_item(found, *p.ckpt_dir);
  p.sup.find_resume =
      resume_hook(*p.resume, p.resume_arg, goodput, obs, std::move(found.checkpoint));
  p.sup.resume_dir = *p.ckpt_dir;
  return said;
}

std::unique_ptr<CheckpointWatcher> watch_checkpoints(boost::asio::io_context& io, const RunPlan& p,
                                                     GoodputAccountant& goodput,
                                                     Supervisor& supervisor) {
  if (!p.ckpt_dir) return nullptr;
  auto w = std::make_unique<CheckpointWatcher>(
      *p.ckpt_dir, p.ckpt_format, [&io, &goodput, &supervisor](const CheckpointEvent& e) {
        boost::asio::post(io, [e, &goodput, &supervisor] {
          // since_previous_seconds is -1 for the first checkpoint this run has seen.
          const std::string since =
              e.since_previous_seconds < 0
                  ? std::string("the first since trainvisor started")
                  : fmt::format("{:.1f} s after the previous", e.since_previous_seconds);
          spdlog::info("checkpoint complete: {} ({} bytes, written in {:.1f} s, {})",
                       e.checkpoint.path, e.checkpoint.bytes, e.write_seconds, since);
          goodput.checkpoint_seen(
              {e.write_seconds, e.since_previous_seconds, e.checkpoint.bytes, e.checkpoint.step});
          supervisor.checkpoint_complete(
              {e.checkpoint.path, e.checkpoint.step, e.checkpoint.mtime_ns});
          supervisor.checkpoint_saved(e.write_seconds);
        });
      });
  w->on_save_started([&io, &supervisor](const Checkpoint& c) {
    boost::asio::post(io, [path = c.path, &supervisor] {
      spdlog::debug("checkpoint: a save under way: {}", path);
      supervisor.checkpoint_save_started();
    });
  });
  w->start();
  return w;
}

namespace {
// MFU's denominator: the GPUs' names from a `__query gpu` child (PID 1 never loads libcuda), only
// when MFU is asked for (--flops-per-step, or a progress regex with a `tflops` group); a GPU the
// peak table does not know leaves MFU out, saying so.
bool wants_mfu(const ObservabilityConfig& c) {
  if (c.goodput.flops_per_step) return true;
  if (!c.progress_regex) return false;
  auto p = ProgressParser::make(*c.progress_regex, "--progress-regex");
  return p && p->has_tflops();
}
}  // namespace

void resolve_gpu_peak(ObservabilityConfig& c, const Environment& env) {
  if (!wants_mfu(c)) return;
  GoodputConfig& g = c.goodput;
  Init::instance().set_phase("gpu query (MFU)");
  auto inv = isolated_query_gpus(env);
  if (!inv || inv->devices.empty()) {
    spdlog::warn("MFU: not known: no GPU name ({})", !inv                 ? inv.error().message
                                                     : inv->error.empty() ? "no device"
                                                                          : inv->error);
    return;
  }
  g.gpu_name = inv->devices.front().name;
  if (auto peak = gpu_peak_bf16(g.gpu_name)) {
    g.peak_flops_per_gpu = peak->flops;
    spdlog::info("MFU against {} ({}): {:.1f} TFLOP/s dense BF16 per GPU, {} GPUs", g.gpu_name,
                 peak->model, peak->flops / 1e12, g.gpus);
  } else {
    spdlog::warn(
        "--flops-per-step: no MFU: no dense BF16 peak known for GPU '{}' "
        "(docs/observability.md, \"MFU\")",
        g.gpu_name);
  }
}

// `train` (SageMaker's `docker run IMAGE train`) with no such program: the training toolkit's
// convention decides the command (launcher/workers/sagemaker_train.h), run from the code
// directory. Its files are where the topology's resource config is (sagemaker_layout: /opt/ml, or
// around --resource-config / TRAINVISOR_RESOURCE_CONFIG).
Status resolve_sagemaker_train(Options& o, const Environment& env) {
  if (o.positional.size() != 1 || o.positional[0] != "train" || o.flag("module"))
    return ok_status();
  auto found = find_executable("train", env);
  if (found || found.error().exit_code() != exit_code_of(ErrorKind::kNotFound)) return ok_status();
  const SageMakerLayout layout = sagemaker_layout(o.value_or("resource-config", ""));
  const SageMakerPaths paths{layout.hyperparameters, layout.code_dir};
  auto cmd = sagemaker_train_command(RealFileSystem(), paths);
  if (!cmd) return cmd.error();
  if (::chdir(paths.code_dir.c_str()) != 0)
    return Error{ErrorKind::kConfig,
                 "train: cannot change to " + paths.code_dir + ": " + std::strerror(errno)};
  spdlog::info("train: SageMaker's training script: {}", fmt::join(*cmd, " "));
  o.positional = *cmd;
  return ok_status();
}

// --workdir: what the seeds' `cd /workspace/IsaacLab && ...` did, before anything else is read.
Status change_to_workdir(const Options& o) {
  auto dir = o.get("workdir");
  if (!dir || dir->value.empty()) return ok_status();
  if (::chdir(dir->value.c_str()) != 0)
    return Error{ErrorKind::kConfig, dir->origin + " " + dir->value + ": cannot change to it (" +
                                         std::strerror(errno) + "): expected a directory"};
  return ok_status();
}

// trainvisor's current directory, read once run has entered --workdir (or SageMaker's code
// directory): it never changes after. "" when it cannot be read (relative paths stay as given).
std::string current_directory() {
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  return ec ? "" : cwd;
}

// The machine plan_run reads: the files, GPUs and address given, PATH, this binary, a child of
// the workers' python for its torch, and the current directory.
PlanFacts real_plan_facts(const FileSystem& fs, const GpuCounter& gpus, const HostAddress& host,
                          const std::string& cwd) {
  return {.fs = fs,
          .gpus = gpus,
          .host = host,
          .executable = find_executable,
          .workers_python =
              [](const std::string& python, const Environment& env, const std::string& module) {
                return ask_workers_python(python, env, module);
              },
          .self_exe = self_exe,
          .version = TRAINVISOR_VERSION,
          .cwd = cwd};
}

}  // namespace tv
