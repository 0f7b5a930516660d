#include "launcher/observability/metrics.h"

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <regex>
#include <set>
#include <sstream>

#include "launcher/observability/retry_metrics.h"
#include "launcher/observability/summary.h"
#include "tests/unit/observability/fake_clock.h"

namespace tv {
namespace {

GoodputSnapshot sample() {
  FakeClock clock;
  GoodputConfig cfg;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  clock.set(1), g.generation_started(0), g.worker_started();
  clock.set(2), g.progress({3, 10});
  clock.set(3), g.progress({4, 10});
  clock.set(4), g.checkpoint_seen({0.25, -1, 4096, 4});
  clock.set(5), g.worker_exited(1), g.generation_failed(0);
  clock.set(6), g.generation_started(1);
  clock.set(8);
  return g.snapshot();
}

// Every sample's family has HELP and TYPE lines before it; counters end in _total; no NaN.
TEST(Metrics, ExpositionFormatIsWellFormed) {
  const std::string text = render_metrics(sample(), {"1.2.3", 0, 1});
  std::istringstream in(text);
  std::set<std::string> typed;
  std::string line;
  while (std::getline(in, line)) {
    ASSERT_FALSE(line.empty());
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      if (type == "counter") {
        EXPECT_TRUE(name.ends_with("_total")) << name;
      }
      typed.insert(name);
      continue;
    }
    if (line[0] == '#') continue;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_TRUE(name.rfind("trainvisor_", 0) == 0) << line;
    EXPECT_TRUE(typed.count(name)) << "no TYPE before " << line;
    EXPECT_EQ(line.find("nan"), std::string::npos) << line;
  }
}

TEST(Metrics, CarriesTheFigures) {
  const std::string text = render_metrics(sample(), {"1.2.3", 0, 1});
  for (const char* expected :
       {"trainvisor_restarts_total 1\n", "trainvisor_generation 1\n",
        "trainvisor_progress_step 4\n", "trainvisor_progress_total_steps 10\n",
        "trainvisor_checkpoints_total 1\n", "trainvisor_checkpoint_size_bytes 4096\n",
        "trainvisor_checkpoint_write_seconds 0.25\n",
        "trainvisor_worker_exits_total{exit_code=\"1\"} 1\n",
        "trainvisor_phase_seconds_total{phase=\"restarting\"} 1\n",
        "trainvisor_current_phase{phase=\"running\"} 1\n",
        "trainvisor_info{version=\"1.2.3\",node_rank=\"0\",nnodes=\"1\"} 1\n",
        "trainvisor_mtbf_seconds{source=\"observed\"} 8\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
}

TEST(Metrics, UnknownFiguresAreLeftOut) {
  FakeClock clock;
  GoodputAccountant g(clock, {});
  const std::string text = render_metrics(g.snapshot(), {"1", 0, 1});
  EXPECT_EQ(text.find("trainvisor_progress_step "), std::string::npos);
  EXPECT_EQ(text.find("trainvisor_checkpoint_age_seconds"), std::string::npos);
  EXPECT_EQ(text.find("trainvisor_checkpoint_interval_advised_seconds"), std::string::npos);
}

TEST(Summary, TableHasEveryCauseAndTheAdvice) {
  const std::string t = format_summary_table(sample(), {"1", 0, 2});
  for (const char* expected :
       {"node 0 of 2: job-level figures", "wall time", "productive", "badput: lost_progress",
        "badput: checkpoint_stall", "restarts", "advised interval", "Young/Daly"})
    EXPECT_NE(t.find(expected), std::string::npos) << expected << "\nin:\n" << t;
}

TEST(Summary, FiguresEndInOneColumn) {
  const std::string t = format_summary_table(sample(), {"1", 0, 1});
  // "  <label> <figure> s ...": the labels are padded wide enough for the longest one
  // ("badput: checkpoint_stall"), so every figure ends in the same column.
  std::set<std::size_t> columns;
  std::istringstream lines(t);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("  wall time", 0) == 0 || line.rfind("  productive", 0) == 0 ||
        line.rfind("  badput: ", 0) == 0)
      if (std::smatch m; std::regex_search(line, m, std::regex(R"([0-9.]+ s)")))
        columns.insert(static_cast<std::size_t>(m.position(0) + m.length(0)));
  EXPECT_EQ(columns.size(), 1u) << t;
}

TEST(Summary, JsonSharesAddUpToOne) {
  const auto s = sample();
  const auto j = summary_json(s, {"1", 0, 1});
  double total = j["productive_seconds"].get<double>() / j["wall_seconds"].get<double>();
  for (const auto& [name, v] : j["badput"].items()) total += v["share"].get<double>();
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_EQ(j["restarts"], 1);
}

TEST(HonestGoodput, WithoutEvidenceTheFigureSaysItIsAnUpperBound) {
  FakeClock clock;
  GoodputAccountant g(clock, {});
  clock.set(1), g.generation_started(0);
  clock.set(10);
  const auto s = g.snapshot();
  const MetricsIdentity id{"1", 0, 1};
  EXPECT_NE(render_metrics(s, id).find("trainvisor_goodput_upper_bound 1\n"), std::string::npos);
  const std::string t = format_summary_table(s, id);
  EXPECT_NE(t.find("<= 0.900 (upper bound: no progress signal: set --progress-regex)"),
            std::string::npos)
      << t;
  const auto j = summary_json(s, id);
  EXPECT_EQ(j["goodput_upper_bound"], true);
  EXPECT_EQ(j["goodput_note"], "no progress signal: set --progress-regex");
  // With progress lines the same figure is plain.
  const auto with = sample();
  EXPECT_NE(render_metrics(with, id).find("trainvisor_goodput_upper_bound 0\n"), std::string::npos);
  EXPECT_EQ(format_summary_table(with, id).find("upper bound"), std::string::npos);
  EXPECT_EQ(summary_json(with, id)["goodput_upper_bound"], false);
}

// The one-line record SageMaker's MetricDefinitions read (render/sagemaker.cc): stable names, one
// line, the step once seen, the job's goodput with a ledger; an upper bound is a flag, not "<=".
TEST(MetricsLine, OneStableLine) {
  const auto with = sample();
  const std::string line = format_metrics_line(with, std::nullopt);
  EXPECT_EQ(line, fmt::format("trainvisor metrics: goodput={:.3f} goodput_upper_bound=0 "
                              "productive_s={:.1f} wall_s={:.1f} restarts=1 step=4",
                              with.goodput, with.productive, with.wall));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  FakeClock clock;
  GoodputAccountant g(clock, {});
  clock.set(1), g.generation_started(0);
  clock.set(10);
  JobTotals job;
  const std::string bound = format_metrics_line(g.snapshot(), job);
  EXPECT_NE(bound.find("trainvisor metrics: goodput=0.900 goodput_upper_bound=1 "),
            std::string::npos)
      << bound;
  EXPECT_EQ(bound.find(" step="), std::string::npos);
  EXPECT_NE(bound.find(" job_goodput=0.000"), std::string::npos) << bound;
}

TEST(Metrics, MfuAndThePeakBesideGoodput) {
  FakeClock clock;
  GoodputConfig cfg;
  cfg.flops_per_step = 1e15;
  cfg.peak_flops_per_gpu = 989.4e12;
  cfg.gpu_name = "NVIDIA H100 \"80GB\"";
  cfg.gpus = 2;
  GoodputAccountant g(clock, cfg);
  g.generation_started(0);
  for (int k = 0; k <= 4; ++k) clock.set(1 + k), g.progress({k, 0});
  const std::string text = render_metrics(g.snapshot(), {"1", 0, 1});
  EXPECT_NE(
      text.find("trainvisor_gpu_peak_flops{gpu=\"NVIDIA H100 \\\"80GB\\\"\"} 989400000000000\n"),
      std::string::npos)
      << text;
  const double mfu = 1e15 / 1.0 / (2 * 989.4e12);
  EXPECT_NE(text.find(fmt::format("trainvisor_mfu_ratio {}\n", mfu)), std::string::npos) << text;
  EXPECT_NE(format_summary_table(g.snapshot(), {"1", 0, 1}).find("MFU"), std::string::npos);
}

TEST(Metrics, JobSeriesAddUpAndNameOutside) {
  JobTotals t;
  t.containers = 3;
  t.productive = 50;
  t.badput[static_cast<std::size_t>(Badput::kStartup)] = 20;
  t.outside = 30;
  t.progress_evidence = true;
  const std::string text = render_job_metrics(t);
  for (const char* expected :
       {"trainvisor_job_containers 3\n", "trainvisor_job_wall_seconds 100\n",
        "trainvisor_job_badput_seconds{cause=\"outside\"} 30\n",
        "trainvisor_job_goodput_ratio 0.5\n", "trainvisor_job_goodput_upper_bound 0\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  const auto j = job_summary_json(t);
  EXPECT_EQ(j["badput_seconds"]["outside"], 30.0);
  EXPECT_NE(format_job_summary(t).find("badput: outside"), std::string::npos);
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

TEST(RetryDecisions, OneCounterFamilyWithARuleLabelLeftOutUntilAnyDecision) {
  EXPECT_EQ(render_retry_decisions({}), "");
  const std::string text = render_retry_decisions({{"first_failure", 1}, {"same_failure", 1}});
  EXPECT_NE(text.find("# TYPE trainvisor_retry_decisions_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("trainvisor_retry_decisions_total{rule=\"first_failure\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("trainvisor_retry_decisions_total{rule=\"same_failure\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(text.find("# TYPE", text.find("# TYPE") + 1), std::string::npos);  // one family
}

}  // namespace
}  // namespace tv
