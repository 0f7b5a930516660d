// StandbySet: the Supervisor's warm standbys (docs/standby.md) — one StandbyProcess per local
// rank, the StandbyPool that decides warm or cold, and the one log line per reason for a cold
// start. Runs on the Supervisor's event loop; spawns through the Supervisor's Spawner (Init's, the
// one spawner and the one waiter) with the Supervisor's exit callback, which hands exits of pids
// that are not workers to on_exit here. Its standbys' ages are on the Supervisor's LoopTime.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/loop_time.h"
#include "launcher/workers/spawner.h"
#include "launcher/workers/standby.h"
#include "launcher/workers/standby_process.h"

namespace tv {

class StandbySet {
 public:
  // nullptr when standbys are off: --warm-standby off, or auto with a command that is not Python
  // (said once with on).
  static std::unique_ptr<StandbySet> create(boost::asio::io_context& io, LoopTime& time,
                                            const WarmStandbyConfig& cfg,
                                            const std::string& executable,
                                            const std::vector<std::string>& argv, int local_ranks,
                                            Spawner& spawner, Spawner::OnExit on_exit);

  // Starts a standby for every rank that has none, with that rank's environment.
  void prepare(const std::vector<Environment>& rank_env);
  // A ready, compatible standby becomes the worker: priority restored, environment, argv and
  // working directory sent. Its pid, and the read ends of its output pipes; nullopt = start cold
  // (the reason logged once).
  std::optional<pid_t> take(int local_rank, int rank, const Environment& env,
                            const std::vector<std::string>& argv, int* out_r, int* err_r);
  // A child exited: true when it was a standby (then it is forgotten).
  bool on_exit(pid_t pid, int wait_status);
  // Live standby pids (spared by the leftover-process cleanup).
  std::set<pid_t> pids() const;
  // Kills every standby (end of the run).
  void shutdown();
  // Every standby shutdown() killed has been reaped (on_exit).
  bool all_gone() const { return killed_.empty(); }

  StandbySet(boost::asio::io_context& io, LoopTime& time, PythonCommand py, WarmStandbyConfig cfg,
             std::string executable, int local_ranks, Spawner& spawner, Spawner::OnExit on_exit);

 private:
  void discard(pid_t pid);
  void watch(pid_t pid);
  void on_said(pid_t pid);

  boost::asio::io_context& io_;
  LoopTime& time_;
  PythonCommand py_;
  WarmStandbyConfig cfg_;
  std::string executable_;
  Spawner& spawner_;
  Spawner::OnExit on_exit_;
  StandbyPool pool_;
  std::map<pid_t, std::unique_ptr<StandbyProcess>> procs_;
  std::set<pid_t> killed_;  // by shutdown(), not reaped yet
  bool stopped_ = false;
  bool noted_ = false;  // a standby's note (it imports nothing) was logged
};

}  // namespace tv
