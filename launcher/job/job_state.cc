#include "launcher/job/job_state.h"

#include <spdlog/spdlog.h>

#include "common/exit_codes.h"
#include "launcher/job/culprit.h"

namespace tv {
namespace {

// Field by field: GCC 12 at -O3 warns (maybe-uninitialized, an error under -Werror) on an
// aggregate JobEnd with a value-initialized NodeFailure inside.
JobEnd ending(JobEnd::Kind kind, std::string why, int signal = 0,
              const std::optional<NodeFailure>& failure = std::nullopt) {
  JobEnd e;
  e.kind = kind;
  e.why = std::move(why);
  e.signal = signal;
  if (failure) e.failure = *failure;
  return e;
}

}  // namespace

JobStateMachine::JobStateMachine(int nnodes, RestartPolicy policy, int base_master_port,
                                 bool preflight, JobActions& actions)
    : nnodes_(nnodes),
      policy_(policy),
      base_master_port_(base_master_port),
      preflight_(preflight),
      actions_(actions),
      judge_(policy.retry, policy.resume_fallback, policy.fallbacks_used) {}

LoopClock::duration JobStateMachine::restart_pause(int generation, Clock::duration ran,
                                                   int quick_before) {
  if (generation == 0 || ran >= kSettled) return LoopClock::duration::zero();
  return RestartPolicy::backoff(quick_before + 1);
}

void JobStateMachine::all_present(Clock::time_point now) {
  if (state_ != State::kGathering || gen_ != 0) return;
  if (!preflight_) return start_generation(now);
  state_ = State::kPreflight;
  actions_.begin_preflight();
}

void JobStateMachine::preflight_result(int node, bool passed, const std::string& summary,
                                       Clock::time_point now) {
  if (state_ != State::kPreflight) return;
  verdicts_.emplace(node, std::make_pair(passed, summary));
  if (static_cast<int>(verdicts_.size()) < nnodes_) return;
  // The first failed verdict is the reason every node gives (once) when it exits 69; the others
  // are logged here, once each.
  std::optional<NodeFailure> first;
  for (const auto& [n, v] : verdicts_) {
    if (v.first) continue;
    if (first)
      spdlog::warn("job: preflight also failed on {}", v.second);
    else
      first = node_failure(0, n, ErrorKind::kPreflightFailed, v.second);
  }
  if (first)
    return end(ending(JobEnd::Kind::kGiveUp,
                      "preflight failed on node " + std::to_string(first->node_rank) +
                          "; no node starts its workers",
                      0, *first));
  spdlog::info("job: every node passed the preflight");
  start_generation(now);
}

void JobStateMachine::start_generation(Clock::time_point now) {
  // A base port of 0: generation 0 takes a fresh one too (the given one is a port trainvisor
  // itself listens on: launcher/plan/master_port.h).
  const bool fresh = gen_ > 0 || base_master_port_ == 0;
  master_port_ = fresh ? actions_.fresh_port() : base_master_port_;
  if (master_port_ == 0) {
    master_port_ = base_master_port_ != 0 ? base_master_port_ : kNoFreshPort;
    spdlog::warn("job: no fresh MASTER_PORT from the kernel; using {}", master_port_);
  }
  succeeded_.clear();
  stopped_.clear();
  reform_.clear();
  evidence_.clear();
  job_step_.reset();
  judge_.begin(gen_);
  state_ = State::kRunning;
  started_at_ = now;
  GenerationPlan plan;
  plan.generation = gen_;
  plan.master_port = master_port_;
  plan.retried_by = retried_by_;
  plan.step_over = step_over_;
  actions_.start(plan);
}

void JobStateMachine::success(int node, int generation) {
  if (state_ != State::kRunning || generation != gen_) return;
  succeeded_.insert(node);
  if (static_cast<int>(succeeded_.size()) == nnodes_)
    end(ending(JobEnd::Kind::kDone, "every node succeeded in generation " + std::to_string(gen_)));
}

void JobStateMachine::failure(NodeFailure f, Clock::time_point now) {
  if (state_ != State::kRunning && state_ != State::kStopping) return;
  if (!reform_.empty() && f.generation == gen_)
    return spdlog::info("job: node {} failed in generation {} while it re-forms ({}): {}",
                        f.node_rank, gen_, reform_, f.summary);
  if (f.generation == gen_) {
    keep_evidence(f.ranks);
    keep_step(f.signature.step);
  }
  switch (judge_.offer(f)) {
    case RootCauseJudge::Offer::kStale:
      return;
    case RootCauseJudge::Offer::kEarlier:
      return spdlog::info("job: node {} failed earlier in generation {}; the root cause is now: {}",
                          f.node_rank, gen_, f.summary);
    case RootCauseJudge::Offer::kLater:
      return spdlog::info("job: node {} also failed in generation {}: {}", f.node_rank, gen_,
                          f.summary);
    case RootCauseJudge::Offer::kFirst:
      break;
  }
  const auto ran = now - started_at_;
  next_pause_ = restart_pause(restarts_, ran, quick_);
  quick_ = restarts_ > 0 && ran < kSettled ? quick_ + 1 : 0;
  state_ = State::kStopping;
  stopped_ = succeeded_;  // nodes that already succeeded have no workers left
  actions_.stop(f);
  if (static_cast<int>(stopped_.size()) == nnodes_) after_stop();
}

// A rank's evidence may come in two reports (its node's failure, then its Stopped): what the
// later one lacks, the earlier one gives.
void JobStateMachine::keep_evidence(const std::vector<RankEvidence>& ranks) {
  for (const auto& r : ranks) {
    auto [it, fresh] = evidence_.try_emplace(r.rank, r);
    if (fresh) continue;
    RankEvidence merged = r;
    if (merged.collective.seq < 0) merged.collective = it->second.collective;
    if (merged.frame.empty() && !merged.silent) {
      merged.frame = it->second.frame;
      merged.silent = it->second.silent;
    }
    it->second = std::move(merged);
  }
}

void JobStateMachine::keep_step(std::optional<std::int64_t> step) {
  if (step && (!job_step_ || *step > *job_step_)) job_step_ = step;
}

void JobStateMachine::stopped(int node, int generation, const std::vector<RankEvidence>& ranks,
                              std::optional<std::int64_t> step) {
  if (state_ != State::kStopping || generation != gen_) return;
  keep_evidence(ranks);
  keep_step(step);
  stopped_.insert(node);
  if (static_cast<int>(stopped_.size()) == nnodes_) after_stop();
}

void JobStateMachine::after_stop() {
  if (!reform_.empty()) return after_membership_stop();
  const Verdict v = judge_.verdict(job_step_);
  NodeFailure root = judge_.history().back();
  root.recent = judge_.recent();
  root.fallbacks = judge_.fallbacks();
  // A hang (stacks, flight recorder) or a failure the flight recorder saw: the one rank every
  // node's evidence says the job waited for (culprit.h), named once here and carried to every
  // node's failure file by the give-up.
  if (!evidence_.empty()) {
    std::vector<RankEvidence> all;
    for (const auto& [rank, e] : evidence_) all.push_back(e);
    const char* what = root.exit_code == exit_code_of(ErrorKind::kHang) ? "hung" : "failed";
    root.ranks = all;  // every node's files list where every rank was (root_cause_files.h)
    if (auto c = decide_culprit(all)) {
      root.culprit = *c;
      spdlog::error("job: generation {} {}: {}", gen_, what, root.culprit);
    } else {
      spdlog::info("job: generation {} {}; its {} ranks' evidence names no single culprit", gen_,
                   what, all.size());
    }
  }
  // The decision is logged here, once; `why` (the coordinator logs it) only points at it. A
  // failure the judge would retry with no restart left is a give-up too, and says so (not
  // "retried").
  if (!v.retry) {
    spdlog::error("{}", v.line);
    root.verdict = v.line;
    root.verdict_rule = v.rule;
    return end(ending(JobEnd::Kind::kGiveUp, "gave up early (" + v.rule + ")", 0, root));
  }
  if (!policy_.may_restart(restarts_)) {
    root.verdict = "job: giving up: restarts exhausted (" + std::to_string(restarts_) +
                   " of --max-restarts " + std::to_string(policy_.max_restarts) +
                   "): " + described(root) + " failed";
    spdlog::error("{}", root.verdict);
    return end(ending(JobEnd::Kind::kGiveUp, "gave up (restarts exhausted)", 0, root));
  }
  spdlog::info("{}", v.line);
  retried_by_ = v.rule;
  step_over_ = v.step_over;
  ++restarts_;
  state_ = State::kBackoff;
  spdlog::info("job: every node stopped; restart {} in {} ms", gen_ + 1,
               std::chrono::duration_cast<std::chrono::milliseconds>(next_pause_).count());
  actions_.arm_backoff(next_pause_);
}

void JobStateMachine::backoff_over(Clock::time_point now) {
  if (state_ != State::kBackoff) return;
  ++gen_;
  start_generation(now);
}

void JobStateMachine::member_lost(int node, const std::string& why, int remaining) {
  if (state_ == State::kFinished || (state_ == State::kGathering && gen_ == 0)) return;
  if (state_ == State::kPreflight) return lost(why);
  nnodes_ = remaining;
  succeeded_.erase(node);
  stopped_.erase(node);
  if (state_ == State::kBackoff) return;  // the next generation forms without it
  stop_for_membership(node, why);
}

void JobStateMachine::reform(int node, const std::string& why) {
  if (state_ != State::kRunning) return;  // stopping or in backoff: the next one forms anyway
  stop_for_membership(node, why);
}

// The generation ends everywhere (a failure already stopping it becomes a membership change:
// the lost node is its likely cause) and the next starts at once, counting no restart.
void JobStateMachine::stop_for_membership(int node, const std::string& why) {
  const bool was_stopping = state_ == State::kStopping;
  reform_ = why;
  retried_by_.clear();
  step_over_.clear();
  next_pause_ = Clock::duration::zero();
  if (!was_stopping) {
    state_ = State::kStopping;
    stopped_ = succeeded_;
    actions_.stop(node_failure(gen_, node, ErrorKind::kLost, why));
  }
  if (static_cast<int>(stopped_.size()) >= nnodes_) after_stop();
}

void JobStateMachine::after_membership_stop() {
  state_ = State::kBackoff;
  spdlog::info(
      "job: generation {} re-forms ({}); generation {} starts with the nodes present, "
      "no restart counted ({} of --max-restarts {} used)",
      gen_, reform_, gen_ + 1, restarts_, policy_.max_restarts);
  actions_.arm_backoff(Clock::duration::zero());
}

void JobStateMachine::refuse(const NodeFailure& f) {
  end(ending(JobEnd::Kind::kGiveUp, f.summary, 0, f));
}

void JobStateMachine::lost(const std::string& why, int signal) {
  end(ending(JobEnd::Kind::kLost, why, signal));
}

void JobStateMachine::end(JobEnd e) {
  if (state_ == State::kFinished) return;
  state_ = State::kFinished;
  actions_.finish(e);
}

}  // namespace tv
