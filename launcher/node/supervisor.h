// Supervisor: the one event loop of `trainvisor run`, and a translator between it and the
// owners that decide. It runs the Asio io_context on which signals (routed from Init while run()
// runs), the cluster's events, timers (hang checks) and the workers' events (NodeWorkers: child
// exits, output, the grace timer, the group's outcome) arrive; it turns each into the event of
// the owner that decides (NodeRun: how this node's run ends; HangCheck: a hang; LocalRootCause:
// this node's root cause and its report; SaveBeforeStop: a save before a stop; GpuEventReader: a
// GPU event) and carries out what they decide through the owners of the resources (NodeWorkers:
// the WorkerGroup and every worker's process; BesideWorkers, StacksCollection, EvidenceFiles,
// CollectiveReports). Its own files: supervisor_failure.cc (what LocalRootCause is given, where
// its report goes), supervisor_hang.cc (the hang check's events and its verdict carried out),
// supervisor_resume.cc, supervisor_stacks.cc, supervisor_gpu.cc.
//
// A start, a failure and a restart (launcher/node/README.md has the whole flow):
//   Cluster.start(plan) -> find the resume checkpoint (hook) -> WorkerGroup.start -> spawn each
//   worker -> ... a worker exits non-zero (Init reaps it) -> its output is drained -> WorkerGroup
//   fails the generation -> root cause recorded, Cluster.report_failure -> SIGTERM the others,
//   SIGKILL after the grace period -> all gone, leftovers killed -> Cluster.report_stopped -> the
//   Cluster decides: start(next plan) after a backoff, or give_up(root cause).
//
// Its seams: processes through the Spawner (spawner.h), signals through a SignalSource
// (common/signal_source.h; Init in product code), every timer and every "now" it compares against
// through one LoopTime (common/loop_time.h), every file it reads through the FileSystem (cfg.fs;
// the error files too). Error-file mtimes, reap times and failed_at_ns stay wall clock (the
// wall_clock_ns hook): they are compared with files other processes wrote and across nodes.
//
// How it runs: run() = begin(); io.run(); end(). begin() routes the signals here, starts the GPU
// health watch, writes the evidence hook, joins the cluster and arms the hang check; the loop
// runs until the job is over (over(): every ending calls io.stop() after setting it); end()
// releases the workers, writes the root cause and returns the exit code. A unit test calls
// begin(), drives the loop and the clock itself (tests/unit/fakes/sim_loop_time.h polls the
// io_context), and calls end() once over() is true (tests/unit/node/supervisor_test.cc).
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/init.h"
#include "common/loop_time.h"
#include "common/signal_source.h"
#include "launcher/job/cluster.h"
#include "launcher/job/root_cause_judge.h"
#include "launcher/node/beside_workers.h"
#include "launcher/node/collective_reports.h"
#include "launcher/node/gpu_verdict.h"
#include "launcher/node/local_root_cause.h"
#include "launcher/node/node_run.h"
#include "launcher/node/node_workers.h"
#include "launcher/node/resume_wait.h"
#include "launcher/node/save_before_stop.h"
#include "launcher/node/supervisor_config.h"
#include "launcher/workers/evidence_files.h"
#include "launcher/workers/hang_check.h"
#include "launcher/workers/heartbeat_reads.h"
#include "launcher/workers/spawner.h"
#include "launcher/workers/stacks_collection.h"
#include "launcher/workers/standby_set.h"
#include "launcher/workers/worker_group.h"
#include "launcher/workers/worker_roster.h"
#include "launcher/workers/worker_start.h"

namespace tv {

class Supervisor final : private NodeRunActions {
 public:
  // `time` and `signals` default to the real ones (the steady clock, Init); they must outlive it.
  Supervisor(boost::asio::io_context& io, SupervisorConfig cfg, Cluster& cluster, Spawner& spawner,
             LoopTime& time = real_loop_time(), SignalSource& signals = Init::instance());
  // Joins the cluster and runs the event loop until the job is over; returns the exit code.
  int run();
  // run() in its three parts, for a caller that drives the loop itself (a unit test): begin()
  // once, then run the io_context's handlers until over(), then end() once.
  void begin();
  bool over() const { return node_run_.over(); }
  // A complete checkpoint the watcher reported (posted to the loop by cli/): the newest known,
  // and the save --save-signal waits for (SaveBeforeStop).
  void checkpoint_complete(const SavedCheckpoint& c) { saves_.checkpoint_complete(c); }
  int end();

  // --hang-timeout auto's events from outside the loop's own sources, on the loop (wired by
  // cli/): a progress step parsed from any worker's output (a new step when above the highest of
  // the generation), a checkpoint save the watcher saw complete (its write time, -1 unknown).
  void progress_seen(std::int64_t step);
  void checkpoint_saved(double write_seconds);
  // The checkpoint watcher saw a save under way (not complete yet): the stall clock waits for it.
  void checkpoint_save_started();

 private:
  Cluster::Events cluster_events();
  NodeWorkers::Events worker_events();
  void on_signal(int sig);
  // NodeRunActions: what node_run_ decides, carried out on this node's resources.
  void start_generation(const GenerationPlan& plan) override;
  // supervisor_resume.cc: the generation's resume lookup runs off the loop (lookup_); its answer
  // starts the workers. A stop, or the cluster's stop of that generation, drops it.
  void look_up_resume(const GenerationPlan& plan);
  void resume_found(const GenerationPlan& plan, std::optional<ResumeTarget> target);
  // The generation's rank directories are opened off the loop too (dirs_call_); the answer
  // starts the workers (launch_workers), or refuses the run with 78.
  void start_workers(const GenerationPlan& plan);
  void rank_dirs_opened(const GenerationPlan& plan, Result<std::vector<UniqueFd>> opened);
  void launch_workers(const GenerationPlan& plan);
  // True when `generation`'s start was under way off the loop (now dropped: it starts nothing).
  bool drop_start_of(int generation);
  void leave(int exit_code, int signal, const std::string& reason) override;
  bool workers_running() const override { return workers_.group().running() > 0; }
  void stop_workers(int sig) override { workers_.group().stop(sig); }
  // --save-signal: the save signal, then the stop (stop_with) once saved or not (SaveBeforeStop).
  void save_then_stop(int sig, int stop_with) override { saves_.begin(sig, stop_with); }
  void kill_workers_now() override { workers_.group().kill_now(); }
  void report_stopped(int generation) override;
  void end_loop() override { io_.stop(); }
  void forward_signal(int sig);
  // supervisor_hang.cc: hangs_ looks at the running workers each tick; a verdict is carried out.
  void schedule_hang_check();
  void check_hangs();
  void declare_hang(const HangVerdict& v);
  double seconds_now() const;
  const FileSystem& fs() const;  // cfg_.fs, else the real one
  // The wall clock failures are ordered on (failed_at_ns): cfg_.wall_clock_ns, else the system
  // clock (NodeWorkers orders reap times on the same).
  std::chrono::system_clock::time_point wall_now() const;
  const RankDirs& rank_dirs() const;  // cfg_.rank_dirs, else the real one
  void report_root_cause();
  void release_workers();
  // The GPU health watch's events: a fatal one ends this node with
  // exit_code_of(ErrorKind::kNodeFault).
  void on_gpu_health(const GpuHealthEvent& e);
  // supervisor_stacks.cc: every rank's stacks collected (stacks signal, a bounded wait, the
  // report); the lines a failure report carries.
  void collect_stacks(const std::string& why);  // on request: no hang's evidence
  // A hang's collection (StacksCollection::hang_then), then `then`; at once with --hang-stacks off.
  void stacks_then(const std::string& why, std::function<void()> then);
  std::string evidence_of(int generation) const;
  // `send` gets `ranks` with the last collective each of this node's ranks entered (reports_).
  void report_with_collectives(int generation, std::vector<RankEvidence> ranks,
                               CollectiveReports::Send send);
  // The failure side (supervisor_failure.cc): what LocalRootCause is given, where its report goes.
  LocalRootCause::Hooks root_cause_hooks();
  void send_failure(int generation, NodeFailure f);
  void on_cluster_stop(const NodeFailure& f);
  void on_peer_failure(const NodeFailure& f);
  // RunObserver::generation_failed through failed_once_: this node's own failure and the
  // cluster's stop for the same generation both arrive on the failing node.
  void observe_failure(int generation);

  boost::asio::io_context& io_;
  SupervisorConfig cfg_;
  Cluster& cluster_;
  Spawner& spawner_;
  LoopTime& time_;
  SignalSource& signals_;
  EvidenceFiles evidence_;  // the worker hook, the pid file, the evidence files and dumps
  NodeWorkers workers_;     // the WorkerGroup and every worker's process, pipes, signals, grace
  NodeRun node_run_;        // how this node's run goes and ends: the outcome and the exit code
  SaveBeforeStop saves_;    // --save-signal: the save signal, the wait, the stop after it
  LoopTimer hang_timer_;
  HangCheck hangs_;  // --hang-timeout S or auto: the verdicts and their reasons
  // While the loop runs (begin() to end()): the signal route, and the work guard that keeps
  // io.run() waiting for the exits and signals Init's thread posts.
  std::unique_ptr<SignalRoute> route_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      keep_running_;
  BesideWorkers beside_;       // the GPU watch and the side queries, for the whole run
  GpuEventReader gpu_events_;  // what each GPU health event means for this node's run
  GenerationPlan plan_;
  std::optional<ResumeTarget> resume_;  // this generation's checkpoint
  ResumeWait lookup_;                   // its lookup, off the loop, while it runs
  OffLoopCall dirs_call_;               // its rank directories' opening, off the loop
  std::optional<int> preparing_;        // the generation whose lookup or opening runs
  HeartbeatReads heartbeats_;           // the heartbeat files, read off the loop each hang check
  LocalRootCause root_cause_;           // which worker failed first here, its report, the files
  StacksCollection stacks_;
  CollectiveReports reports_;  // failures and Stopped with their ranks' last collectives
  FailedOnce failed_once_;     // RunObserver::generation_failed at most once per generation
};

}  // namespace tv
