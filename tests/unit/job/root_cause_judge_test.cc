// The RootCauseJudge, pure: which failure is the root cause (this node's candidates, every node's
// reports), failure signatures and their normalization, and each retry rule.
#include "launcher/job/root_cause_judge.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "launcher/job/job_state.h"
#include "tests/unit/fakes/log_lines.h"

namespace tv {
namespace {

using std::chrono::milliseconds;

FailureRecord from_tail(std::vector<std::string> tail) {
  FailureRecord r;
  r.tail = std::move(tail);
  return r;
}

NodeFailure failed(int generation, FailureSignature sig, int node = 0, std::int64_t at = 0) {
  NodeFailure f = node_failure(generation, node, 1, "rank 0: exit 1: " + sig.text(), at);
  f.signature = std::move(sig);
  return f;
}

// Offers each generation's failure, judges it, begins the next; returns the last verdict.
Verdict judge_all(RootCauseJudge& j, const std::vector<FailureSignature>& sigs) {
  Verdict v;
  for (std::size_t g = 0; g < sigs.size(); ++g) {
    j.begin(static_cast<int>(g));
    EXPECT_EQ(j.offer(failed(static_cast<int>(g), sigs[g])), RootCauseJudge::Offer::kFirst);
    v = j.verdict();
  }
  return v;
}

TEST(RootCauseJudge, EarliestLocalFailureByErrorFileThenReapTime) {
  const std::chrono::system_clock::time_point t0{};
  // Rank 0 reaped first, but rank 1's error file was written before rank 0's.
  std::vector<LocalFailure> c{{0, t0 + milliseconds(30), t0 + milliseconds(40), false},
                              {1, t0 + milliseconds(10), t0 + milliseconds(50), true}};
  EXPECT_EQ(earliest_local_failure(c)->local_rank, 1);
  EXPECT_TRUE(earliest_local_failure(c)->still_running);
  // Without an error file, the reap time stands for the failure.
  c.push_back({2, std::nullopt, t0 + milliseconds(5), false});
  EXPECT_EQ(earliest_local_failure(c)->local_rank, 2);
  // Ties keep the first in the list; nothing: no failure.
  EXPECT_EQ(earliest_local_failure({{3, std::nullopt, t0, false}, {4, std::nullopt, t0, false}})
                ->local_rank,
            3);
  EXPECT_FALSE(earliest_local_failure({}));
}

TEST(RootCauseJudge, AnEarlierFailureArrivingLaterReplacesTheRootCause) {
  RootCauseJudge j;
  j.begin(0);
  EXPECT_EQ(j.offer(failed(0, {"E", "collateral", {}, false}, 0, 2000)),
            RootCauseJudge::Offer::kFirst);
  EXPECT_EQ(j.offer(failed(0, {"E", "real", {}, false}, 1, 1000)), RootCauseJudge::Offer::kEarlier);
  EXPECT_EQ(j.offer(failed(0, {"E", "no time", {}, false}, 1, 0)), RootCauseJudge::Offer::kLater);
  EXPECT_EQ(j.offer(failed(0, {"E", "late", {}, false}, 0, 3000)), RootCauseJudge::Offer::kLater);
  EXPECT_EQ(j.offer(failed(1, {"E", "stale", {}, false}, 0, 1)), RootCauseJudge::Offer::kStale);
  EXPECT_EQ(j.root_cause()->signature.message, "real");
}

TEST(RootCauseJudge, NormalizesNumbersAddressesAndPaths) {
  EXPECT_EQ(normalize_message("bad shard /data/shard_17.bin at 0x7f3a2c00, step 40 (loss 3.25)"),
            "bad shard <path> at <addr>, step <n> (loss <n>)");
  EXPECT_EQ(normalize_message("can't open file './x/train.py': [Errno 2]"),
            "can't open file '<path>': [Errno <n>]");
  EXPECT_EQ(normalize_message("cuda:0 has 79.35 GiB"), "cuda:<n> has <n> GiB");
  EXPECT_EQ(normalize_message("a/b is not a path, ratio 1/2"), "a/b is not a path, ratio <n>/<n>");
  EXPECT_EQ(normalize_message("0xZZ"), "<n>xZZ");
}

TEST(RootCauseJudge, SignatureFromTheErrorFileOrTheTracebackInTheOutput) {
  FailureRecord r;
  r.error =
      ErrorFileInfo{"ValueError: bad batch 17", "Traceback ...\nValueError: bad batch 17\n", 0};
  auto s = failure_signature(r, 40);
  EXPECT_EQ(s.type, "ValueError");
  EXPECT_EQ(s.message, "bad batch <n>");
  EXPECT_EQ(s.step, 40);
  EXPECT_EQ(s.text(), "ValueError: bad batch <n> at step 40");
  // No @record: the last exception line of the output tail.
  s = failure_signature(
      from_tail({"step 3", "Traceback (most recent call last):", "  File \"/w/t.py\", line 3",
                 "ModuleNotFoundError: No module named 'foo'", "[W] teardown"}),
      std::nullopt);
  EXPECT_EQ(s.type, "ModuleNotFoundError");
  EXPECT_EQ(s.message, "No module named 'foo'");
  EXPECT_EQ(s.text(), "ModuleNotFoundError: No module named 'foo' before any progress");
  // python3's own words for a missing script.
  s = failure_signature(
      from_tail({"/usr/bin/python3: can't open file '/w/missing.py': [Errno 2] No such file or "
                 "directory"}),
      std::nullopt);
  EXPECT_EQ(s.type, "can't open file");
  // python's own words for `-m` of a module it cannot find (no traceback, exit 1).
  s = failure_signature(from_tail({"/usr/bin/python3: No module named pkg.nosuch"}), std::nullopt);
  EXPECT_EQ(s.type, "ModuleNotFoundError");
  EXPECT_EQ(s.message, "No module named pkg.nosuch");
  s = failure_signature(from_tail({"/usr/bin/python3: Error while finding module specification "
                                   "for 'pkg.train' (ModuleNotFoundError: No module named 'pkg')"}),
                        std::nullopt);
  EXPECT_EQ(s.type, "ModuleNotFoundError");
  // A library's words about a module it does without are not the interpreter's.
  EXPECT_EQ(failure_signature(from_tail({"apex: No module named amp_C, using native"}), 2).type,
            "");
  // No exception at all: the last line, no type (so never "the same failure").
  s = failure_signature(from_tail({"rank 3 fails"}), 2);
  EXPECT_EQ(s.type, "");
  EXPECT_EQ(s.message, "rank <n> fails");
  // A hang whose earlier output had an exception line is still only a hang.
  FailureRecord hung = from_tail({"ValueError: retrying the download"});
  hung.hang = true;
  EXPECT_EQ(failure_signature(hung, 3).type, "");
}

// The traceback on stderr names the failure even when stdout's lines were read after it (the tail
// ends with them) and the tail holds another exception line printed earlier.
TEST(RootCauseJudge, SignatureFromTheStderrTracebackBeforeTheTail) {
  FailureRecord r = from_tail({"ValueError: a warning printed as text", "log line 199"});
  r.traceback = {"Traceback (most recent call last):", "  File \"t.py\", line 2",
                 "RuntimeError: NCCL error: unhandled system error"};
  const auto s = failure_signature(r, std::nullopt);
  EXPECT_EQ(s.type, "RuntimeError");
  EXPECT_EQ(s.message, "NCCL error: unhandled system error");
  r.error = ErrorFileInfo{"KeyError: 'lr'", "", 0};
  EXPECT_EQ(failure_signature(r, std::nullopt).type, "KeyError");
}

TEST(RootCauseJudge, CudaOutOfMemoryInTheErrorFileOrTheOutput) {
  for (const char* line :
       {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        "RuntimeError: CUDA error: out of memory", "torch.OutOfMemoryError: boom"}) {
    const auto s = failure_signature(from_tail({line, "exit"}), 5);
    EXPECT_TRUE(s.cuda_oom) << line;
  }
  FailureRecord r;
  r.error = ErrorFileInfo{"RuntimeError: failed", "...\nCUDA out of memory. Tried\n", 0};
  EXPECT_TRUE(failure_signature(r, 5).cuda_oom);
  EXPECT_FALSE(failure_signature(from_tail({"ValueError: out of range"}), 5).cuda_oom);
}

TEST(RootCauseJudge, ScriptThatCannotStartGivesUpAtOnce) {
  for (const char* type : {"ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError",
                           "can't open file"}) {
    RootCauseJudge j;
    const Verdict v = judge_all(j, {{type, "m", std::nullopt, false}});
    EXPECT_FALSE(v.retry) << type;
    EXPECT_EQ(v.rule, "cannot_start");
    EXPECT_NE(v.line.find("generation 0 (" + std::string(type)), std::string::npos) << v.line;
  }
  // After a progress line the same import error is retried (a lazy import, a flaky mount).
  RootCauseJudge j;
  EXPECT_TRUE(judge_all(j, {{"ImportError", "m", 3, false}}).retry);
}

TEST(RootCauseJudge, SameSignatureOnConsecutiveGenerationsGivesUp) {
  RootCauseJudge j;
  const FailureSignature at40{"ValueError", "bad batch <n>", 40, false};
  const Verdict v = judge_all(j, {at40, at40});
  EXPECT_FALSE(v.retry);
  EXPECT_EQ(v.rule, "same_failure");
  // The one line names both failures it compared.
  EXPECT_NE(v.line.find("generation 1 (ValueError: bad batch <n> at step 40)"), std::string::npos);
  EXPECT_NE(v.line.find("generation 0 (ValueError: bad batch <n> at step 40)"), std::string::npos);
  EXPECT_EQ(j.history().size(), 2u);
}

TEST(RootCauseJudge, DifferentMessageOrStepIsRetried) {
  RootCauseJudge j;
  EXPECT_EQ(judge_all(j, {{"ValueError", "x", 40, false}}).rule, "first_failure");
  RootCauseJudge k;
  EXPECT_EQ(judge_all(k, {{"ValueError", "x", 40, false}, {"ValueError", "x", 41, false}}).rule,
            "different_failure");
  RootCauseJudge l;
  EXPECT_TRUE(judge_all(l, {{"ValueError", "x", 40, false}, {"ValueError", "y", 40, false}}).retry);
  // Without an exception type the same last line is retried (a peer's collateral, a signal), and
  // the line does not call two alike "different".
  RootCauseJudge m;
  const Verdict alike = judge_all(m, {{"", "killed", 4, false}, {"", "killed", 4, false}});
  EXPECT_TRUE(alike.retry);
  EXPECT_EQ(alike.rule, "no_exception");
  EXPECT_EQ(alike.line,
            "job: generation 1 (killed at step 4) failed with no exception recognized: not "
            "compared with generation 0 (killed at step 4); retried (rule no_exception)");
  RootCauseJudge o;  // two signal deaths with no output at all
  EXPECT_EQ(judge_all(o, {{"", "", 4, false}, {"", "", 4, false}}).line.find("differs"),
            std::string::npos);
  // Not consecutive: 0 and 2 the same, 1 different.
  RootCauseJudge n;
  const FailureSignature a{"ValueError", "x", 40, false};
  EXPECT_TRUE(judge_all(n, {a, {"KeyError", "k", 7, false}, a}).retry);
}

TEST(RootCauseJudge, CudaOutOfMemoryAtTheSameStepTwiceGivesUp) {
  RootCauseJudge j;
  const Verdict v = judge_all(j, {{"torch.cuda.OutOfMemoryError", "tried <n> MiB", 12, true},
                                  {"RuntimeError", "CUDA error: out of memory", 12, true}});
  EXPECT_FALSE(v.retry);
  EXPECT_EQ(v.rule, "cuda_oom_same_step");
  RootCauseJudge k;
  EXPECT_TRUE(judge_all(k, {{"E", "oom", 12, true}, {"E", "oom", 13, true}}).retry);
}

TEST(RootCauseJudge, RetryPolicyAlwaysRetriesEverything) {
  RootCauseJudge j(RetryMode::kAlways);
  const Verdict v = judge_all(j, {{"ImportError", "m", std::nullopt, false}});
  EXPECT_TRUE(v.retry);
  EXPECT_EQ(v.rule, "always");
}

TEST(RootCauseJudge, RecentAndTheTextOfTheFailureFile) {
  RootCauseJudge j;
  judge_all(j,
            {{"A", "", 1, false}, {"B", "", 2, false}, {"C", "", 3, false}, {"D", "", 4, false}});
  const auto r = j.recent();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r.front(), "generation 1: rank 0: exit 1: B at step 2");
  NodeFailure f = node_failure(3, 0, 1, "summary");
  f.verdict = "job: giving up, rule same_failure: ...";
  f.recent = r;
  EXPECT_EQ(with_decision("summary\ntraceback\n", f, false),
            "summary\njob: giving up, rule same_failure: ...\ntraceback\n");
  EXPECT_EQ(
      with_decision("summary\n", f, true).find("last generations' root causes:\n  generation 1"),
      std::string("summary\njob: giving up, rule same_failure: ...\n").size());
}

TEST(RootCauseJudge, FailedOnceIsOncePerGeneration) {
  FailedOnce once;
  EXPECT_TRUE(once.first(0));
  EXPECT_FALSE(once.first(0));  // this node's failure, then the cluster's stop of the same one
  EXPECT_TRUE(once.first(1));
  EXPECT_FALSE(once.first(0));
}

struct Actions : JobActions {
  std::vector<GenerationPlan> starts;
  std::vector<JobEnd> ends;
  void begin_preflight() override {}
  void start(const GenerationPlan& p) override { starts.push_back(p); }
  void stop(const NodeFailure&) override {}
  void arm_backoff(LoopClock::duration) override {}
  void finish(const JobEnd& e) override { ends.push_back(e); }
  int fresh_port() override { return 40000; }
};

using testing::LogLines;  // the judge's decisions are log lines

// --max-restarts 0: the first failure would be retried, but nothing may restart. The one decision
// line says it gives up, never "retried" right before the give-up.
TEST(RootCauseJudge, NoRestartLeftIsAGiveUpInTheLogNotARetry) {
  LogLines log;
  Actions a;
  JobStateMachine m(1, RestartPolicy{0}, 29500, false, a);
  const JobStateMachine::Clock::time_point t{};
  m.all_present(t);
  m.failure(failed(0, {"ValueError", "bad", 40, false}), t);
  m.stopped(0, 0);
  ASSERT_EQ(a.ends.size(), 1u);
  EXPECT_EQ(a.ends[0].kind, JobEnd::Kind::kGiveUp);
  const std::string line =
      "job: giving up: restarts exhausted (0 of --max-restarts 0): generation 0 (ValueError: bad "
      "at step 40) failed";
  EXPECT_EQ(a.ends[0].failure.verdict, line);
  const std::string text = log.text();
  EXPECT_NE(text.find(line), std::string::npos) << text;
  EXPECT_EQ(text.find("retried"), std::string::npos) << text;
}

TEST(RootCauseJudge, TheJobGivesUpOnItsVerdictBeforeTheRestartsAreSpent) {
  Actions a;
  JobStateMachine m(2, RestartPolicy{5}, 29500, false, a);
  const JobStateMachine::Clock::time_point t{};
  m.all_present(t);
  const FailureSignature sig{"ValueError", "bad", 40, false};
  for (int g = 0; g < 2; ++g) {
    m.failure(failed(g, sig, 1), t);
    m.stopped(0, g);
    m.stopped(1, g);
    if (g == 0) m.backoff_over(t);
  }
  ASSERT_EQ(a.starts.size(), 2u);
  EXPECT_EQ(a.starts[1].retried_by, "first_failure");
  ASSERT_EQ(a.ends.size(), 1u);
  EXPECT_EQ(a.ends[0].kind, JobEnd::Kind::kGiveUp);
  EXPECT_EQ(a.ends[0].failure.verdict_rule, "same_failure");
  EXPECT_EQ(a.ends[0].failure.recent.size(), 2u);
  EXPECT_NE(a.ends[0].failure.verdict.find("rule same_failure"), std::string::npos);
}

// Progress is the job's (issue 53): only rank 0 prints it in rsl_rl and skrl, so a failure on
// node 1 carries no step of its own; the judge reads the step node 0 (or any node) gave in its
// Stopped. Two generations, each failing only on node 1 with the same message, after the job
// reached `steps[g]` (nullopt: no node printed a step).
struct JobProgressCase {
  const char* name;
  FailureSignature sig;  // node 1's, without a step
  std::optional<std::int64_t> steps[2];
  bool node1_prints;               // node 1 printed the steps too (its failure carries them)
  std::vector<std::string> rules;  // the verdict of each generation, in order
  JobEnd::Kind end;                // after generation 1 (kDone: none yet, restarted)
};

TEST(RootCauseJudge, ProgressIsTheJobsNotTheFailingNodes) {
  const FailureSignature reset{"ConnectionResetError", "[Errno <n>] Connection reset by peer",
                               std::nullopt, false};
  const FailureSignature import{"ImportError", "cannot import name 'x'", std::nullopt, false};
  const JobProgressCase cases[] = {
      // The job: transient resets at steps 25 and 45 of node 0: retried.
      {"reset, progress on node 0 only",
       reset,
       {25, 45},
       false,
       {"first_failure", "different_failure"},
       JobEnd::Kind::kDone},
      // The same step on both generations: the same failure, as on one node.
      {"reset at the same step",
       reset,
       {25, 25},
       false,
       {"first_failure", "same_failure"},
       JobEnd::Kind::kGiveUp},
      // No node printed progress: "before any progress" both times, as before.
      {"no progress anywhere",
       reset,
       {std::nullopt, std::nullopt},
       false,
       {"first_failure", "same_failure"},
       JobEnd::Kind::kGiveUp},
      // A lazy import error on node 1 in the middle of training: not "cannot start".
      {"import error mid-training",
       import,
       {30, 60},
       false,
       {"first_failure", "different_failure"},
       JobEnd::Kind::kDone},
      // ... while one before any progress anywhere is.
      {"import error before any progress",
       import,
       {std::nullopt, std::nullopt},
       false,
       {"cannot_start"},
       JobEnd::Kind::kGiveUp},
      // A failing node with its own step keeps it: node 0's further step does not make the same
      // failure a different one.
      {"node 1 prints its own step",
       reset,
       {25, 25},
       true,
       {"first_failure", "same_failure"},
       JobEnd::Kind::kGiveUp},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Actions a;
    JobStateMachine m(2, RestartPolicy{3}, 29500, false, a);
    const JobStateMachine::Clock::time_point t{};
    m.all_present(t);
    for (int g = 0; g < 2 && a.ends.empty(); ++g) {
      if (g > 0) m.backoff_over(t);
      FailureSignature sig = c.sig;
      if (c.node1_prints) sig.step = c.steps[g];
      m.failure(failed(g, sig, 1), t);
      // Node 0 stopped later than the failure, one step further where node 1 prints too.
      const auto node0 = c.node1_prints && c.steps[g] ? std::optional(*c.steps[g] + 1) : c.steps[g];
      m.stopped(0, g, {}, node0);
      m.stopped(1, g, {}, c.node1_prints ? c.steps[g] : std::nullopt);
    }
    if (a.ends.empty()) m.backoff_over(t);  // generation 2 starts: the retry's rule is on it
    std::vector<std::string> rules;
    for (std::size_t i = 1; i < a.starts.size(); ++i) rules.push_back(a.starts[i].retried_by);
    if (!a.ends.empty()) rules.push_back(a.ends[0].failure.verdict_rule);
    EXPECT_EQ(rules, c.rules);
    if (c.end == JobEnd::Kind::kDone) {
      EXPECT_TRUE(a.ends.empty());
      EXPECT_EQ(a.starts.size(), 3u);
    } else {
      ASSERT_EQ(a.ends.size(), 1u);
      EXPECT_EQ(a.ends[0].kind, c.end);
    }
  }
}

// The judge itself: a root cause without a step of its own takes the job's; one with its own
// keeps it.
TEST(RootCauseJudge, ARootCauseWithoutAStepTakesTheJobs) {
  RootCauseJudge j;
  j.begin(0);
  j.offer(failed(0, {"ValueError", "bad", std::nullopt, false}, 1));
  const Verdict v = j.verdict(39);
  EXPECT_EQ(j.history().back().signature.step, 39);
  EXPECT_NE(v.line.find("ValueError: bad at step 39"), std::string::npos) << v.line;
  j.begin(1);
  j.offer(failed(1, {"ValueError", "bad", 12, false}, 1));
  j.verdict(40);
  EXPECT_EQ(j.history().back().signature.step, 12);
}

}  // namespace
}  // namespace tv
