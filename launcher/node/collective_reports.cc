#include "launcher/node/collective_reports.h"

#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include "launcher/node/collective_evidence.h"
#include "launcher/workers/nccl_trace_summary_py.h"

namespace tv {
namespace {
// Reading a node's dumps: an interpreter's start and a few pickles; a report is held no longer.
constexpr auto kReadDeadline = std::chrono::seconds(10);

std::string why_not_read(const SideQueryEnd& end) {
  if (!end.not_started.empty()) return end.not_started;
  if (end.timed_out) return "timed out";
  return "wait status " + std::to_string(end.wait_status);
}
}  // namespace

CollectiveReports::CollectiveReports(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                                     Setup setup)
    : io_(io), time_(time), spawner_(spawner), setup_(std::move(setup)) {}

void CollectiveReports::add(int generation, const std::vector<std::string>& dumps,
                            std::vector<RankEvidence> ranks, Send send) {
  auto report = std::make_shared<Pending>();
  report->ranks = std::move(ranks);
  report->send = std::move(send);
  queue_.push_back(report);
  if (!dumps.empty()) return read_dumps(generation, dumps, report);
  report->ready = true;
  send_ready();
}

void CollectiveReports::read_dumps(int generation, const std::vector<std::string>& dumps,
                                   const std::shared_ptr<Pending>& report) {
  std::vector<std::string> argv = {setup_.python, "-I", "-c", kNcclTraceSummary, "--evidence"};
  argv.insert(argv.end(), dumps.begin(), dumps.end());
  SideQueryRequest q;
  q.request = SpawnRequest{setup_.python, std::move(argv), setup_.env, -1, -1, -1};
  q.deadline = kReadDeadline;
  q.done = [this, generation, report](const SideQueryEnd& end) {
    const bool ok = end.not_started.empty() && !end.timed_out && WIFEXITED(end.wait_status) &&
                    WEXITSTATUS(end.wait_status) == 0;
    if (ok) {
      const auto found = collectives_from(end.output);
      spdlog::info(
          "generation {}: {} rank(s)' last collective read from their flight-recorder dumps",
          generation, found.size());
      add_collectives(report->ranks, found, setup_.node_rank);
    } else {
      spdlog::warn(
          "generation {}: the flight-recorder dumps could not all be read ({}); the culprit is "
          "decided without them",
          generation, why_not_read(end));
    }
    report->ready = true;
    send_ready();
  };
  readers_.push_back(std::make_unique<SideQuery>(io_, time_, spawner_, std::move(q)));
  readers_.back()->start();
}

void CollectiveReports::send_ready() {
  while (!queue_.empty() && queue_.front()->ready) {
    const auto report = queue_.front();
    queue_.pop_front();
    report->send(std::move(report->ranks));
  }
}

void CollectiveReports::drop_all() {
  queue_.clear();
  readers_.clear();
}

}  // namespace tv
