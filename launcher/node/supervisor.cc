#include "launcher/node/supervisor.h"

#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "common/bounded_read.h"
#include "common/exit_codes.h"
#include "common/file_system.h"
#include "common/init.h"
#include "common/process.h"
#include "launcher/workers/worker_command.h"

namespace tv {
namespace {
// How often the end of a run looks again for a child it has killed or is waiting for (the GPU
// watch, a standby, a side query): their exits arrive from Init's thread in well under this.
constexpr auto kEndPoll = std::chrono::microseconds(500);
}  // namespace

Supervisor::Supervisor(boost::asio::io_context& io, SupervisorConfig cfg, Cluster& cluster,
                       Spawner& spawner, LoopTime& time, SignalSource& signals)
    : io_(io),
      cfg_(std::move(cfg)),
      cluster_(cluster),
      spawner_(spawner),
      time_(time),
      signals_(signals),
      evidence_({cfg_.stacks, cfg_.keep_logs, cfg_.work_dir, cfg_.first_attempt, cfg_.layout,
                 cfg_.executable, cfg_.argv, cfg_.base_env},
                fs()),
      workers_(io, time, cfg_, spawner, fs(), rank_dirs(), evidence_, worker_events()),
      node_run_(NodeRunRules{cfg_.signals_reach_workers, cfg_.save_signal != 0,
                             static_cast<long>(cfg_.grace.count())},
                *this),
      saves_(io, time, cfg_.save_signal, cfg_.grace, cfg_.wall_clock_ns,
             {[this](int sig) { workers_.group().forward(sig); },
              [this](int sig) { workers_.group().stop(sig); }, cfg_.progress_step,
              [this](const StopSaveOutcome& o) {
                if (cfg_.observer) cfg_.observer->stop_save(o);
              }}),
      hang_timer_(io, time),
      hangs_(cfg_.hang_timeout, cfg_.stall),
      beside_(
          io, time, spawner, cfg_.gpu_health, [this](const GpuHealthEvent& e) { on_gpu_health(e); },
          cfg_.side_queries),
      gpu_events_(cfg_.gpu_health_required, cfg_.layout.node_rank),
      lookup_(io, time, cfg_.off_loop ? *cfg_.off_loop : real_off_loop(), cfg_.resume_dir),
      heartbeats_(io, cfg_.log_off_loop ? *cfg_.log_off_loop : real_off_loop(), fs()),
      root_cause_(io, time, fs(), workers_.roster(), cfg_.layout, cfg_.grace, root_cause_hooks()),
      stacks_(io, time, spawner, fs(), cfg_.work_dir, cfg_.layout.node_rank),
      reports_(io, time, spawner, {cfg_.executable, cfg_.base_env, cfg_.layout.node_rank}) {}

// What the workers' group decides, turned into this node's events: every end to the local root
// cause first; success to the cluster; a failure to LocalRootCause (which reports it); every
// worker gone to NodeRun.
NodeWorkers::Events Supervisor::worker_events() {
  NodeWorkers::Events ev;
  ev.over = [this](const WorkerEnd& end) { root_cause_.worker_over(end); };
  ev.holds_signal = [this](int local_rank, int sig) { return root_cause_.holds(local_rank, sig); };
  ev.kill_at = [this] { return saves_.kill_at(); };
  ev.failed = [this](int generation, const WorkerEnd& first_seen) {
    root_cause_.group_failed(generation, first_seen);
  };
  ev.succeeded = [this](int generation) { cluster_.report_success(generation); };
  ev.stopped = [this](int generation) { node_run_.workers_gone(generation); };
  return ev;
}

const FileSystem& Supervisor::fs() const {
  static const RealFileSystem real;
  return cfg_.fs ? *cfg_.fs : real;
}

std::chrono::system_clock::time_point Supervisor::wall_now() const {
  if (!cfg_.wall_clock_ns) return std::chrono::system_clock::now();
  return wall_time(cfg_.wall_clock_ns());
}

const RankDirs& Supervisor::rank_dirs() const {
  return cfg_.rank_dirs ? *cfg_.rank_dirs : real_rank_dirs();
}

int Supervisor::run() {
  begin();
  io_.run();
  return end();
}

void Supervisor::begin() {
  // TERM INT HUP USR1 USR2 are this loop's events while it runs (Init's signal thread posts them).
  route_ =
      signals_.route([this](int sig) { boost::asio::post(io_, [this, sig] { on_signal(sig); }); });
  // Child exits and signals are posted from Init's thread: the loop must not end for lack of
  // pending work while it waits for them. node_run_ stops it when the run is over (end_loop).
  keep_running_.emplace(io_.get_executor());
  evidence_.prepare();
  cluster_.join(cluster_events());
  if (hangs_.on()) schedule_hang_check();
}

int Supervisor::end() {
  keep_running_.reset();
  saves_.run_ended();  // the workers ended before a save was seen: it is told
  evidence_.remove_pid_file();
  release_workers();
  report_root_cause();
  node_run_.log_exit();
  route_.reset();  // from here a signal is Init's again
  return node_run_.exit_code();
}

Cluster::Events Supervisor::cluster_events() {
  Cluster::Events ev;
  ev.start = [this](const GenerationPlan& plan) { node_run_.start(plan); };
  ev.stop = [this](const NodeFailure& f) { on_cluster_stop(f); };
  ev.done = [this] { node_run_.done(); };
  ev.give_up = [this](const NodeFailure& f) {
    spdlog::error("giving up after {} restart(s): {}", f.generation, f.summary);
    if (cfg_.observer && !f.verdict_rule.empty()) cfg_.observer->retry_judged(f.verdict_rule);
    node_run_.give_up(f);
  };
  ev.lost = [this](const std::string& why, int signal) {
    // A node that left on a termination signal: the job is being stopped from outside (scancel,
    // a deleted job), so every node ends as that node does, 128 + N. So does a node lost while
    // this one has a stop signal of its own, taken or still pending: a quicker node's exit was
    // read first.
    if (signal == 0) signal = signals_.pending_stop_signal();
    node_run_.lost(why, signal, plan_.generation, cfg_.layout.node_rank);
  };
  return ev;
}

void Supervisor::start_generation(const GenerationPlan& plan) {
  plan_ = plan;
  root_cause_.generation_started();
  workers_.new_generation();
  resume_.reset();
  if (cfg_.find_resume) return look_up_resume(plan);  // then start_workers, on the loop
  start_workers(plan);
}

void Supervisor::start_workers(const GenerationPlan& plan) {
  workers_.place(plan);  // elastic membership: this generation's node rank and count
  preparing_ = plan.generation;
  OffLoop& off_loop = cfg_.log_off_loop ? *cfg_.log_off_loop : real_off_loop();
  dirs_call_ = off_loop.run(
      io_,
      [work = workers_.rank_dirs_work(plan.generation), this, plan]() -> std::function<void()> {
        // Off the loop: only `work`, which owns what it uses; `this` is the answer's (the loop).
        auto opened = std::make_shared<Result<std::vector<UniqueFd>>>(work());
        return [this, plan, opened] { rank_dirs_opened(plan, std::move(*opened)); };
      });
}

// A refused rank directory is trainvisor's own configuration error (WorkerStart::take_rank_dirs):
// this node exits 78 naming the path, and nothing is retried (docs/supervision.md).
void Supervisor::rank_dirs_opened(const GenerationPlan& plan,
                                  Result<std::vector<UniqueFd>> opened) {
  preparing_.reset();
  if (signals_.stop_requested() || node_run_.ending()) return;  // as resume_found
  auto taken = workers_.take_rank_dirs(plan.generation, std::move(opened));
  if (!taken) {
    spdlog::error("{}; exiting {} (trainvisor's configuration, not retried)", taken.error().message,
                  exit_code_of(ErrorKind::kConfig));
    node_run_.refuse(node_failure(plan.generation, cfg_.layout.node_rank, ErrorKind::kConfig,
                                  taken.error().message));
    return;
  }
  launch_workers(plan);
}

void Supervisor::launch_workers(const GenerationPlan& plan) {
  if (resume_) spdlog::info("generation {}: resuming from {}", plan.generation, resume_->path);
  if (cfg_.observer) cfg_.observer->generation_started(plan.generation);
  if (auto rules = hangs_.generation_started(seconds_now()))
    spdlog::info("generation {}: a hang is {}", plan.generation, *rules);
  if (cfg_.observer && !plan.retried_by.empty()) cfg_.observer->retry_judged(plan.retried_by);
  spdlog::info("generation {}: starting {} worker(s), ranks {}-{}, MASTER_ADDR={} MASTER_PORT={}",
               plan.generation, cfg_.layout.nproc_per_node, global_rank(workers_.layout(), 0),
               global_rank(workers_.layout(), cfg_.layout.nproc_per_node - 1),
               cfg_.layout.master_addr, plan.master_port);
  workers_.start(plan, resume_);
  beside_.start();  // once, after the first generation's workers
  // The next standbys, once this generation's workers are all started.
  boost::asio::post(io_, [this] {
    if (!node_run_.ending()) workers_.prepare_standbys();
  });
}

// Another node's failure stopped this generation's workers: the cluster hears it, with where the
// ranks were (a hang's stacks), their last collectives and this node's last progress step (the
// job's progress, for the judge on node 0).
void Supervisor::report_stopped(int generation) {
  report_with_collectives(generation, stacks_.hang_evidence(generation),
                          [this, generation](std::vector<RankEvidence> ranks) {
                            const auto step = cfg_.progress_step ? cfg_.progress_step()
                                                                 : std::optional<std::int64_t>();
                            cluster_.report_stopped(generation, ranks, step);
                          });
}

// A report leaves with the last collectives this node's flight-recorder dumps of `generation`
// name (CollectiveReports), in the order asked, and never once this node's run is ending.
void Supervisor::report_with_collectives(int generation, std::vector<RankEvidence> ranks,
                                         CollectiveReports::Send send) {
  reports_.add(generation, evidence_.nccl_dumps(generation), std::move(ranks),
               [this, send = std::move(send)](std::vector<RankEvidence> r) {
                 if (!node_run_.ending()) send(std::move(r));
               });
}

void Supervisor::on_signal(int sig) {
  if (sig == stacks_signal()) {
    if (node_run_.ending() || stacks_.busy())
      return spdlog::info("stacks signal: ignored (workers stopping or stacks being collected)");
    return collect_stacks("on request");
  }
  if (!is_stop_signal(sig)) return forward_signal(sig);
  node_run_.stop_signal(sig);
}

// QUIT, USR1, WINCH ... (is_forwarded_signal): passed on to every running worker's process group,
// nothing else changes. A worker that dies of it (SIGQUIT's default action) is a failure like any
// other. Those whose default action is to do nothing are logged at debug (a terminal's resize).
void Supervisor::forward_signal(int sig) {
  const bool quiet = sig == SIGWINCH || sig == SIGCONT || sig == SIGURG;
  const auto level = quiet ? spdlog::level::debug : spdlog::level::info;
  if (!node_run_.forwards_signals())
    return spdlog::log(level,
                       "received {}: not forwarded, Slurm delivered it to every process of the "
                       "step (the workers too)",
                       signal_name(sig));
  spdlog::log(level, "received {}: forwarded to {} worker(s)", signal_name(sig),
              workers_.group().running());
  workers_.group().forward(sig);
}

// node_run_ decided the outcome (exit_code): nothing new starts, the other nodes hear it.
void Supervisor::leave(int exit_code, int signal, const std::string& reason) {
  drop_start_of(plan_.generation);  // a lookup or opening under way starts nothing now
  heartbeats_.drop();
  workers_.stop_standbys();
  if (cfg_.observer) cfg_.observer->ending(exit_code);
  cluster_.leave(signal, reason);
}

// The loop has stopped with reads and drain timers still pending: abort them and let their
// handlers run now, so every WorkerProcess is released while the io_context is alive.
void Supervisor::release_workers() {
  workers_.release();
  io_.restart();
  io_.poll();
  beside_.stop(/*await_answers=*/node_run_.stop_signal_seen() == 0);  // not after a signal
  reports_.drop_all();
  // Standbys and the GPU health child die of SIGKILL at once; Init reaps them and posts each exit
  // here. Wait (bounded) so none outlives trainvisor's exit, and so that this node's last frames
  // (its leave, its reports) reach the other nodes before its sockets close (Cluster::flushed).
  const auto all_gone = [this] {
    return workers_.standbys_gone() && beside_.gone() && cluster_.flushed();
  };
  poll_until(io_, time_, kEndPoll, 2000, all_gone);  // 1 s at most
}

}  // namespace tv
