#include "launcher/observability/ledger.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <numeric>

#include "launcher/observability/gpu_peak.h"
#include "launcher/observability/progress.h"
#include "tests/unit/observability/fake_clock.h"

namespace tv {
namespace {

double causes(const JobTotals& t) {
  return std::accumulate(t.badput.begin(), t.badput.end(), 0.0) + t.outside;
}
double lost(const JobTotals& t) {
  return t.badput[static_cast<std::size_t>(Badput::kLostProgress)];
}

// One container, as its accountant (driven by the fake clock) saw it: it starts at `start_unix`,
// resumes from `resume` (nullopt: nothing to resume from), prints steps first..last one second
// apart after a startup of 2 s, and either ends (exit 0) or is left as its last heartbeat.
ContainerRecord container(int index, double start_unix, std::optional<std::int64_t> resume,
                          std::int64_t first, std::int64_t last, bool ended) {
  FakeClock clock;
  GoodputConfig cfg;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  clock.set(1), g.enter(Phase::kRendezvous);
  clock.set(1.5), g.resume_selected(resume), g.generation_started(0);
  for (std::int64_t k = first; k <= last; ++k) {
    clock.set(3.5 + static_cast<double>(k - first));
    g.progress({k, 100});
  }
  const double end = 3.5 + static_cast<double>(last - first) + 0.5;
  clock.set(end);
  if (ended) g.ending(0);
  clock.set(end + (ended ? 0.25 : 0));
  const double started_unix = start_unix;
  return record_from(g.snapshot(), index, started_unix, started_unix + g.snapshot().wall, ended);
}

TEST(Ledger, OneContainerIsItsOwnAccount) {
  const auto c = container(0, 1000, std::nullopt, 0, 10, true);
  Ledger l;
  l.job_id = "job";
  put_record(l, c);
  const JobTotals t = job_totals(l);
  EXPECT_EQ(t.containers, 1);
  EXPECT_DOUBLE_EQ(t.outside, 0);
  EXPECT_DOUBLE_EQ(t.productive, c.productive);
  EXPECT_NEAR(job_wall(t), c.heartbeat_unix - c.started_unix, 1e-9);
  EXPECT_TRUE(t.progress_evidence);
  EXPECT_EQ(c.start_step, 0);  // a watched dir with nothing in it: the job starts at step 0
  EXPECT_EQ(c.last_step, 10);
}

// Three containers with gaps: the second resumes from step 5 though the first reached step 10 (5
// steps lost across the boundary, 1 s each), the third from step 20 which the second reached.
TEST(Ledger, ContainersInARowAddUpToFirstStartToLastHeartbeat) {
  const auto a = container(0, 1000, std::nullopt, 0, 10, false);  // killed: no end record
  const auto b = container(1, a.heartbeat_unix + 30, 5, 5, 20, false);
  const auto c = container(2, b.heartbeat_unix + 7.5, 20, 20, 30, true);
  Ledger l;
  l.job_id = "job";
  for (const auto& r : {a, b, c}) put_record(l, r);
  const JobTotals t = job_totals(l);
  EXPECT_EQ(t.containers, 3);
  EXPECT_DOUBLE_EQ(t.outside, 37.5);
  EXPECT_EQ(t.lost_steps, 5);
  EXPECT_NEAR(lost(t), 5.0, 1e-9);  // 5 steps x 1 s per step, taken from a's productive time
  EXPECT_NEAR(t.productive, a.productive + b.productive + c.productive - 5.0, 1e-9);
  EXPECT_NEAR(job_wall(t), c.heartbeat_unix - a.started_unix, 1e-9);
  EXPECT_NEAR(t.productive + causes(t), job_wall(t), 1e-9);
  EXPECT_TRUE(t.lost_progress_known);
}

TEST(Ledger, BoundaryLossNeverTakesMoreThanTheProductiveTime) {
  auto a = container(0, 1000, std::nullopt, 0, 3, false);
  a.seconds_per_step = 100;  // 3 steps lost at 100 s each: more than a's productive time
  const auto b = container(1, a.heartbeat_unix + 1, 0, 0, 3, true);
  Ledger l;
  for (const auto& r : {a, b}) put_record(l, r);
  const JobTotals t = job_totals(l);
  EXPECT_NEAR(lost(t), a.productive, 1e-9);
  EXPECT_GE(t.productive, 0);
  EXPECT_NEAR(t.productive + causes(t), job_wall(t), 1e-9);
}

TEST(Ledger, NoStepOnEitherSideMakesTheLossUnmeasurable) {
  auto a = container(0, 1000, std::nullopt, 0, 3, false);
  a.last_step.reset();
  const auto b = container(1, a.heartbeat_unix + 1, 0, 0, 3, true);
  Ledger l;
  for (const auto& r : {a, b}) put_record(l, r);
  EXPECT_FALSE(job_totals(l).lost_progress_known);
}

TEST(Ledger, CompactionKeepsTheBoundAndTheTotals) {
  Ledger l;
  l.job_id = "job";
  JobTotals unfolded;
  double t0 = 1000;
  std::int64_t step = 0;
  for (int i = 0; i < 40; ++i) {
    const auto r = container(next_index(l), t0, step, step, step + 4, i == 39);
    add_container(unfolded, r);
    put_record(l, r);
    EXPECT_LE(l.records.size(), kLedgerRecords);
    t0 = r.heartbeat_unix + 2;
    step += 3;  // each container resumes one step before the last one reached
  }
  EXPECT_EQ(l.records.size(), kLedgerRecords);
  EXPECT_EQ(l.folded.containers, 40 - static_cast<int>(kLedgerRecords));
  EXPECT_EQ(next_index(l), 40);
  const JobTotals t = job_totals(l);
  EXPECT_EQ(t.containers, 40);
  EXPECT_NEAR(t.productive, unfolded.productive, 1e-6);
  EXPECT_NEAR(t.outside, unfolded.outside, 1e-6);
  EXPECT_EQ(t.lost_steps, unfolded.lost_steps);
  EXPECT_EQ(t.lost_steps, 39);
  EXPECT_NEAR(t.productive + causes(t), job_wall(t), 1e-6);
  // The text stays small: 16 records, whatever the job's length.
  EXPECT_LT(ledger_text(l).size(), 32u * 1024);
}

TEST(Ledger, RecordsStayInIndexOrderWhateverOrderTheyArePut) {
  // Two containers that overlap each write their own record last (ledger_file.cc: refresh).
  const auto a = container(0, 1000, std::nullopt, 0, 10, false);
  const auto b = container(1, a.heartbeat_unix + 5, 5, 5, 20, false);
  Ledger in_order, reversed;
  for (const auto& r : {a, b}) put_record(in_order, r);
  for (const auto& r : {b, a}) put_record(reversed, r);
  ASSERT_EQ(reversed.records.size(), 2u);
  EXPECT_EQ(reversed.records[0].index, 0);
  EXPECT_EQ(ledger_text(reversed), ledger_text(in_order));
  put_record(reversed, a);  // the same index again: replaced, not added
  EXPECT_EQ(reversed.records.size(), 2u);
}

TEST(Ledger, TextRoundTrips) {
  Ledger l;
  l.job_id = "sagemaker-job-1";
  for (int i = 0; i < 20; ++i) put_record(l, container(i, 1000 + 50 * i, i, i, i + 3, i == 19));
  auto back = parse_ledger(ledger_text(l));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->job_id, "sagemaker-job-1");
  EXPECT_EQ(ledger_text(*back), ledger_text(l));
  const JobTotals a = job_totals(l), b = job_totals(*back);
  EXPECT_DOUBLE_EQ(job_wall(a), job_wall(b));
  EXPECT_EQ(a.containers, b.containers);
}

// --hang-timeout auto learns its start-up deadline from the longest start-up of every container.
TEST(Ledger, TheLongestStartupOfEveryContainerIsKeptAndReadBack) {
  Ledger l;
  l.job_id = "job";
  put_record(l, container(0, 1000, std::nullopt, 0, 3, true));
  EXPECT_DOUBLE_EQ(*l.records[0].longest_startup, 2);  // started at 1.5, first step at 3.5
  ContainerRecord slow = container(1, 2000, 3, 3, 6, true);
  slow.longest_startup = 250;
  slow.longest_save = 40;
  put_record(l, slow);
  put_record(l, container(2, 3000, 6, 6, 9, true));
  for (int i = 3; i < 30; ++i) put_record(l, container(i, 1000.0 * (i + 1), i, i, i + 1, true));
  EXPECT_DOUBLE_EQ(*job_totals(l).longest_startup, 250);  // folded, still there
  EXPECT_DOUBLE_EQ(*job_totals(l).longest_save, 40);
  auto back = parse_ledger(ledger_text(l));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_DOUBLE_EQ(*job_totals(*back).longest_startup, 250);
  EXPECT_DOUBLE_EQ(*job_totals(*back).longest_save, 40);
  // A ledger written before the field: read as unknown.
  auto j = nlohmann::json::parse(ledger_text(l));
  for (const char* later : {"longest_startup_seconds", "longest_save_seconds"}) {
    j["folded"].erase(later);
    for (auto& r : j["records"]) r.erase(later);
  }
  auto old = parse_ledger(j.dump());
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_FALSE(job_totals(*old).longest_startup);
  EXPECT_FALSE(job_totals(*old).longest_save);
}

TEST(Ledger, CorruptTextIsRefusedSayingWhy) {
  Ledger l;
  l.job_id = "job";
  put_record(l, container(0, 1000, std::nullopt, 0, 3, true));
  const std::string good = ledger_text(l);
  struct Case {
    std::string text, needle;
  };
  auto j = nlohmann::json::parse(good);
  j["records"][0]["productive_seconds"] = "x";
  const std::string wrong_type = j.dump();
  auto swapped = nlohmann::json::parse(good);
  swapped["records"][0]["index"] = -1;
  const Case cases[] = {
      {swapped.dump(), "records[0].index -1 is out of order"},
      {good.substr(0, good.size() / 2), "not JSON"},
      {"[]", "not a trainvisor ledger"},
      {R"({"format": "trainvisor-ledger", "version": 9})", "version 9, expected 1"},
      {R"({"format": "trainvisor-ledger", "version": 1, "job_id": 3})", "job_id"},
      {wrong_type, "productive_seconds"},
  };
  for (const auto& c : cases) {
    auto r = parse_ledger(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << r.error().message;
  }
}

TEST(Ledger, AnotherJobsLedgerKeepsItsOwnId) {
  // The caller refuses a ledger whose id is not its job's (launcher/observability/ledger_file.cc);
  // the parse keeps the id it read so it can.
  Ledger l;
  l.job_id = "other-job";
  auto r = parse_ledger(ledger_text(l));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->job_id, "other-job");
  EXPECT_EQ(job_totals(*r).containers, 0);
}

TEST(GpuPeak, DatasheetDenseBf16) {
  struct Case {
    const char* name;
    double tflops;
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3", 989.4}, {"NVIDIA H100 PCIe", 756}, {"NVIDIA H100 NVL", 835},
      {"NVIDIA H200", 989.4},           {"NVIDIA B200", 2250},     {"NVIDIA A100-SXM4-80GB", 312},
      {"NVIDIA L40S", 362.05},          {"NVIDIA L4", 121},        {"NVIDIA A10G", 125},
  };
  for (const auto& c : cases) {
    auto p = gpu_peak_bf16(c.name);
    ASSERT_TRUE(p) << c.name;
    EXPECT_DOUBLE_EQ(p->flops, c.tflops * 1e12) << c.name;
  }
  EXPECT_FALSE(gpu_peak_bf16("Tesla T4"));
  EXPECT_FALSE(gpu_peak_bf16(""));
}

TEST(Mfu, FromFlopsPerStepSecondsPerStepAndPeak) {
  FakeClock clock;
  GoodputConfig cfg;
  cfg.flops_per_step = 4e15;
  cfg.peak_flops_per_gpu = 989.4e12;
  cfg.gpus = 8;
  GoodputAccountant g(clock, cfg);
  EXPECT_FALSE(g.snapshot().mfu);  // no step time yet
  g.generation_started(0);
  for (int k = 0; k <= 10; ++k) clock.set(2 + 0.5 * k), g.progress({k, 100});
  const auto s = g.snapshot();
  ASSERT_TRUE(s.mfu);
  EXPECT_NEAR(*s.mfu, 4e15 / 0.5 / (8 * 989.4e12), 1e-12);
  cfg.peak_flops_per_gpu.reset();
  GoodputAccountant unknown(clock, cfg);
  EXPECT_FALSE(unknown.snapshot().mfu);
}

TEST(Mfu, FromTheFrameworksOwnTflopsWithoutFlopsPerStep) {
  auto parser = ProgressParser::make(R"(step (?<step>\d+) .*tflops: (?<tflops>[0-9.]+))", "--x");
  ASSERT_TRUE(parser);
  EXPECT_TRUE(parser->has_tflops());
  auto p = parser->parse("step 12  loss: 2.1  tflops: 494.70  mfu: 50%");
  ASSERT_TRUE(p && p->tflops);
  EXPECT_DOUBLE_EQ(*p->tflops, 494.7);
  FakeClock clock;
  GoodputConfig cfg;
  cfg.peak_flops_per_gpu = 989.4e12;
  GoodputAccountant g(clock, cfg);
  g.generation_started(0);
  g.progress(*p);
  ASSERT_TRUE(g.snapshot().mfu);
  EXPECT_NEAR(*g.snapshot().mfu, 0.5, 1e-12);
  EXPECT_FALSE(ProgressParser::make("step (?<step>\\d+)", "--x")->has_tflops());
}

TEST(HonestGoodput, RunningWithoutEvidenceIsAnUpperBound) {
  FakeClock clock;
  GoodputAccountant g(clock, GoodputConfig{});
  g.generation_started(0);
  clock.set(10);
  auto s = g.snapshot();
  EXPECT_FALSE(s.progress_evidence);
  EXPECT_DOUBLE_EQ(s.goodput, 1.0);  // the figure counts every running second
  g.checkpoint_seen({0.5, -1, 10, 3});
  EXPECT_FALSE(g.snapshot().progress_evidence);  // a step was made, but when is not known
  GoodputAccountant p(clock, GoodputConfig{});
  p.generation_started(0);
  p.progress({1, 0});
  EXPECT_TRUE(p.snapshot().progress_evidence);
}

}  // namespace
}  // namespace tv
