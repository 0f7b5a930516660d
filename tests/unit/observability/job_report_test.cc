#include "launcher/observability/job_report.h"

#include <gtest/gtest.h>

#include <cmath>

#include "launcher/observability/report_render.h"
#include "tests/unit/observability/ledger_records.h"

namespace tv {
namespace {

using testing::container;
using testing::generation;

Ledger two_containers() {
  Ledger l;
  l.job_id = "job";
  ContainerRecord a = container(0, 1000, 4600, false);  // killed: no end in its record
  a.generations = {generation(0, 1010, 2000, "failed"),
                   generation(1, 2010, std::nullopt, "running")};
  a.generations[0].summary = "rank 0: exit 1: boom";
  a.generations[0].evidence = {"/logs/attempt_0/rank_0/error.json"};
  a.restarts = 1;
  a.checkpoints = CheckpointRecord{30, 20.0, 100.0};
  ContainerRecord b = container(1, 5000, 8600, true);
  b.exit_code = 0;
  b.generations = {generation(0, 5010, 8590, "succeeded")};
  b.checkpoints = CheckpointRecord{10, 40.0, 300.0};
  b.gpus = 16;
  put_record(l, a);
  put_record(l, b);
  return l;
}

TEST(JobReport, TimelineAndGapsAreSecondsFromTheFirstStart) {
  const JobReport r = job_report(two_containers());
  ASSERT_EQ(r.timeline.size(), 2u);
  EXPECT_DOUBLE_EQ(r.timeline[0].start, 0);
  EXPECT_DOUBLE_EQ(r.timeline[0].end, 3600);
  EXPECT_DOUBLE_EQ(r.timeline[1].start, 4000);
  ASSERT_EQ(r.gaps.size(), 1u);
  EXPECT_DOUBLE_EQ(r.gaps[0].start, 3600);
  EXPECT_DOUBLE_EQ(r.gaps[0].end, 4000);
  EXPECT_EQ(r.gaps[0].before, 1);
  // A generation still running when its container was killed ends at its last heartbeat.
  EXPECT_DOUBLE_EQ(r.timeline[0].generations[1].start, 1010);
  EXPECT_DOUBLE_EQ(r.timeline[0].generations[1].end, 3600);
  EXPECT_DOUBLE_EQ(r.outside, 400);
  EXPECT_DOUBLE_EQ(r.wall, 3600 + 3600 + 400);
  EXPECT_DOUBLE_EQ(r.goodput, 7200.0 / 7600.0);
  EXPECT_EQ(r.gpus, 16);
}

TEST(JobReport, FailuresAreFailedGenerationsAndKilledContainers) {
  const JobReport r = job_report(two_containers());
  // Generation 0 of container 0 failed; container 0 itself was killed and container 1 followed.
  EXPECT_EQ(r.advice.failures, 2);
  EXPECT_DOUBLE_EQ(*r.advice.mtbf, 3800);
  // The last container killed with none after it is not (yet) a failure.
  Ledger l = two_containers();
  l.records.back().ended = false;
  EXPECT_EQ(job_report(l).advice.failures, 2);
  l.records.front().ended = true;
  EXPECT_EQ(job_report(l).advice.failures, 1);
}

TEST(JobReport, AdviceIsYoungAndDalyWithTheWasteModel) {
  const JobReport r = job_report(two_containers());
  const CheckpointAdvice& a = r.advice;
  EXPECT_EQ(a.checkpoints, 40);
  EXPECT_DOUBLE_EQ(*a.cost, (30 * 20.0 + 10 * 40.0) / 40);        // 25 s
  EXPECT_DOUBLE_EQ(*a.interval, (30 * 100.0 + 10 * 300.0) / 40);  // 150 s
  EXPECT_DOUBLE_EQ(*a.young, std::sqrt(2 * 25.0 * 3800));         // 435.9 s
  const double ratio = 25.0 / (2 * 3800);
  EXPECT_DOUBLE_EQ(*a.daly,
                   std::sqrt(2 * 25.0 * 3800) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - 25);
  EXPECT_DOUBLE_EQ(*a.waste_observed, 7600 * 25.0 / 150 + 2 * 150 / 2.0);
  EXPECT_DOUBLE_EQ(*a.waste_advised, 7600 * 25.0 / *a.young + 2 * *a.young / 2);
  EXPECT_DOUBLE_EQ(*a.saved, *a.waste_observed - *a.waste_advised);
  EXPECT_GT(*a.saved, 0);
}

TEST(JobReport, YoungMinimizesTheWasteModel) {
  const double c = 30, m = 86400, wall = 30 * 86400.0;
  const int failures = 30;
  const double t = young_interval(c, m);
  EXPECT_NEAR(t, 2276.8, 0.1);  // docs/observability.md's example: C = 30 s, MTBF = 24 h
  for (double other : {t * 0.5, t * 0.9, t * 1.1, t * 2})
    EXPECT_LT(checkpoint_waste(wall, t, c, failures), checkpoint_waste(wall, other, c, failures));
  EXPECT_DOUBLE_EQ(daly_interval(100, 40), 40);  // C >= 2M: the MTBF itself
}

TEST(JobReport, NoFailureOrNoCostLeavesTheAdviceUnknown) {
  Ledger l;
  l.job_id = "quiet";
  ContainerRecord c = container(0, 0, 100, true);
  c.checkpoints = CheckpointRecord{3, 1.0, 30.0};
  put_record(l, c);
  const JobReport r = job_report(l);
  EXPECT_EQ(r.advice.failures, 0);
  EXPECT_FALSE(r.advice.mtbf);
  EXPECT_FALSE(r.advice.young);
  EXPECT_FALSE(r.advice.saved);
  bool said = false;
  for (const auto& f : report_figures(r))
    if (f.id == "young") said = f.value == "unknown (needs C and MTBF)";
  EXPECT_TRUE(said);
}

TEST(JobReport, FoldedContainersCountTheirRestartsAsFailures) {
  Ledger l;
  l.job_id = "long";
  for (int i = 0; i < static_cast<int>(kLedgerRecords) + 2; ++i) {
    ContainerRecord c = container(i, 1000.0 * i, 1000.0 * i + 900, true);
    c.restarts = 1;
    c.exit_code = 1;
    put_record(l, c);  // no generations kept: its restarts and its ending (exit 1) are failures
  }
  const JobReport r = job_report(l);
  EXPECT_EQ(r.folded, 2);
  EXPECT_EQ(r.containers, static_cast<int>(kLedgerRecords) + 2);
  EXPECT_EQ(r.timeline.size(), kLedgerRecords);
  // A folded container's restarts are all that is left of it; each kept one adds its ending.
  EXPECT_EQ(r.advice.failures, 2 * static_cast<int>(kLedgerRecords) + 2);
  EXPECT_DOUBLE_EQ(r.timeline.front().start, 2000);  // from the job's (a folded one's) first start
}

// A container that ended 75 (a lost node) after a generation that ran is a failure, its reason
// the code's meaning: its last generation is shown failed (not stopped) with it, and it counts.
TEST(JobReport, ALostNodesEndingIsAFailureWithItsReason) {
  Ledger l;
  l.job_id = "lost";
  ContainerRecord c = container(0, 1000, 2000, true);
  c.exit_code = 75;
  c.generations = {generation(0, 1000, 1500, "failed"), generation(1, 1500, 2000, "stopped")};
  c.generations[0].summary = "rank 3 (node 1, local 1): exit 1: ValueError: boom";
  put_record(l, c);
  const JobReport r = job_report(l);
  const ReportContainer& rc = r.timeline.at(0);
  EXPECT_EQ(rc.end_failure,
            "exit 75: lost node (a peer node was lost or the rendezvous timed out)");
  EXPECT_EQ(rc.generations[1].outcome, "failed");
  EXPECT_EQ(rc.generations[1].summary, rc.end_failure);
  EXPECT_EQ(rc.generations[0].summary, "rank 3 (node 1, local 1): exit 1: ValueError: boom");
  EXPECT_EQ(r.advice.failures, 2);
  // Before any generation (the rendezvous timed out): the container's own failure.
  l.records[0].generations.clear();
  EXPECT_EQ(job_report(l).advice.failures, 1);
  EXPECT_FALSE(job_report(l).timeline[0].end_failure.empty());
  // A non-zero ending that is its last generation's failure counts once, and 0 is no failure.
  l.records[0].generations = {generation(0, 1000, 2000, "failed")};
  l.records[0].exit_code = 1;
  EXPECT_EQ(job_report(l).advice.failures, 1);
  EXPECT_EQ(job_report(l).timeline[0].end_failure, "");
  l.records[0].generations = {generation(0, 1000, 2000, "succeeded")};
  l.records[0].exit_code = 0;
  EXPECT_EQ(job_report(l).advice.failures, 0);
  // A stop from outside is one too, with its signal.
  l.records[0].generations = {generation(0, 1000, 2000, "stopped")};
  l.records[0].exit_code = 143;
  EXPECT_EQ(job_report(l).timeline[0].end_failure, "exit 143: signal 15 (SIGTERM)");
  EXPECT_EQ(job_report(l).advice.failures, 1);
}

TEST(JobReport, ExitReasonsAreTheDocumentedMeanings) {
  EXPECT_EQ(exit_reason(75), "lost node (a peer node was lost or the rendezvous timed out)");
  EXPECT_EQ(exit_reason(74), "node fault (a GPU of this node failed)");
  EXPECT_EQ(exit_reason(124), "hang (restarts exhausted)");
  EXPECT_EQ(exit_reason(137), "signal 9 (SIGKILL)");
  EXPECT_EQ(exit_reason(128 + 40), "signal 40");
  EXPECT_EQ(exit_reason(78), "configuration or topology error");
  EXPECT_EQ(exit_reason(3),
            "a worker's failure (restarts exhausted, or one that would fail again)");
}

// The evidence of a failure: each path, with the exception line its log ends with.
TEST(JobReport, EvidenceCarriesTheExceptionLineOfItsLog) {
  Ledger l = two_containers();
  GenerationRecord& g = l.records[0].generations[0];
  add_evidence(g, "/logs/attempt_0/rank_0/stderr.log", "ValueError: boom");
  const JobReport r = job_report(l);
  const auto& ev = r.timeline[0].generations[0].evidence;
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].path, "/logs/attempt_0/rank_0/error.json");
  EXPECT_EQ(ev[0].exception, "");
  EXPECT_EQ(ev[1].path, "/logs/attempt_0/rank_0/stderr.log");
  EXPECT_EQ(ev[1].exception, "ValueError: boom");
}

TEST(JobReport, WallClockTimesAreIso8601InUtc) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso8601_utc(1700000000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(iso8601_utc(1700000000.96), "2023-11-14T22:13:21Z");  // rounded, not cut
  EXPECT_EQ(iso8601_utc(1700000000.25, 2), "2023-11-14T22:13:20.25Z");
  EXPECT_EQ(iso8601_utc(1700000000.05, 1), "2023-11-14T22:13:20.1Z");
  EXPECT_EQ(iso8601_utc(1700000000.999, 3), "2023-11-14T22:13:20.999Z");
}

}  // namespace
}  // namespace tv
