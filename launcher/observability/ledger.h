// The job's ledger: where the time of a whole job went, across the containers it ran in (HyperPod
// auto-resume, SageMaker retries and spot restarts, Batch attempts). Node 0 of each container keeps
// one record of its own (phases, badput by cause, the step it started from and the last one it
// reached) in a small file on the checkpoint dir (launcher/observability/ledger_file.h); a new
// container of the same job reads the records before it and continues the account. Pure: JSON in,
// JSON out, no clock (times are Unix seconds the caller passes).
//
// The job's account adds, for each container after the first:
//   outside      = its start - the previous container's last heartbeat (scheduling, node
//                  replacement, image pull; and the previous container's last seconds after its
//                  last heartbeat, when it was killed);
//   lost across the boundary = (the previous container's last step - this one's start step) x the
//                  previous one's seconds per step, moved from its productive time to lost
//                  progress (never more than it has).
// So the job's causes plus its productive time add up to the job's wall time: the sum of every
// container's recorded wall time and every gap between them (first start to last heartbeat).
//
// Bounded: at most kLedgerRecords containers are kept one by one; older ones are folded into one
// running total (`folded`), which carries what the next boundary needs. A ledger of another job is
// refused, never merged.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/observability/goodput.h"
#include "launcher/observability/ledger_history.h"
#include "launcher/observability/ledger_marks.h"

namespace tv {

inline constexpr std::size_t kLedgerRecords = 16;
inline constexpr int kLedgerVersion = 1;

// One container of the job, as its node 0 last wrote it.
struct ContainerRecord {
  int index = 0;              // 0 for the job's first container
  double started_unix = 0;    // when trainvisor started
  double heartbeat_unix = 0;  // its last write; its wall time is heartbeat - started
  bool ended = false;         // written at exit (a killed container's last record says false)
  std::optional<int> exit_code;
  std::array<double, kPhaseCount> phase_seconds{};
  std::array<double, kBadputCount> badput{};
  double productive = 0;
  std::optional<std::int64_t> start_step;  // the checkpoint's step it resumed from, or its first
  std::optional<std::int64_t> last_step;
  std::optional<double> seconds_per_step;
  // Its longest start-up of a generation (start to first step): what --hang-timeout auto learns
  // its start-up deadline from (launcher/workers/stall_detector.h).
  std::optional<double> longest_startup;
  std::optional<double> longest_save;  // its longest checkpoint write, as the watcher measured
  std::int64_t lost_steps = 0;
  int restarts = 0;
  bool progress_evidence = false;
  bool lost_progress_known = true;
  std::optional<StopSaveRecord> stop_save;  // --save-signal: how its save before the stop went
  // For `trainvisor report` (ledger_history.h): its generations, checkpoints, the failure file it
  // wrote and the job's GPUs (nodes x processes per node); none in an older ledger.
  std::vector<GenerationRecord> generations;
  std::optional<CheckpointRecord> checkpoints;
  std::string failure_file;
  std::optional<int> gpus;
};

// The job so far: every container added in order.
struct JobTotals {
  int containers = 0;
  double first_started_unix = 0;
  double last_heartbeat_unix = 0;
  double productive = 0;
  std::array<double, kBadputCount> badput{};
  double outside = 0;
  std::int64_t lost_steps = 0;
  int restarts = 0;
  bool progress_evidence = false;
  bool lost_progress_known = true;
  // The newest container added, for the boundary with the next one.
  std::optional<std::int64_t> last_step;
  std::optional<double> seconds_per_step;
  std::optional<double> longest_startup;  // the longest of every container's
  std::optional<double> longest_save;     // likewise
  double last_productive = 0;             // what the boundary may still take from it
};

struct Ledger {
  std::string job_id;
  JobTotals folded;                      // containers older than `records`
  std::vector<ContainerRecord> records;  // at most kLedgerRecords, oldest first
  std::vector<PoisonMark> poisoned;      // checkpoints every later start steps over
};

// The wall time the totals cover: productive + every cause + outside.
double job_wall(const JobTotals& t);
double job_goodput(const JobTotals& t);  // productive / wall, 0 when no time
// Adds `c` after what `t` holds (outside gap, boundary loss, its own figures).
void add_container(JobTotals& t, const ContainerRecord& c);
// folded + every record.
JobTotals job_totals(const Ledger& l);
// The index the next container of the job takes.
int next_index(const Ledger& l);
// Sets `c` (replacing the record with its index, else inserting it in index order), then folds
// the oldest records until at most kLedgerRecords remain.
void put_record(Ledger& l, const ContainerRecord& c);

// This container's record from its accountant's snapshot.
ContainerRecord record_from(const GoodputSnapshot& s, int index, double started_unix,
                            double now_unix, bool ended);

std::string ledger_text(const Ledger& l);
// Errors (exit code 78) say what is wrong: "not JSON (...)", "not a trainvisor ledger", "version
// N, expected 1", "field 'records[2].productive' missing or not a number". Whose job it is, the
// caller checks (a ledger of another job is never merged).
Result<Ledger> parse_ledger(std::string_view text);

}  // namespace tv
