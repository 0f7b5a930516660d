#include "launcher/observability/job_report.h"

#include <gtest/gtest.h>

#include <cmath>

#include "launcher/observability/report_render.h"

namespace tv {
namespace {

// A hand-written container: it runs from `start` to `end` (Unix seconds), all of it productive.
ContainerRecord container(int index, double start, double end, bool ended) {
  ContainerRecord c;
  c.index = index;
  c.started_unix = start;
  c.heartbeat_unix = end;
  c.ended = ended;
  c.productive = end - start;
  c.progress_evidence = true;
  return c;
}

GenerationRecord generation(int number, double start, std::optional<double> end,
                            const std::string& outcome) {
  GenerationRecord g;
  g.number = number;
  g.started_unix = start;
  g.ended_unix = end;
  g.outcome = outcome;
  return g;
}

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
    put_record(l, c);  // no generations kept: each container's restarts are its failures
  }
  const JobReport r = job_report(l);
  EXPECT_EQ(r.folded, 2);
  EXPECT_EQ(r.containers, static_cast<int>(kLedgerRecords) + 2);
  EXPECT_EQ(r.timeline.size(), kLedgerRecords);
  EXPECT_EQ(r.advice.failures, static_cast<int>(kLedgerRecords) + 2);
  EXPECT_DOUBLE_EQ(r.timeline.front().start, 2000);  // from the job's (a folded one's) first start
}

}  // namespace
}  // namespace tv
