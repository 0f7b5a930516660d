#include "launcher/workers/stall_detector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace tv {
namespace {

TEST(StallDetector, NoFirstStepWithinTheStartupDeadlineIsAStartupVerdict) {
  StallDetector d({.floor = 10, .startup_timeout = 20.0});
  d.generation_started(100);
  EXPECT_FALSE(d.verdict(119.9));
  auto v = d.verdict(120);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->in_startup);
  EXPECT_DOUBLE_EQ(v->since, 100);
  EXPECT_NE(v->reason.find("start-up: no first step"), std::string::npos) << v->reason;
}

TEST(StallDetector, LearnedStartupIsThreeTimesTheLongestSeenWithAFloor) {
  EXPECT_DOUBLE_EQ(StallDetector({}).startup_deadline(), kStartupFloor);
  EXPECT_DOUBLE_EQ(StallDetector({.prior_longest_startup = 400.0}).startup_deadline(), 1200);
  StallDetector d({});
  d.generation_started(0);
  d.step(900);  // this generation's start-up: 900 s
  EXPECT_DOUBLE_EQ(*d.longest_startup(), 900);
  EXPECT_DOUBLE_EQ(d.startup_deadline(), 2700);
  EXPECT_NE(d.describe().find("learned: 3 x the longest start-up seen, 900.0 s"), std::string::npos)
      << d.describe();
  // An explicit --startup-timeout is never learned over.
  StallDetector e({.startup_timeout = 20.0, .prior_longest_startup = 400.0});
  EXPECT_DOUBLE_EQ(e.startup_deadline(), 20);
}

TEST(StallDetector, AfterTheWarmupNoNewStepPastTheDeadlineIsAStall) {
  StallDetector d({.floor = 2, .startup_timeout = 50.0});
  d.generation_started(0);
  double t = 5;
  for (int i = 0; i < 20; ++i, t += 1) d.step(t);
  const double last = t - 1;
  EXPECT_FALSE(d.verdict(last + 1.99));  // 2 x p99 (1 s) = 2 s
  auto v = d.verdict(last + 2);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->in_startup);
  EXPECT_DOUBLE_EQ(v->since, last);
  EXPECT_NE(v->reason.find("stall: no new step"), std::string::npos) << v->reason;
}

TEST(StallDetector, TheFloorHoldsForShortSteps) {
  StallDetector d({.floor = 30, .startup_timeout = 50.0});
  d.generation_started(0);
  for (int i = 0; i < 20; ++i) d.step(1 + 0.1 * i);
  EXPECT_FALSE(d.verdict(2.9 + 29.9));
  EXPECT_TRUE(d.verdict(2.9 + 30));
}

TEST(StallDetector, WarmupStepsHaveTheStartupDeadline) {
  StallDetector d({.floor = 1, .startup_timeout = 100.0});
  d.generation_started(0);
  d.step(10);
  d.step(11);
  EXPECT_FALSE(d.verdict(11 + 99));
  auto v = d.verdict(11 + 100);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->in_startup);
}

TEST(StallDetector, ASaveUnderWayHoldsTheClockUpToItsCap) {
  StallDetector d({.floor = 2, .startup_timeout = 50.0, .save_starts_known = true});
  d.generation_started(0);
  for (int i = 0; i < 10; ++i) d.step(1 + i);
  d.save_started(10.5);
  EXPECT_FALSE(d.verdict(10.5 + 49));
  EXPECT_FALSE(d.verdict(10.5 + 99));
  auto v = d.verdict(10.5 + 100);  // cap: 2 x the start-up deadline (no save measured yet)
  ASSERT_TRUE(v);
  EXPECT_NE(v->reason.find("checkpoint save"), std::string::npos) << v->reason;
  d.save_ended(40, 29.5);
  EXPECT_FALSE(d.verdict(41.9));  // the clock restarts at the save's end
  EXPECT_TRUE(d.verdict(42));
}

TEST(StallDetector, ASaveSeenOnlyWhenCompleteLengthensTheDeadlineByTheLongestSave) {
  StallDetector d({.floor = 2, .startup_timeout = 50.0});
  d.generation_started(0);
  for (int i = 0; i < 10; ++i) d.step(1 + i);
  d.save_ended(12, 1.5);
  d.step(13);
  EXPECT_FALSE(d.verdict(13 + 4.2));  // 2 s + 1.5 x 1.5 s
  EXPECT_TRUE(d.verdict(13 + 4.25));
}

// A save measured by an earlier container (the ledger): no wait for the first one of this one.
TEST(StallDetector, ASaveKnownFromTheLedgerCountsAsMeasured) {
  StallDetector fresh({.floor = 2, .startup_timeout = 50.0, .saves_expected = true});
  StallDetector known(
      {.floor = 2, .startup_timeout = 50.0, .prior_longest_save = 4.0, .saves_expected = true});
  for (StallDetector* d : {&fresh, &known}) {
    d->generation_started(0);
    for (int i = 0; i < 10; ++i) d->step(1 + i);
  }
  EXPECT_FALSE(fresh.verdict(10 + 99));   // 2 x the start-up deadline
  EXPECT_FALSE(known.verdict(10 + 7.9));  // 2 s + 1.5 x 4 s
  EXPECT_TRUE(known.verdict(10 + 8));
}

TEST(StallDetector, ANewGenerationStartsItsStartupAgain) {
  StallDetector d({.floor = 2, .startup_timeout = 30.0});
  d.generation_started(0);
  for (int i = 0; i < 10; ++i) d.step(1 + i);
  d.generation_started(100);
  EXPECT_FALSE(d.verdict(129));
  auto v = d.verdict(130);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->in_startup);
}

// One simulated run: a start-up of minutes, steps with a median of `median` seconds (lognormal,
// with a slow step now and then), a save every 40 steps taking 10 x a step, then a stall. Returns
// false on a false verdict; `caught` is how long after the last step the verdict came.
struct SimRun {
  bool false_verdict = false;
  double caught_after = 0;
  double median = 0;
};

SimRun simulate(unsigned seed, bool save_starts_known) {
  std::mt19937_64 rng(seed);
  const double median = std::uniform_real_distribution<double>(20, 60)(rng);
  std::lognormal_distribution<double> step_time(std::log(median), 0.08);
  std::uniform_real_distribution<double> startup(60, 480), unit(0, 1);
  StallDetector d({.save_starts_known = save_starts_known, .saves_expected = true});
  SimRun r;
  std::vector<double> steps;
  double t = 0;
  // Asks for the verdict just before `next` (the verdict only grows between events) and at a few
  // points on the way.
  auto quiet_until = [&](double next) {
    for (double at : {t + (next - t) / 2, next - 1e-6})
      if (auto v = d.verdict(at)) {
        if (!r.false_verdict) ADD_FAILURE() << "at " << at << ": " << v->reason;
        r.false_verdict = true;
      }
  };
  auto advance = [&](double dt) {
    quiet_until(t + dt);
    t += dt;
  };
  for (int generation = 0; generation < 2; ++generation) {
    d.generation_started(t);
    advance(startup(rng));
    d.step(t);
    for (int i = 1; i < 200; ++i) {
      double dt = step_time(rng);
      if (i <= 3) dt *= 3;              // compilation in the first steps
      if (unit(rng) < 0.01) dt *= 1.2;  // a slow step now and then
      if (i % 40 == 0) {
        const double save = 10 * median * std::uniform_real_distribution<double>(0.8, 1.2)(rng);
        if (save_starts_known) d.save_started(t);
        advance(save);
        d.save_ended(t, save);
      }
      advance(dt);
      steps.push_back(dt);
      d.step(t);
    }
  }
  std::sort(steps.begin(), steps.end());
  r.median = steps[steps.size() / 2];
  // The stall: find the first verdict after the last step, at 0.1 s resolution.
  const double last = t;
  for (double at = last; at < last + 100 * median; at += 0.1)
    if (d.verdict(at)) {
      r.caught_after = at - last;
      break;
    }
  return r;
}

TEST(StallDetector, GoalStallCaughtWithinThreeMedianStepsNoFalseVerdictIn200Runs) {
  int caught = 0;
  for (unsigned seed = 1; seed <= 200; ++seed) {
    SimRun r = simulate(seed, true);
    EXPECT_FALSE(r.false_verdict) << "seed " << seed;
    EXPECT_GT(r.caught_after, 0) << "seed " << seed;
    EXPECT_LE(r.caught_after, 3 * r.median) << "seed " << seed << " median " << r.median;
    caught += r.caught_after > 0 && r.caught_after <= 3 * r.median;
  }
  EXPECT_EQ(caught, 200);
}

// As the checkpoint watcher reports saves (only when complete): still no false verdict; the stall
// is caught within the deadline plus the longest save.
TEST(StallDetector, SavesSeenOnlyWhenCompleteNoFalseVerdictIn200Runs) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    SimRun r = simulate(seed, false);
    EXPECT_FALSE(r.false_verdict) << "seed " << seed;
    EXPECT_GT(r.caught_after, 0) << "seed " << seed;
    EXPECT_LE(r.caught_after, 3 * r.median + kSaveMargin * 12 * r.median) << "seed " << seed;
  }
}

}  // namespace
}  // namespace tv
