#include "launcher/observability/metrics.h"

namespace tv {
namespace {

constexpr bool kCounter = true;
constexpr bool kGauge = false;

class Writer : public MetricSetWriter {
 public:
  template <class T>
  void optional(const char* name, const char* help, const std::optional<T>& v) {
    if (v) single(name, kGauge, help, static_cast<double>(*v));
  }
};

void write_phases(Writer& w, const GoodputSnapshot& s) {
  w.family("trainvisor_phase_seconds_total", kCounter,
           "Seconds spent in each phase of the job; the phases add up to the wall time.");
  for (std::size_t i = 0; i < kPhaseCount; ++i)
    w.sample(s.phase_seconds[i], {{"phase", phase_name(static_cast<Phase>(i))}});
  w.family("trainvisor_current_phase", kGauge,
           "1 for the phase the job is in now, 0 for the others.");
  for (std::size_t i = 0; i < kPhaseCount; ++i)
    w.sample(static_cast<std::size_t>(s.phase) == i ? 1 : 0,
             {{"phase", phase_name(static_cast<Phase>(i))}});
}

void write_goodput(Writer& w, const GoodputSnapshot& s) {
  w.single("trainvisor_wall_seconds", kGauge, "Seconds since trainvisor started.", s.wall);
  w.single("trainvisor_productive_seconds", kGauge,
           "Running seconds that made progress that was kept.", s.productive);
  w.family("trainvisor_badput_seconds", kGauge, "Seconds that made no kept progress, by cause.");
  for (std::size_t i = 0; i < kBadputCount; ++i)
    w.sample(s.badput[i], {{"cause", badput_name(static_cast<Badput>(i))}});
  w.single("trainvisor_goodput_ratio", kGauge, "Productive seconds / wall seconds.", s.goodput);
  w.single("trainvisor_goodput_upper_bound", kGauge,
           "1 when no progress line and no checkpoint showed that a step was made: every running "
           "second counted as productive, so the goodput ratio is only an upper bound.",
           s.progress_evidence ? 0 : 1);
}

void write_mfu(Writer& w, const GoodputSnapshot& s) {
  if (s.peak_flops_per_gpu) {
    w.family("trainvisor_gpu_peak_flops", kGauge,
             "Dense BF16 peak FLOP/s of one GPU, the denominator of MFU.");
    w.sample(*s.peak_flops_per_gpu, {{"gpu", s.gpu_name}});
  }
  w.optional("trainvisor_mfu_ratio",
             "Model FLOPs utilization: --flops-per-step / seconds per step / (GPUs x peak).",
             s.mfu);
}

void write_workers(Writer& w, const GoodputSnapshot& s) {
  w.single("trainvisor_workers_up", kGauge, "Worker processes running on this node.", s.workers_up);
  w.single("trainvisor_workers_expected", kGauge, "Workers per generation on this node.",
           s.workers_expected);
  w.single("trainvisor_generation", kGauge,
           "Generation of workers (0 = first start, +1 per restart).", s.generation);
  w.single("trainvisor_restarts_total", kCounter, "Whole-group restarts of the job.", s.restarts);
  w.single("trainvisor_failures_total", kCounter, "Generations that failed (on any node).",
           s.failures);
  w.family("trainvisor_worker_exits_total", kCounter,
           "Worker exits on this node by exit code (128+N: signal N).");
  for (const auto& [code, n] : s.worker_exits)
    w.sample(static_cast<double>(n), {{"exit_code", std::to_string(code)}});
  w.optional("trainvisor_exit_code", "The exit code trainvisor is about to exit with.",
             s.exit_code);
}

void write_progress(Writer& w, const GoodputSnapshot& s) {
  w.optional("trainvisor_progress_step", "Newest training step read from the workers' output.",
             s.step);
  w.optional("trainvisor_progress_total_steps", "Total steps, when the progress line names it.",
             s.total_steps);
  w.optional("trainvisor_progress_seconds_per_step", "Measured seconds per step.",
             s.seconds_per_step);
  w.single("trainvisor_lost_steps_total", kCounter, "Steps done again after restarts.",
           static_cast<double>(s.lost_steps));
  w.single("trainvisor_lost_progress_known", kGauge,
           "0 when a restart lost work that nothing could measure.", s.lost_progress_known ? 1 : 0);
}

void write_checkpoints(Writer& w, const GoodputSnapshot& s) {
  w.single("trainvisor_checkpoints_total", kCounter, "Complete checkpoints seen by the watcher.",
           static_cast<double>(s.checkpoints));
  w.optional("trainvisor_checkpoint_age_seconds", "Seconds since the newest checkpoint was seen.",
             s.checkpoint_age);
  w.optional("trainvisor_checkpoint_write_seconds", "How long the newest checkpoint took to write.",
             s.last_write_seconds);
  w.optional("trainvisor_checkpoint_size_bytes", "Size of the newest checkpoint.",
             s.last_checkpoint_bytes);
  w.optional("trainvisor_checkpoint_cost_seconds", "Measured cost C of one checkpoint.",
             s.checkpoint_cost);
  w.optional("trainvisor_checkpoint_interval_seconds", "Mean seconds between checkpoints.",
             s.checkpoint_interval);
  if (s.mtbf) {
    w.family("trainvisor_mtbf_seconds", kGauge,
             "Mean time between failures of the whole job used for the advice.");
    w.sample(*s.mtbf, {{"source", s.mtbf_source}});
  }
  w.optional("trainvisor_checkpoint_interval_advised_seconds",
             "Young/Daly checkpoint interval sqrt(2 x C x MTBF).", s.advised_interval);
}

}  // namespace

MetricSet metric_set(const GoodputSnapshot& s, const MetricsIdentity& id) {
  Writer w;
  w.family("trainvisor_info", kGauge,
           "Constant 1; labels: version and this node's place in the job.");
  w.sample(1, {{"version", id.version},
               {"node_rank", std::to_string(id.node_rank)},
               {"nnodes", std::to_string(id.nnodes)}});
  write_phases(w, s);
  write_goodput(w, s);
  write_workers(w, s);
  write_progress(w, s);
  write_checkpoints(w, s);
  write_mfu(w, s);
  return w.take();
}

MetricSet job_metric_set(const JobTotals& t) {
  Writer w;
  w.single("trainvisor_job_containers", kGauge,
           "Containers of this job so far (its ledger on the checkpoint dir), this one included.",
           t.containers);
  w.single("trainvisor_job_wall_seconds", kGauge,
           "Seconds from the job's first container's start to now (the causes add up to it).",
           job_wall(t));
  w.single("trainvisor_job_productive_seconds", kGauge,
           "Productive seconds of the whole job, across containers.", t.productive);
  w.family("trainvisor_job_badput_seconds", kGauge,
           "Badput of the whole job by cause; outside = between containers.");
  for (std::size_t i = 0; i < kBadputCount; ++i)
    w.sample(t.badput[i], {{"cause", badput_name(static_cast<Badput>(i))}});
  w.sample(t.outside, {{"cause", "outside"}});
  w.single("trainvisor_job_goodput_ratio", kGauge, "Job productive seconds / job wall seconds.",
           job_goodput(t));
  w.single("trainvisor_job_goodput_upper_bound", kGauge,
           "1 when no container of the job showed progress: the job goodput is an upper bound.",
           t.progress_evidence ? 0 : 1);
  w.single("trainvisor_job_lost_steps_total", kCounter,
           "Steps done again in the whole job, across container boundaries too.",
           static_cast<double>(t.lost_steps));
  return w.take();
}

std::string render_metrics(const GoodputSnapshot& s, const MetricsIdentity& id) {
  return prometheus_text(metric_set(s, id));
}

std::string render_job_metrics(const JobTotals& t) { return prometheus_text(job_metric_set(t)); }

}  // namespace tv
