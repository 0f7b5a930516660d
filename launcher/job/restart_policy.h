// Restart policy, in one place for one-node (LocalCluster) and multi-node (NetworkCluster) jobs.
#pragma once

#include <algorithm>
#include <chrono>

namespace tv {

// --retry-policy: smart (the RootCauseJudge's rules may give up before --max-restarts) or always.
enum class RetryMode { kSmart, kAlways };

struct RestartPolicy {
  int max_restarts = 3;
  RetryMode retry = RetryMode::kSmart;
  // --resume-fallback: how many poisoned checkpoints the job may step over (0: none), and how
  // many it already has (the marks in its ledger, from earlier containers).
  int resume_fallback = 1;
  int fallbacks_used = 0;

  // May the job start generation `restarts_so_far + 1`?
  bool may_restart(int restarts_so_far) const { return restarts_so_far < max_restarts; }

  // Pause before restart number n (1-based): 0.1 s, 0.2 s, 0.4 s, ... capped at 5 s. Short, so a
  // crash costs seconds; growing, so a crash loop does not hammer shared storage or the network.
  static std::chrono::milliseconds backoff(int n) {
    if (n <= 1) return std::chrono::milliseconds(100);
    long ms = 100L << std::min(n - 1, 6);
    return std::chrono::milliseconds(std::min(ms, 5000L));
  }
};

}  // namespace tv
