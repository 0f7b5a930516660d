// GoodputAccountant: where every second of a job went, from the outside of the training script.
// Pure: it is fed events (phase changes, generations, worker starts and exits, progress steps,
// checkpoints) and reads time only from a Clock, so unit tests drive it with simulated time.
//
// Every second of wall time is in exactly one phase (init, preflight, rendezvous, running,
// restarting, draining), so the phases add up to the wall time. Running seconds are split again:
//   productive = running - startup - hang - checkpoint stall - lost progress
// where startup is the time from a generation's start to its first progress step (only once
// progress has been seen at all), hang is the time from a hung generation's last progress step to
// the hang verdict (without any step: the silence the verdict waited for), lost progress is the
// work re-done after a restart (the steps between the resumed checkpoint and the last step seen
// before the failure, turned into seconds with the measured seconds per step, plus the time since
// that last step), and checkpoint stall is each save's write time (or, without one, the gap it left
// in the progress lines). Goodput is productive / wall. docs/observability.md has every rule and
// its fallbacks.
//
// Checkpoint advice (Young/Daly): interval = sqrt(2 x C x MTBF), C the measured cost of one
// checkpoint, MTBF the job's: --mtbf-hours per node divided by the node count, else the one
// observed in this job (wall time / failures).
//
// Across nodes: every node keeps its own; node 0 sees every generation of the job (a failure on any
// node stops and restarts all of them), so its figures are the job's, restarts counted once.
// Thread-compatible: call it from the supervisor's event loop only.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launcher/observability/clock.h"
#include "launcher/observability/progress.h"

namespace tv {

enum class Phase { kInit, kPreflight, kRendezvous, kRunning, kRestarting, kDraining };
inline constexpr std::size_t kPhaseCount = 6;
const char* phase_name(Phase p);

// Badput causes, in the order the summary lists them.
enum class Badput {
  kInit,
  kPreflight,
  kRendezvous,
  kStartup,
  kRestart,
  kLostProgress,
  kHang,
  kCheckpointStall,
  kDraining
};
inline constexpr std::size_t kBadputCount = 9;
const char* badput_name(Badput b);

struct GoodputConfig {
  int nnodes = 1;
  int node_rank = 0;
  int nproc_per_node = 1;
  std::optional<double> mtbf_hours;  // per node (--mtbf-hours)
  bool checkpoints_watched = false;  // a --checkpoint-dir is watched
  // MFU (docs/observability.md, "MFU"): the model FLOPs of one training step of the whole job
  // (--flops-per-step), the dense BF16 peak of one GPU (launcher/observability/gpu_peak.h) and
  // the job's GPU count; MFU = flops_per_step / seconds_per_step / (gpus x peak), else, without
  // --flops-per-step, the framework's own TFLOP/s per GPU (a `tflops` progress group) / peak.
  std::optional<double> flops_per_step;
  std::optional<double> peak_flops_per_gpu;
  std::string gpu_name;
  int gpus = 0;
};

struct CheckpointSeen {
  double write_seconds = -1;   // -1 when unknown
  double since_previous = -1;  // -1 for the first one
  std::uint64_t bytes = 0;
  std::int64_t step = -1;
};

struct GoodputSnapshot {
  double wall = 0;
  Phase phase = Phase::kInit;
  std::array<double, kPhaseCount> phase_seconds{};
  std::array<double, kBadputCount> badput{};
  double productive = 0;
  double goodput = 0;  // productive / wall, 0 before any time passed
  // Evidence of when steps were made: a progress line in this node's own output. Without it the
  // time to the first step is not measured and every running second counts as productive, so
  // goodput is only an upper bound (and says so), even where checkpoints show that steps were
  // made (only rank 0 prints progress in rsl_rl or skrl: node 1 of such a job has none).
  bool progress_evidence = false;
  int generation = -1;
  int restarts = 0;
  int failures = 0;
  int workers_up = 0;
  int workers_expected = 0;
  std::map<int, long> worker_exits;  // exit code -> count
  std::optional<int> exit_code;      // once the run is finishing
  // Progress (only when a step was seen).
  std::optional<std::int64_t> step, total_steps;
  std::optional<double> seconds_per_step;
  // The longest start-up of a generation (its start to its first step) in this container.
  std::optional<double> longest_startup;
  // Where this container's first generation started from: the step of the checkpoint it resumed
  // (0 when a watched --checkpoint-dir had none), else its first progress step; unknown before.
  std::optional<std::int64_t> start_step;
  std::optional<double>
      mfu;  // model FLOPs utilization, when --flops-per-step and the peak are known
  std::optional<double> peak_flops_per_gpu;  // the peak MFU is measured against
  std::string gpu_name;
  std::int64_t lost_steps = 0;
  bool lost_progress_known = true;  // false: a restart whose lost work nothing could measure
  // Checkpoints.
  long checkpoints = 0;
  std::optional<double> checkpoint_age, last_write_seconds, checkpoint_cost, checkpoint_interval;
  std::optional<double> longest_write_seconds;  // the longest save the watcher measured
  std::optional<std::uint64_t> last_checkpoint_bytes;
  // Advice.
  std::optional<double> mtbf;
  std::string mtbf_source;  // "--mtbf-hours" or "observed"
  std::optional<double> advised_interval;
};

class GoodputAccountant {
 public:
  // `started_at` (clock_.now() units): when the run began, if before this object existed.
  GoodputAccountant(const Clock& clock, GoodputConfig config,
                    std::optional<double> started_at = std::nullopt);

  void enter(Phase p);
  // The checkpoint chosen for the next generation: its step (-1 when its name has none), or
  // nullopt when there is none to resume from.
  void resume_selected(std::optional<std::int64_t> step);
  void generation_started(int generation);  // enters running
  void generation_failed(int generation);   // enters restarting; once per generation
  // The hang verdict for `generation` (--hang-timeout), after `silent_seconds` without output:
  // from its last progress step to now is badput "hang"; enters restarting (the stacks and the
  // stop are the failure's). Before generation_failed.
  void generation_hung(int generation, double silent_seconds);
  // The start-up deadline of `generation` passed before its first step (--hang-timeout auto): its
  // whole window is badput "startup", whether or not the job printed steps before; enters
  // restarting. Before generation_failed. After a first step (a warm-up step's deadline): a hang.
  void generation_startup_expired(int generation);
  void ending(int exit_code);  // enters draining
  void worker_started();
  void worker_exited(int exit_code);
  void progress(const Progress& p);
  void checkpoint_seen(const CheckpointSeen& c);

  GoodputSnapshot snapshot() const;
  const GoodputConfig& config() const { return config_; }

 private:
  struct Generation {
    int number = 0;
    double start = 0;
    std::optional<double> stop;  // left running
    std::optional<std::int64_t> first_step, last_step;
    double first_step_at = 0, last_step_at = 0;
    std::optional<double> checkpoint_state_at;  // newest checkpoint seen: when its state was taken
    bool failed = false;
    std::optional<double> hung_at;  // the hang verdict
    bool startup_expired = false;   // the start-up deadline passed before a first step
    double hang = 0;                // of it, badput "hang"
  };
  struct Resume {
    bool found = false;
    std::int64_t step = -1;
  };
  void account_restart(const Generation& prev, double failed_at);
  void account_deferred(std::int64_t resumed_step);
  void add_lost(double seconds, std::optional<std::int64_t> steps);
  double tail_from(const Generation& g) const;
  std::optional<double> rate(const Generation& g) const;
  std::optional<double> job_rate() const;
  bool progress_seen() const;
  double startup_seconds() const;
  std::optional<double> longest_startup() const;
  void fill_checkpoints(GoodputSnapshot& s, double now) const;
  void fill_advice(GoodputSnapshot& s) const;
  std::optional<std::int64_t> start_step() const;
  std::optional<double> mfu(std::optional<double> seconds_per_step) const;

  const Clock& clock_;
  GoodputConfig config_;
  double t0_;
  Phase phase_ = Phase::kInit;
  double phase_since_;
  std::array<double, kPhaseCount> phase_seconds_{};
  std::vector<Generation> gens_;
  std::optional<Resume> pending_resume_;
  std::optional<Resume> first_resume_;  // the choice for generation 0
  std::optional<std::size_t>
      deferred_;  // index of a failed generation waiting for the next first step
  double lost_seconds_ = 0;
  std::int64_t lost_steps_ = 0;
  bool lost_known_ = true;
  double stall_seconds_ = 0;
  double hang_seconds_ = 0;
  std::optional<double> gap_from_;  // a checkpoint came: the last step's time before it
  std::vector<double> cost_samples_, gap_samples_, interval_samples_;
  long checkpoints_ = 0;
  std::optional<double> last_checkpoint_at_, last_write_;
  std::optional<std::uint64_t> last_bytes_;
  std::optional<double> framework_tflops_;  // the newest progress line's (?<tflops>) figure
  std::optional<std::int64_t> total_steps_;
  int failures_ = 0;
  int workers_up_ = 0;
  std::map<int, long> exits_;
  std::optional<int> exit_code_;
};

}  // namespace tv
