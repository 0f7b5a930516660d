// Observability: the goodput accountant, the progress parser and the metrics server of one
// `trainvisor run`, wired together; the supervisor sees it as a RunObserver, `run` feeds it the
// phases before the supervisor exists, the resume choice and the checkpoint watcher's events, and
// prints its summary at the end. Everything runs on the supervisor's event loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/loop_time.h"
#include "launcher/node/run_observer.h"
#include "launcher/observability/goodput.h"
#include "launcher/observability/gpu_health_metrics.h"
#include "launcher/observability/ledger_file.h"
#include "launcher/observability/ledger_writer.h"
#include "launcher/observability/metrics.h"
#include "launcher/observability/metrics_server.h"
#include "launcher/observability/otlp_exporter.h"
#include "launcher/observability/progress.h"
#include "launcher/plan/observability_options.h"

namespace tv {

class Observability final : public RunObserver {
 public:
  // Parses the progress regex and binds the metrics port (errors: exit 78 naming the option).
  static Result<std::unique_ptr<Observability>> make(boost::asio::io_context& io,
                                                     ObservabilityConfig cfg, const Clock& clock,
                                                     double started_at,
                                                     LoopTime& time = real_loop_time());

  GoodputAccountant& accountant() { return accountant_; }
  // End of run: the summary table on stderr (spdlog) and --summary-file.
  void report();
  // The ledger's writes asked for so far are on disk (waited for at most `deadline`); true
  // without a ledger.
  bool ledger_settled(std::chrono::milliseconds deadline) const {
    return !ledger_ || ledger_->wait_idle(deadline);
  }

  void generation_started(int generation) override;
  void generation_failed(int generation) override;
  void generation_hung(int generation, double silent_seconds) override;
  void generation_startup_expired(int generation) override {
    accountant_.generation_startup_expired(generation);
  }
  void ending(int exit_code) override;
  void failure_evidence(int generation, std::string_view summary,
                        const std::vector<std::string>& paths) override;
  void root_cause_file(const std::string& path) override { failure_file_ = path; }
  void worker_started(int) override { accountant_.worker_started(); }
  void worker_exited(int, int exit_code) override { accountant_.worker_exited(exit_code); }
  std::function<void(std::string_view)> output_tap(int local_rank, bool is_stderr) override;
  void gpu_health(const GpuHealthEvent& e) override;
  void retry_judged(std::string_view rule) override { ++retry_decisions_[std::string(rule)]; }
  // The newest progress step of the current generation (a failure's signature); nullopt before
  // any progress line, and always without --progress-regex.
  std::optional<std::int64_t> generation_step() const { return generation_step_; }
  // --resume-fallback: the checkpoints the job's ledger marks poisoned (none without a ledger),
  // and a new mark, written to the ledger at once.
  std::vector<PoisonMark> poisoned() const;
  void mark_poisoned(PoisonMark m);
  // --save-signal: how the save before the stop went (the summary, this container's record).
  void stop_save(const StopSaveOutcome& o) override;
  // Told of every progress step parsed from any worker's output (--hang-timeout auto).
  void on_step(std::function<void(std::int64_t)> f) { on_step_ = std::move(f); }
  // The longest start-up of a generation in the job's earlier containers (its ledger); nullopt
  // without a ledger or before any was measured.
  std::optional<double> prior_longest_startup() const;
  std::optional<double> prior_longest_save() const;  // likewise, the longest checkpoint write

 private:
  Observability(ObservabilityConfig cfg, const Clock& clock, double started_at);
  void open_ledger(boost::asio::io_context& io, LoopTime& time);
  void start_otlp(boost::asio::io_context& io, LoopTime& time);
  void log_metrics() const;
  MetricSet metrics_now() const;  // /metrics and the OTLP push: one set
  OtlpBatch otlp_batch() const;
  void write_ledger(bool ended);
  std::optional<JobTotals> job_totals_now() const;
  ContainerRecord current_record(bool ended) const;
  ContainerRecord record_of(const GoodputSnapshot& snap, bool ended) const;
  JobTotals job_totals_with(ContainerRecord c) const;  // the prior containers' and this one
  void end_generation(int generation, const char* outcome);
  ObservabilityConfig cfg_;
  const Clock& clock_;
  MetricsIdentity id_;
  GoodputAccountant accountant_;
  double started_unix_;  // trainvisor's start on the Unix clock (the ledger spans containers)
  std::optional<ProgressParser> parser_;
  std::unique_ptr<MetricsServer> server_;
  GpuHealthMetrics gpu_health_;
  std::optional<std::int64_t> generation_step_;
  std::function<void(std::int64_t)> on_step_;
  std::map<std::string, int> retry_decisions_;  // by the RootCauseJudge's rule
  std::unique_ptr<LedgerWriter> ledger_;        // node 0: written off the loop
  bool stopped_by_signal_ = false;              // ending(128+N): the last write waits little
  std::optional<StopSaveRecord> stop_save_;
  std::vector<GenerationRecord> generations_;  // this container's, for `trainvisor report`
  std::string failure_file_;                   // written at the end of the run
  std::vector<PoisonMark> node0_marks_;      // another node's: node 0's ledger's marks at the start
  std::unique_ptr<LoopTimer> ledger_timer_;  // every --ledger-interval, on the loop's time
  std::unique_ptr<LoopTimer> metrics_log_timer_;  // every --metrics-log-interval
  std::unique_ptr<OtlpExporter> otlp_;
  std::unique_ptr<LoopTimer> otlp_timer_;  // every OTEL_METRIC_EXPORT_INTERVAL
};

}  // namespace tv
