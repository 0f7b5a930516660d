// Where a job's GPU-hours went, from its ledger (`trainvisor report`, docs/observability.md,
// "Where the hours went"). Pure: a Ledger in (launcher/observability/ledger.h), the figures out;
// rendering them as text or as a page is launcher/observability/report_render.h.
//
// The figures:
// - the job's account as the ledger's (job_totals): productive, badput by cause with `outside`
//   (the time between containers), goodput = productive / wall;
// - a timeline: each container from its start to its last heartbeat, its generations (start, end,
//   outcome), the gaps between containers; times in seconds from the job's first start;
// - failures F: every generation that failed or hung, every container that ended with a code that
//   is not 0 when its last generation did not fail already (a lost node's 75, a stop's 143: that
//   generation is shown failed, with the code's meaning as its reason: exit_reason), plus every
//   container that was killed (no end in its record) with a container after it (for folded
//   containers: their restarts); MTBF = wall / F;
// - the checkpoint cost C and the observed interval T: the means of every container's, weighted by
//   its checkpoint count;
// - Young's advice T_young = sqrt(2 C MTBF), and Daly's higher-order one
//   T_daly = sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + (C / 2M) / 9) - C (for C < 2M, else M);
// - the model of what an interval T costs over the wall time W:
//     waste(T) = W C / T + F T / 2
//   (a save every T costs C each; a failure loses, on average, half an interval of work); T_young
//   is the T that minimizes it (with F = W / M), so saved = waste(T) - waste(T_young) >= 0.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launcher/observability/ledger.h"

namespace tv {

struct ReportEvidence {
  std::string path;
  std::string exception;  // the exception line a log ends with; "" for none (or not a log)
};

struct ReportGeneration {
  int number = 0;
  double start = 0;  // seconds from the job's first start
  double end = 0;    // its end, else its container's last heartbeat
  std::string outcome;
  std::string summary;
  std::vector<ReportEvidence> evidence;
};

struct ReportContainer {
  int index = 0;
  double start = 0, end = 0;  // seconds from the job's first start
  bool ended = false;
  std::optional<int> exit_code;
  // A failure of its own ending (a code that is not 0, its last generation not failed already):
  // "exit 75: a peer node was lost or the rendezvous timed out"; "" for none. Its last generation,
  // when it has one, is then "failed" with this as its summary when it had none.
  std::string end_failure;
  int restarts = 0;
  double productive = 0;
  std::vector<ReportGeneration> generations;
  std::string failure_file;
};

struct ReportGap {
  int before = 0;  // the index of the container after it
  double start = 0, end = 0;
};

struct CheckpointAdvice {
  long checkpoints = 0;
  int failures = 0;
  std::optional<double> cost, interval, mtbf;
  std::optional<double> young, daly;
  std::optional<double> waste_observed, waste_advised, saved;
};

struct JobReport {
  std::string job_id;
  double first_started_unix = 0;
  int containers = 0;
  int folded = 0;  // containers summed in the ledger's `folded` (no timeline)
  double wall = 0;
  double productive = 0;
  double goodput = 0;
  std::array<double, kBadputCount> badput{};
  double outside = 0;
  int restarts = 0;
  std::int64_t lost_steps = 0;
  bool upper_bound = false;  // no container showed progress: goodput is an upper bound
  bool lost_progress_known = true;
  std::optional<int> gpus;  // the newest container's nodes x processes per node
  std::vector<ReportContainer> timeline;
  std::vector<ReportGap> gaps;
  CheckpointAdvice advice;
  std::vector<PoisonMark> poisoned;
};

JobReport job_report(const Ledger& l);

// What trainvisor run's exit code `code` means (docs/exit-codes.md), for a report: "a peer node was
// lost or the rendezvous timed out" for 75, "signal 15 (SIGTERM)" for 143 ...
std::string exit_reason(int code);
// "YYYY-MM-DDThh:mm:ss[.f...]Z" of Unix seconds, with `decimals` digits of the second (0 to 3).
std::string iso8601_utc(double unix_seconds, int decimals = 0);

// Young's and Daly's intervals for cost `c` and MTBF `m` (both > 0).
double young_interval(double c, double m);
double daly_interval(double c, double m);
// The model above: seconds lost over `wall` with interval `t`, cost `c` and `failures`.
double checkpoint_waste(double wall, double t, double c, int failures);

}  // namespace tv
