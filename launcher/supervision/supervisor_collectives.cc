// The flight recorder's part of the job's culprit (docs/supervision.md, "The culprit"): before a
// node reports a failure or its Stopped, the dumps torch wrote for its ranks are read in a child
// Python (nccl_trace_summary.py --evidence, a SideQuery: the loop and the signals go on; PID 1
// never unpickles), and the last collective each rank entered goes with the report's evidence.
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include "launcher/supervision/collective_evidence.h"
#include "launcher/supervision/nccl_trace_summary_py.h"
#include "launcher/supervision/supervisor.h"

namespace tv {
namespace {
// Reading a node's dumps: an interpreter's start and a few pickles; a report is held no longer.
constexpr auto kCollectivesDeadline = std::chrono::seconds(10);
}  // namespace

// Reports leave in the order they were asked (a failure's, then the Stopped of the same
// generation): one whose dumps are still being read holds back those asked after it, so a
// node's Stopped never reaches the coordinator before its own root cause.
void Supervisor::with_collectives(int generation, std::vector<RankEvidence> ranks,
                                  std::function<void(std::vector<RankEvidence>)> then) {
  auto report = std::make_shared<PendingReport>();
  report->ranks = std::move(ranks);
  report->then = std::move(then);
  reports_.push_back(report);
  const auto dumps = nccl_dumps(generation);
  if (dumps.empty()) {
    report->ready = true;
    return send_ready_reports();
  }
  std::vector<std::string> argv = {cfg_.executable, "-I", "-c", kNcclTraceSummary, "--evidence"};
  argv.insert(argv.end(), dumps.begin(), dumps.end());
  SideQueryRequest q;
  q.request = SpawnRequest{cfg_.executable, std::move(argv), cfg_.base_env, -1, -1, -1};
  q.deadline = kCollectivesDeadline;
  q.done = [this, generation, report](const SideQueryEnd& end) {
    const bool ok = end.not_started.empty() && !end.timed_out && WIFEXITED(end.wait_status) &&
                    WEXITSTATUS(end.wait_status) == 0;
    const auto found = collectives_from(end.output);
    if (!ok)
      spdlog::warn(
          "generation {}: the flight-recorder dumps could not all be read ({}); the "
          "culprit is decided without them",
          generation,
          !end.not_started.empty() ? end.not_started
          : end.timed_out          ? std::string("timed out")
                                   : "wait status " + std::to_string(end.wait_status));
    else
      spdlog::info(
          "generation {}: {} rank(s)' last collective read from their flight-recorder "
          "dumps",
          generation, found.size());
    if (ok) add_collectives(report->ranks, found, cfg_.layout.node_rank);
    report->ready = true;
    send_ready_reports();
  };
  collective_queries_.push_back(std::make_unique<SideQuery>(io_, time_, spawner_, std::move(q)));
  collective_queries_.back()->start();
}

void Supervisor::send_ready_reports() {
  while (!reports_.empty() && reports_.front()->ready) {
    const auto report = reports_.front();
    reports_.pop_front();
    if (!node_run_.ending()) report->then(std::move(report->ranks));
  }
}

}  // namespace tv
