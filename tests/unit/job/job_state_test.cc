// The job state machine, driven with scripted events and a fake clock (no sockets, no sleeping).
#include "launcher/job/job_state.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/exit_codes.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using Clock = JobStateMachine::Clock;

struct FakeActions : JobActions {
  std::vector<GenerationPlan> starts;
  std::vector<NodeFailure> stops;
  std::vector<LoopClock::duration> pauses;
  std::vector<JobEnd> ends;
  int preflights = 0;
  int next_port = 40000;
  void begin_preflight() override { ++preflights; }
  void start(const GenerationPlan& p) override { starts.push_back(p); }
  void stop(const NodeFailure& f) override { stops.push_back(f); }
  void arm_backoff(LoopClock::duration p) override { pauses.push_back(p); }
  void finish(const JobEnd& e) override { ends.push_back(e); }
  int fresh_port() override { return next_port++; }
};

class JobState : public ::testing::Test {
 protected:
  JobStateMachine make(int nnodes, int max_restarts, bool preflight = false, int base = 29500) {
    return JobStateMachine(nnodes, RestartPolicy{max_restarts}, base, preflight, actions);
  }
  NodeFailure fail(int node, int gen, int code = 1) {
    return node_failure(gen, node, code, "boom");
  }
  // Fails generation `gen` on node 0 after it ran `ran`, stops every node, ends the pause.
  void crash(JobStateMachine& m, int nnodes, Clock::duration ran) {
    const int gen = m.generation();
    now += ran;
    m.failure(fail(0, gen), now);
    for (int n = 0; n < nnodes; ++n) m.stopped(n, gen);
    if (m.state() == JobStateMachine::State::kBackoff) m.backoff_over(now);
  }
  FakeActions actions;
  Clock::time_point now{};
};

TEST_F(JobState, OneNodeStartsAtOnceAndEndsWhenItSucceeds) {
  auto m = make(1, 3);
  m.all_present(now);
  ASSERT_EQ(actions.starts.size(), 1u);
  EXPECT_EQ(actions.starts[0].generation, 0);
  EXPECT_EQ(actions.starts[0].master_port, 29500);
  m.success(0, 0);
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].kind, JobEnd::Kind::kDone);
}

TEST_F(JobState, EveryRestartGetsAFreshPortOnOneNodeAsOnMany) {
  for (int nnodes : {1, 3}) {
    actions = FakeActions{};
    auto m = make(nnodes, 3);
    m.all_present(now);
    crash(m, nnodes, 1s);
    crash(m, nnodes, 1s);
    ASSERT_EQ(actions.starts.size(), 3u) << nnodes;
    EXPECT_EQ(actions.starts[0].master_port, 29500);
    EXPECT_EQ(actions.starts[1].master_port, 40000);
    EXPECT_EQ(actions.starts[2].master_port, 40001);
    EXPECT_EQ(actions.starts[2].generation, 2);
  }
}

TEST_F(JobState, NoFreshPortFallsBackToTheBasePort) {
  actions.next_port = 0;
  auto m = make(1, 1);
  m.all_present(now);
  actions.next_port = 0;
  crash(m, 1, 1s);
  ASSERT_EQ(actions.starts.size(), 2u);
  EXPECT_EQ(actions.starts[1].master_port, 29500);
}

// Base port 0: the given port was one trainvisor listens on (launcher/plan/master_port.h), so
// generation 0 takes a fresh one as every restart does.
TEST_F(JobState, ABasePortOfZeroGivesGenerationZeroAFreshPortToo) {
  for (int nnodes : {1, 2}) {
    actions = FakeActions{};
    auto m = make(nnodes, 1, false, 0);
    m.all_present(now);
    crash(m, nnodes, 1s);
    ASSERT_EQ(actions.starts.size(), 2u) << nnodes;
    EXPECT_EQ(actions.starts[0].master_port, 40000);
    EXPECT_EQ(actions.starts[1].master_port, 40001);
  }
}

TEST_F(JobState, ABasePortOfZeroAndNoFreshPortNeverStartsOnPortZero) {
  actions.next_port = 0;
  auto m = make(1, 0, false, 0);
  m.all_present(now);
  ASSERT_EQ(actions.starts.size(), 1u);
  EXPECT_EQ(actions.starts[0].master_port, JobStateMachine::kNoFreshPort);
}

TEST_F(JobState, FirstRestartAndRestartAfterALongRunAreImmediateQuickFailuresBackOff) {
  auto m = make(1, 10);
  m.all_present(now);
  crash(m, 1, 100ms);  // generation 0: the first restart
  crash(m, 1, 100ms);  // a restart that failed at once: quick succession
  crash(m, 1, 2s);     // again
  crash(m, 1, 1h);     // ran a long while: at once
  crash(m, 1, 1s);     // quick again, the streak starts over
  const std::vector<LoopClock::duration> want{0ms, 100ms, 200ms, 0ms, 100ms};
  EXPECT_EQ(actions.pauses, want);
}

TEST_F(JobState, NoRestartUntilEveryNodeStopped) {
  auto m = make(3, 3);
  m.all_present(now);
  m.failure(fail(2, 0), now);
  ASSERT_EQ(actions.stops.size(), 1u);
  EXPECT_EQ(actions.stops[0].node_rank, 2);
  m.stopped(0, 0);
  m.stopped(2, 0);
  EXPECT_TRUE(actions.pauses.empty());
  m.stopped(1, 0);
  EXPECT_EQ(actions.pauses.size(), 1u);
}

TEST_F(JobState, NodesThatAlreadySucceededCountAsStopped) {
  auto m = make(2, 3);
  m.all_present(now);
  m.success(1, 0);
  m.failure(fail(0, 0), now);
  m.stopped(0, 0);
  EXPECT_EQ(actions.pauses.size(), 1u);
}

TEST_F(JobState, SecondFailureOfAGenerationIsNotANewRootCause) {
  auto m = make(2, 3);
  m.all_present(now);
  m.failure(fail(1, 0, 7), now);
  m.failure(fail(0, 0, 9), now);
  EXPECT_EQ(actions.stops.size(), 1u);
  m.stopped(0, 0);
  m.stopped(1, 0);
  m.backoff_over(now);
  EXPECT_EQ(m.generation(), 1);
}

TEST_F(JobState, AFailureThatHappenedEarlierButArrivedLaterIsTheRootCause) {
  // Node 1's worker wrote its error file first but took longer to exit (reported at its exit);
  // node 0's collateral failure arrived first. A failure with no time never replaces one.
  auto m = make(2, 0);
  m.all_present(now);
  m.failure(node_failure(0, 0, 1, "collateral", 2000), now);
  m.failure(node_failure(0, 1, 7, "the real cause", 1000), now);
  m.failure(node_failure(0, 1, 9, "no time", 0), now);
  m.failure(node_failure(0, 0, 9, "later", 3000), now);
  EXPECT_EQ(actions.stops.size(), 1u);
  m.stopped(0, 0);
  m.stopped(1, 0);
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].failure.summary, "the real cause");
  EXPECT_EQ(actions.ends[0].failure.exit_code, 7);
}

TEST_F(JobState, StaleReportsOfAnOldGenerationChangeNothing) {
  auto m = make(2, 3);
  m.all_present(now);
  crash(m, 2, 1s);
  m.failure(fail(1, 0), now);
  m.success(0, 0);
  m.success(1, 0);
  EXPECT_EQ(m.state(), JobStateMachine::State::kRunning);
  EXPECT_TRUE(actions.ends.empty());
}

TEST_F(JobState, RestartsExhaustedGivesUpWithTheRootCause) {
  auto m = make(2, 1);
  m.all_present(now);
  crash(m, 2, 1s);
  m.failure(fail(1, 1, 42), now);
  m.stopped(0, 1);
  m.stopped(1, 1);
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].kind, JobEnd::Kind::kGiveUp);
  EXPECT_EQ(actions.ends[0].failure.exit_code, 42);
  EXPECT_EQ(actions.ends[0].failure.node_rank, 1);
  EXPECT_EQ(actions.starts.size(), 2u);
}

TEST_F(JobState, PreflightRunsBeforeGenerationZeroAndAFailureGivesUpEverywhere) {
  auto m = make(3, 3, true);
  m.all_present(now);
  EXPECT_EQ(actions.preflights, 1);
  EXPECT_TRUE(actions.starts.empty());
  m.preflight_result(2, false, "node 2: gpu: none", now);
  m.preflight_result(0, true, "node 0: passed", now);
  EXPECT_TRUE(actions.ends.empty());
  m.preflight_result(1, false, "node 1: nccl-probe: timed out", now);
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].failure.exit_code, exit_code_of(ErrorKind::kPreflightFailed));
  EXPECT_EQ(actions.ends[0].failure.node_rank, 1);  // the lowest failing node
  EXPECT_TRUE(actions.starts.empty());
}

TEST_F(JobState, PreflightPassedEverywhereStartsGenerationZero) {
  auto m = make(2, 3, true);
  m.all_present(now);
  m.preflight_result(0, true, "", now);
  m.preflight_result(0, false, "a second report counts once", now);
  m.preflight_result(1, true, "", now);
  ASSERT_EQ(actions.starts.size(), 1u);
  EXPECT_EQ(actions.starts[0].master_port, 29500);
}

TEST_F(JobState, LostEndsTheJobOnceFromAnyState) {
  auto m = make(2, 3);
  m.lost("rendezvous timed out");
  m.all_present(now);
  m.lost("again");
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].kind, JobEnd::Kind::kLost);
  EXPECT_EQ(actions.ends[0].why, "rendezvous timed out");
  EXPECT_TRUE(actions.starts.empty());
}

// --resume-fallback: the judge's poisoned checkpoint reaches the next generation's plan, and a
// later give-up's root cause carries each step (the failure file's lines).
TEST_F(JobState, APoisonedCheckpointIsNamedInTheNextPlanAndInTheGiveUp) {
  auto m = make(1, 5);
  m.all_present(now);
  auto from = [&](const std::string& ckpt) {
    NodeFailure f = fail(0, m.generation());
    f.signature = {"ValueError", "loss is nan", std::nullopt, false};
    f.resumed_from = ckpt;
    m.failure(f, now);
    m.stopped(0, f.generation);
    if (m.state() == JobStateMachine::State::kBackoff) m.backoff_over(now);
  };
  from("K");
  from("K");
  ASSERT_EQ(actions.starts.size(), 3u);
  EXPECT_EQ(actions.starts[1].step_over, "");
  EXPECT_EQ(actions.starts[2].step_over, "K");
  EXPECT_EQ(actions.starts[2].retried_by, "poisoned_checkpoint");
  from("K-1");  // the same failure again: depth 1 is used, give up
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].kind, JobEnd::Kind::kGiveUp);
  EXPECT_EQ(actions.ends[0].failure.verdict_rule, "same_failure");
  ASSERT_EQ(actions.ends[0].failure.fallbacks.size(), 1u);
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// A failure (no hang) whose ranks' dumps say who never entered the collective: the give-up names
// the culprit; a rank's two reports (its node's failure, then its Stopped) add up.
TEST_F(JobState, AFailureTheFlightRecorderSawNamesItsCulpritAndReportsAddUp) {
  auto m = make(2, 0);
  m.all_present(now);
  NodeFailure f = fail(0, 0, 134);
  f.ranks = {{0, 0, "", false, {7, "nccl:all_reduce", "0", "started"}},
             {1, 0, "", false, {7, "nccl:all_reduce", "0", "started"}}};
  m.failure(f, now);
  m.stopped(0, 0, {{0, 0, "", false, {}}, {1, 0, "", false, {}}});  // no dumps read this time
  m.stopped(1, 0,
            {{2, 1, "", false, {7, "nccl:all_reduce", "0", "started"}},
             {3, 1, "", false, {6, "nccl:all_reduce", "0", "completed"}}});
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].failure.culprit.rfind(
                "rank 3 on node 1 never entered nccl:all_reduce #7 of process group 0", 0),
            0u)
      << actions.ends[0].failure.culprit;
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// Elastic membership (docs/coordination.md): a lost member stops the generation on the others,
// and the next starts with fewer nodes at once, counting no restart against --max-restarts.
TEST_F(JobState, ALostMemberReformsWithoutCountingARestart) {
  auto m = make(3, /*max_restarts=*/0);
  m.all_present(now);
  m.member_lost(2, "node 2 lost: closed by peer", 2);
  ASSERT_EQ(actions.stops.size(), 1u);
  EXPECT_EQ(actions.stops[0].node_rank, 2);
  EXPECT_EQ(actions.stops[0].exit_code, exit_code_of(ErrorKind::kLost));
  // A survivor's workers fail because their peer is gone: no new root cause, no second stop.
  m.failure(fail(0, 0), now);
  EXPECT_EQ(actions.stops.size(), 1u);
  m.stopped(0, 0);
  EXPECT_EQ(m.state(), JobStateMachine::State::kStopping);
  m.stopped(1, 0);
  ASSERT_EQ(m.state(), JobStateMachine::State::kBackoff);
  ASSERT_EQ(actions.pauses.size(), 1u);
  EXPECT_EQ(actions.pauses[0], LoopClock::duration::zero());
  m.set_nodes(2);
  m.backoff_over(now);
  ASSERT_EQ(actions.starts.size(), 2u);
  EXPECT_EQ(actions.starts[1].generation, 1);
  EXPECT_EQ(m.restarts(), 0);
  EXPECT_EQ(m.nodes(), 2);
  m.success(0, 1);
  m.success(1, 1);
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].kind, JobEnd::Kind::kDone);
}

// A failure already stopping the generation when a member is lost becomes a membership change:
// with --max-restarts 0 the job goes on instead of giving up.
TEST_F(JobState, AMemberLostWhileAFailureStopsTheGenerationIsAMembershipChange) {
  auto m = make(3, 0);
  m.all_present(now);
  m.failure(fail(1, 0), now);
  m.stopped(1, 0);
  m.member_lost(2, "node 2 silent", 2);
  EXPECT_EQ(actions.stops.size(), 1u);  // the failure's stop is the one every node got
  m.stopped(0, 0);
  ASSERT_EQ(m.state(), JobStateMachine::State::kBackoff);
  EXPECT_TRUE(actions.ends.empty());
  EXPECT_EQ(m.restarts(), 0);
}

// A failure is still counted after membership changes: the restarts, not the generations.
TEST_F(JobState, RestartsAreCountedApartFromMembershipChanges) {
  auto m = make(2, 1);
  m.all_present(now);
  m.reform(2, "1 node(s) joined");
  m.stopped(0, 0);
  m.stopped(1, 0);
  m.set_nodes(3);
  m.backoff_over(now);
  EXPECT_EQ(m.generation(), 1);
  crash(m, 3, 20s);  // restart 1 of 1
  EXPECT_EQ(m.generation(), 2);
  EXPECT_EQ(m.restarts(), 1);
  EXPECT_TRUE(actions.ends.empty());
  crash(m, 3, 20s);
  ASSERT_EQ(actions.ends.size(), 1u);
  EXPECT_EQ(actions.ends[0].kind, JobEnd::Kind::kGiveUp);
  EXPECT_NE(actions.ends[0].failure.verdict.find("restarts exhausted (1 of --max-restarts 1)"),
            std::string::npos);
}

// A lost member during the backoff: the next generation simply has fewer nodes; during the
// preflight: the job is lost (the preflight's communicator needs every node).
TEST_F(JobState, AMemberLostInBackoffOrPreflight) {
  auto m = make(3, 3);
  m.all_present(now);
  m.failure(fail(0, 0), now);
  for (int n = 0; n < 3; ++n) m.stopped(n, 0);
  ASSERT_EQ(m.state(), JobStateMachine::State::kBackoff);
  m.member_lost(2, "node 2 lost", 2);
  EXPECT_EQ(actions.stops.size(), 1u);
  m.backoff_over(now);
  EXPECT_EQ(m.nodes(), 2);
  EXPECT_EQ(m.state(), JobStateMachine::State::kRunning);

  FakeActions other;
  JobStateMachine p(3, RestartPolicy{3}, 29500, /*preflight=*/true, other);
  p.all_present(now);
  p.member_lost(1, "node 1 lost", 2);
  ASSERT_EQ(other.ends.size(), 1u);
  EXPECT_EQ(other.ends[0].kind, JobEnd::Kind::kLost);
}

}  // namespace
}  // namespace tv
