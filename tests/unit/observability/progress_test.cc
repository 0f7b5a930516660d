#include "launcher/observability/progress.h"

#include <gtest/gtest.h>

#include <vector>

namespace tv {
namespace {

ProgressParser parser(const std::string& spec) {
  auto p = ProgressParser::make(spec, "--progress-regex");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return std::move(*p);
}

// Each line is what the framework prints, built from the format string in its own source
// (docs/observability.md cites file and commit for each).
TEST(ProgressAuto, RslRlLearningIterationLine) {
  // rsl_rl/runners/on_policy_runner.py: str = f" \033[1m Learning iteration
  // {locs['it']}/{locs['tot_iter']} \033[0m "
  auto p = parser("auto").parse(
      "                       \033[1m Learning iteration 1499/1500 \033[0m                       "
      " ");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 1499);
  EXPECT_EQ(p->total, 1500);
}

TEST(ProgressAuto, TqdmBarOfSkrlAndHfTrainer) {
  // tqdm's default bar: '{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining},
  // {rate_fmt}{postfix}]'
  auto p = parser("auto").parse(
      " 45%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x8c     | 4500/10000 "
      "[00:12<00:15, 350.00it/s]");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 4500);
  EXPECT_EQ(p->total, 10000);
  auto hf = parser("auto").parse(
      "  5%|\xe2\x96\x8c         | 50/1000 [00:10<03:10,  5.00it/s, loss=0.1234]");
  ASSERT_TRUE(hf);
  EXPECT_EQ(hf->step, 50);
}

TEST(ProgressAuto, CosmosIterSpeedAndHitCounterLines) {
  // imaginaire IterSpeed callback: f"{iteration} : iter_speed {iter_speed:.2f} seconds per
  // iteration | Loss: {loss:.4f}"
  auto p = parser("auto").parse(
      "[11-30 03:12:48|INFO|callbacks/iter_speed.py:80:every_n_impl] 1200 : iter_speed 2.31 "
      "seconds per iteration | Loss: 0.1234");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 1200);
  EXPECT_FALSE(p->total);
  auto h = parser("auto").parse("Iteration 3: Hit counter: 4/5 | Loss: 0.5000 | Time: 1.20s");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->step, 3);
}

TEST(ProgressAuto, UnrelatedLinesAreNotProgress) {
  auto p = parser("auto");
  EXPECT_FALSE(p.parse("Epoch 3 | loss 0.1"));
  EXPECT_FALSE(p.parse("{'loss': 0.1234, 'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': 0.5}"));
  EXPECT_FALSE(p.parse(""));
}

TEST(ProgressRegex, NamedStepAndTotal) {
  auto p = parser(R"(step (?<step>\d+) of (?<total>\d+))").parse("train step 42 of 100 loss=1");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 42);
  EXPECT_EQ(p->total, 100);
  auto q = parser(R"(it=(?<step>\d+))").parse("it=7");
  ASSERT_TRUE(q);
  EXPECT_FALSE(q->total);
}

TEST(ProgressRegex, NumberTooBigIsIgnored) {
  EXPECT_FALSE(parser(R"(it=(?<step>\d+))").parse("it=99999999999999999999999"));
}

TEST(ProgressRegex, BadRegexIsRefusedNamingTheOption) {
  auto p = ProgressParser::make("step (?<step>\\d+", "--progress-regex");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().exit_code(), 78);
  EXPECT_NE(p.error().message.find("--progress-regex"), std::string::npos);
  auto q = ProgressParser::make(R"(step (\d+))", "TRAINVISOR_PROGRESS_REGEX");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("TRAINVISOR_PROGRESS_REGEX"), std::string::npos);
  EXPECT_NE(q.error().message.find("(?<step>"), std::string::npos);
}

TEST(ProgressTap, SplitsOnCarriageReturnsAndNewlinesAcrossChunks) {
  auto p = parser("auto");
  std::vector<std::int64_t> steps;
  ProgressTap tap(p, [&](const Progress& pr) { steps.push_back(pr.step); });
  tap.feed("\r  1%|  | 1/100 [00:01<00:10, 9.0it/s]\r  2%|  | 2/1");
  tap.feed("00 [00:01<00:10, 9.0it/s]\r  3%|  | 3/100 [00:01<00:10, 9.0it/s]");
  EXPECT_EQ(steps, (std::vector<std::int64_t>{1, 2}));
  tap.feed("\nLearning iteration 4/10\n");
  EXPECT_EQ(steps, (std::vector<std::int64_t>{1, 2, 3, 4}));
  tap.feed("Learning iteration 5/10");
  tap.finish();
  EXPECT_EQ(steps.back(), 5);
}

TEST(ProgressTap, KeepsOnlyTheTailOfARunawaySegment) {
  auto p = parser(R"(it=(?<step>\d+))");
  std::vector<std::int64_t> steps;
  ProgressTap tap(p, [&](const Progress& pr) { steps.push_back(pr.step); });
  tap.feed(std::string(1 << 20, 'x'));
  tap.feed("it=9\n");
  EXPECT_EQ(steps, (std::vector<std::int64_t>{9}));
}

}  // namespace
}  // namespace tv
