// The resume fallback's decision (launcher/job/resume_fallback.h), pure, and how the
// RootCauseJudge and the JobStateMachine act on it: which checkpoint is poisoned, the depth bound,
// the line the failure file shows.
#include "launcher/job/resume_fallback.h"

#include <gtest/gtest.h>

#include "launcher/job/root_cause_judge.h"

namespace tv {
namespace {

const FailureSignature kNan{"ValueError", "loss is nan at step <n>", std::nullopt, false};

NodeFailure failed(int generation, const std::string& resumed_from, FailureSignature sig = kNan) {
  NodeFailure f = node_failure(generation, 0, 1, "rank 0: exit 1: " + sig.text());
  f.signature = std::move(sig);
  f.resumed_from = resumed_from;
  return f;
}

TEST(ResumeFallback, TwoGenerationsFromOneCheckpointFailingAlikePoisonIt) {
  const NodeFailure before = failed(0, "/c/agent_30.pt"), now = failed(1, "/c/agent_30.pt");
  auto p = poisoned_checkpoint(now, &before, 0, 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->checkpoint, "/c/agent_30.pt");
  EXPECT_NE(p->line.find("generations 0 and 1 resumed from it"), std::string::npos) << p->line;
  EXPECT_NE(p->line.find("--resume-fallback: 1 of 1"), std::string::npos) << p->line;
}

TEST(ResumeFallback, NothingIsPoisonedWithoutEveryCondition) {
  const NodeFailure before = failed(0, "/c/agent_30.pt");
  // The first failure alone.
  EXPECT_FALSE(poisoned_checkpoint(failed(1, "/c/agent_30.pt"), nullptr, 0, 1));
  // Another checkpoint (a newer one was resumed: the job moved on).
  EXPECT_FALSE(poisoned_checkpoint(failed(1, "/c/agent_40.pt"), &before, 0, 1));
  // No checkpoint resumed (a fresh start fails the same way: not a checkpoint's fault).
  const NodeFailure fresh = failed(0, "");
  EXPECT_FALSE(poisoned_checkpoint(failed(1, ""), &fresh, 0, 1));
  // A different failure.
  FailureSignature other = kNan;
  other.message = "shape mismatch";
  EXPECT_FALSE(poisoned_checkpoint(failed(1, "/c/agent_30.pt", other), &before, 0, 1));
  // No exception recognized (a signal): nothing to compare.
  const FailureSignature none{};
  const NodeFailure killed = failed(0, "/c/agent_30.pt", none);
  EXPECT_FALSE(poisoned_checkpoint(failed(1, "/c/agent_30.pt", none), &killed, 0, 1));
  // Not consecutive generations.
  EXPECT_FALSE(poisoned_checkpoint(failed(2, "/c/agent_30.pt"), &before, 0, 1));
  // Off, and used up.
  EXPECT_FALSE(poisoned_checkpoint(failed(1, "/c/agent_30.pt"), &before, 0, 0));
  EXPECT_FALSE(poisoned_checkpoint(failed(1, "/c/agent_30.pt"), &before, 1, 1));
  EXPECT_TRUE(poisoned_checkpoint(failed(1, "/c/agent_30.pt"), &before, 1, 2));
}

// Offers each failure as its generation's root cause and judges it.
std::vector<Verdict> judge_all(RootCauseJudge& j, const std::vector<NodeFailure>& fs) {
  std::vector<Verdict> out;
  for (const auto& f : fs) {
    j.begin(f.generation);
    EXPECT_EQ(j.offer(f), RootCauseJudge::Offer::kFirst);
    out.push_back(j.verdict());
  }
  return out;
}

TEST(ResumeFallback, TheJudgeRetriesFromTheCheckpointBeforeInsteadOfGivingUp) {
  RootCauseJudge j(RetryMode::kSmart, 1, 0);
  const auto v = judge_all(j, {failed(0, "K"), failed(1, "K"), failed(2, "K-1")});
  EXPECT_EQ(v[0].rule, "first_failure");
  EXPECT_EQ(v[1].rule, "poisoned_checkpoint");
  EXPECT_TRUE(v[1].retry);
  EXPECT_EQ(v[1].step_over, "K");
  // Depth 1 used: the same failure from the checkpoint before it gives up as before.
  EXPECT_EQ(v[2].rule, "same_failure");
  EXPECT_FALSE(v[2].retry);
  ASSERT_EQ(j.fallbacks().size(), 1u);
  EXPECT_EQ(j.fallbacks()[0].rfind("generation 2 stepped over checkpoint K poisoned", 0), 0u)
      << j.fallbacks()[0];
}

TEST(ResumeFallback, DepthTwoGivesTheCheckpointBeforeItsOwnTwoGenerations) {
  RootCauseJudge j(RetryMode::kSmart, 2, 0);
  const auto v = judge_all(j, {failed(0, "K"), failed(1, "K"), failed(2, "K-1"), failed(3, "K-1"),
                               failed(4, "K-2"), failed(5, "K-2")});
  EXPECT_EQ(v[1].step_over, "K");
  EXPECT_EQ(v[2].rule, "fallback_first_failure");
  EXPECT_TRUE(v[2].step_over.empty());
  EXPECT_EQ(v[3].rule, "poisoned_checkpoint");
  EXPECT_EQ(v[3].step_over, "K-1");
  EXPECT_EQ(v[4].rule, "same_failure");  // both used
  EXPECT_EQ(v[5].rule, "same_failure");
  EXPECT_EQ(j.fallbacks().size(), 2u);
}

TEST(ResumeFallback, MarksFromEarlierContainersCountAgainstTheLimit) {
  RootCauseJudge j(RetryMode::kSmart, 1, 1);  // the ledger has one mark already
  const auto v = judge_all(j, {failed(0, "K"), failed(1, "K")});
  EXPECT_EQ(v[1].rule, "same_failure");
}

TEST(ResumeFallback, UnderRetryPolicyAlwaysTheCheckpointIsSteppedOverToo) {
  RootCauseJudge j(RetryMode::kAlways, 1, 0);
  const auto v = judge_all(j, {failed(0, "K"), failed(1, "K")});
  EXPECT_EQ(v[1].rule, "poisoned_checkpoint");
  EXPECT_EQ(v[1].step_over, "K");
}

TEST(ResumeFallback, TheFailureFileShowsEachStep) {
  NodeFailure f = failed(3, "K-1");
  f.verdict = "job: giving up, rule same_failure: ...";
  f.fallbacks = {"generation 2 stepped over checkpoint K poisoned: ..."};
  const std::string text = with_decision("rank 0: exit 1: ValueError\ntraceback\n", f, false);
  EXPECT_EQ(text,
            "rank 0: exit 1: ValueError\njob: giving up, rule same_failure: ...\n"
            "checkpoints stepped over (--resume-fallback):\n"
            "  generation 2 stepped over checkpoint K poisoned: ...\ntraceback\n");
}

}  // namespace
}  // namespace tv
