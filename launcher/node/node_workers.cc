#include "launcher/node/node_workers.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "launcher/job/root_cause.h"

namespace tv {

NodeWorkers::NodeWorkers(boost::asio::io_context& io, LoopTime& time, const SupervisorConfig& cfg,
                         Spawner& spawner, const FileSystem& fs, const RankDirs& dirs,
                         const EvidenceFiles& evidence, Events events)
    : cfg_(cfg),
      spawner_(spawner),
      events_(std::move(events)),
      group_(cfg.layout.nproc_per_node, *this),
      grace_timer_(io, time),
      roster_(io, fs, [this](const WorkerPtr& w, const WorkerEnd& e) { worker_over(w, e); }),
      starts_(io, time, spawner, dirs, evidence,
              {cfg.layout, cfg.executable, cfg.argv, cfg.base_env, cfg.work_dir, cfg.keep_logs,
               cfg.json_worker_lines, cfg.first_attempt},
              [this](pid_t p, int status) { on_child_exit(p, status); }) {
  standbys_ =
      StandbySet::create(io, time, cfg.warm, cfg.executable, cfg.argv, cfg.layout.nproc_per_node,
                         spawner, [this](pid_t p, int status) { on_child_exit(p, status); });
}

std::chrono::system_clock::time_point NodeWorkers::wall_now() const {
  if (!cfg_.wall_clock_ns) return std::chrono::system_clock::now();
  return wall_time(cfg_.wall_clock_ns());
}

void NodeWorkers::start(const GenerationPlan& plan, std::optional<ResumeTarget> resume) {
  resume_ = std::move(resume);
  group_.start(plan);
}

void NodeWorkers::prepare_standbys() {
  if (standbys_) standbys_->prepare(starts_.rank_envs());
}

void NodeWorkers::stop_standbys() {
  if (standbys_) standbys_->shutdown();
}

bool NodeWorkers::start_worker(int local_rank, const GenerationPlan& plan, WorkerEnd* end) {
  auto started = starts_.start(local_rank, plan, resume_, standbys_.get());
  if (started) return attach(started->worker, started->pid);
  end->exit_code = started.error().exit_code();
  end->start_failed = true;
  spdlog::error("rank {}: {}", global_rank(cfg_.layout, local_rank), started.error().message);
  return false;
}

bool NodeWorkers::attach(const WorkerPtr& w, pid_t pid) {
  const int local_rank = w->id().local_rank;
  if (cfg_.observer)
    w->set_taps(cfg_.observer->output_tap(local_rank, false),
                cfg_.observer->output_tap(local_rank, true));
  roster_.add(w, pid);
  if (cfg_.observer) cfg_.observer->worker_started(local_rank);
  return true;
}

void NodeWorkers::on_child_exit(pid_t pid, int status) {
  if (roster_.exited(pid, status, wall_now())) return;
  if (standbys_) standbys_->on_exit(pid, status);  // or a worker released already: nothing
}

// The roster's: `w` is over, its exit status and its output in (WorkerRoster). A worker of an
// earlier generation, or one the group no longer counts, changes nothing.
void NodeWorkers::worker_over(const WorkerPtr& w, const WorkerEnd& end) {
  if (cfg_.observer) cfg_.observer->worker_exited(end.local_rank, end.exit_code);
  if (w->id().generation != group_.generation() || !group_.is_running(end.local_rank)) return;
  if (!end.ok() && group_.state() == GroupState::kHealthy)
    spdlog::warn("rank {} ended: exit code {}", w->id().rank, end.exit_code);
  events_.over(end);
  group_.worker_over(end);
}

void NodeWorkers::signal_worker(int local_rank, int sig) {
  // The root cause is on its way out (its error file is written): its own exit status is the one
  // to report, so its SIGTERM waits (root_cause_wait.h); SIGKILL at the grace period's end stands.
  if (events_.holds_signal(local_rank, sig)) return;
  roster_.signal(local_rank, sig);
}

void NodeWorkers::arm_grace_timer() {
  if (auto at = events_.kill_at())  // after a save's wait: SIGKILL at the stop + the grace period
    grace_timer_.expires_at(*at);
  else
    grace_timer_.expires_after(cfg_.grace);
  grace_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    spdlog::warn("grace period of {} ms is over: SIGKILL to the remaining workers",
                 cfg_.grace.count());
    group_.on_grace_expired();
  });
}

void NodeWorkers::cleanup_descendants() {
  if (int n = spawner_.kill_leftovers(standbys_ ? standbys_->pids() : std::set<pid_t>{}))
    spdlog::warn("killed {} process(es) the workers left behind", n);
  roster_.close_pipes();
}

void NodeWorkers::group_succeeded(int generation) {
  spdlog::info("generation {}: every worker on this node exited 0", generation);
  events_.succeeded(generation);
}

void NodeWorkers::release() {
  stop_standbys();
  roster_.release();
}

}  // namespace tv
