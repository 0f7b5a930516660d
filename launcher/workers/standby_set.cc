#include "launcher/workers/standby_set.h"

#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <filesystem>

namespace tv {

std::unique_ptr<StandbySet> StandbySet::create(boost::asio::io_context& io, LoopTime& time,
                                               const WarmStandbyConfig& cfg,
                                               const std::string& executable,
                                               const std::vector<std::string>& argv,
                                               int local_ranks, Spawner& spawner,
                                               Spawner::OnExit on_exit) {
  if (cfg.mode == WarmMode::kOff) return nullptr;
  auto py = python_command(argv);
  if (!py) {
    if (cfg.mode == WarmMode::kOn)
      spdlog::warn(
          "--warm-standby on: the command is not `python -u SCRIPT.py` or `python -u -m MODULE`: "
          "every (re)start is cold");
    return nullptr;
  }
  return std::make_unique<StandbySet>(io, time, *py, cfg, executable, local_ranks, spawner,
                                      std::move(on_exit));
}

StandbySet::StandbySet(boost::asio::io_context& io, LoopTime& time, PythonCommand py,
                       WarmStandbyConfig cfg, std::string executable, int local_ranks,
                       Spawner& spawner, Spawner::OnExit on_exit)
    : io_(io),
      time_(time),
      py_(std::move(py)),
      cfg_(std::move(cfg)),
      executable_(std::move(executable)),
      spawner_(spawner),
      on_exit_(std::move(on_exit)),
      pool_(local_ranks) {}

void StandbySet::prepare(const std::vector<Environment>& rank_env) {
  if (stopped_) return;
  for (int r : pool_.empty_ranks()) {
    if (static_cast<size_t>(r) >= rank_env.size()) continue;
    // Its stacks file is the next attempt's: the bootstrap registers it when the standby becomes
    // a worker (launcher/workers/worker_hook.py), not this attempt's file now.
    Environment env = rank_env[static_cast<size_t>(r)];
    env.erase("TRAINVISOR_STACKS_FILE");
    auto p = StandbyProcess::start(io_, time_, spawner_,
                                   {executable_, py_, cfg_.imports, env, on_exit_});
    if (!p) {
      pool_.disable(p.error().message);
      spdlog::warn("warm standbys off: cannot start one: {}", p.error().message);
      return;
    }
    const pid_t pid = (*p)->pid();
    pool_.started(r, pid, rank_env[static_cast<size_t>(r)]);
    procs_.emplace(pid, std::move(*p));
    watch(pid);
  }
}

void StandbySet::watch(pid_t pid) {
  procs_.at(pid)->on_readable([this, pid](const boost::system::error_code& ec) {
    if (!ec) on_said(pid);  // aborted: the standby was used or discarded; `this` may be gone
  });
}

void StandbySet::on_said(pid_t pid) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) return;
  StandbyProcess& p = *it->second;
  if (p.poll_ready()) {
    pool_.ready(pid);
    if (!p.note().empty() && !noted_) {
      noted_ = true;  // the same reason for every rank: said once
      spdlog::info("warm standbys: {}", p.note());
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(p.age()).count();
    spdlog::info("local rank {}: warm standby ready (pid {}, imports in {:.1f} s, RSS {} MiB)",
                 pool_.rank_of(pid).value_or(-1), pid, static_cast<double>(ms) / 1000, p.rss_mib());
    return;
  }
  if (!p.hung_up() && p.failure().empty()) watch(pid);
}

std::optional<pid_t> StandbySet::take(int local_rank, int rank, const Environment& env,
                                      const std::vector<std::string>& argv, int* out_r,
                                      int* err_r) {
  for (auto& [pid, p] : procs_)
    if (p->poll_ready()) pool_.ready(pid);
  auto got = pool_.take(local_rank, env);
  if (auto* cold = std::get_if<StandbyPool::Cold>(&got)) {
    if (cold->first) spdlog::info("rank {}: cold start: {}", rank, cold->reason);
    if (cold->discard > 0) discard(cold->discard);
    return std::nullopt;
  }
  const pid_t pid = std::get<pid_t>(got);
  auto it = procs_.find(pid);
  std::string why;
  if (!it->second->restore_priority(&why)) {
    const std::string msg =
        "cannot restore a standby's CPU/I/O priority (" + why + "; needs root or CAP_SYS_NICE)";
    spdlog::warn("warm standbys off: {}; rank {} starts cold", msg, rank);
    pool_.disable(msg);
    discard(pid);
    for (pid_t other : pool_.pids()) discard(other);
    return std::nullopt;
  }
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (!it->second->activate(
          activation_message(env, it->second->launch_env(), executable_, argv, cwd))) {
    spdlog::info("rank {}: cold start: its standby ended just before it was used", rank);
    discard(pid);
    return std::nullopt;
  }
  it->second->release_pipes(out_r, err_r);
  procs_.erase(it);
  spdlog::info("rank {}: started from its warm standby (pid {})", rank, pid);
  return pid;
}

void StandbySet::discard(pid_t pid) {
  pool_.forget(pid);
  auto it = procs_.find(pid);
  if (it == procs_.end()) return;
  it->second->kill();
  procs_.erase(it);
}

bool StandbySet::on_exit(pid_t pid, int wait_status) {
  if (killed_.erase(pid)) return true;
  auto it = procs_.find(pid);
  if (it == procs_.end()) return false;
  it->second->poll_ready();
  const std::string failure = it->second->failure();
  procs_.erase(it);
  if (!failure.empty()) {
    pool_.forget(pid);
    if (!pool_.disabled()) spdlog::warn("warm standbys off: {}", failure);
    pool_.disable(failure);
    return true;
  }
  const std::string why = WIFSIGNALED(wait_status)
                              ? "killed by signal " + std::to_string(WTERMSIG(wait_status))
                              : "exit code " + std::to_string(exit_code_from_status(wait_status));
  if (auto r = pool_.rank_of(pid)) {
    auto cold = pool_.exited(pid, why);
    if (cold && cold->first)
      spdlog::warn("local rank {}: {}; its next start is cold", *r, cold->reason);
  }
  return true;
}

std::set<pid_t> StandbySet::pids() const {
  std::set<pid_t> out;
  for (const auto& [pid, p] : procs_) out.insert(pid);
  return out;
}

void StandbySet::shutdown() {
  stopped_ = true;
  for (auto& [pid, p] : procs_) {
    p->kill();
    killed_.insert(pid);
  }
  for (pid_t pid : pool_.pids()) pool_.forget(pid);
  procs_.clear();
}

}  // namespace tv
