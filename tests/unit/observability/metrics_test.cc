#include "launcher/observability/metrics.h"

#include <gtest/gtest.h>

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
