// Observability: the goodput accountant, the progress parser and the metrics server of one
// `trainvisor run`, wired together; the supervisor sees it as a RunObserver, `run` feeds it the
// phases before the supervisor exists, the resume choice and the checkpoint watcher's events, and
// prints its summary at the end. Everything runs on the supervisor's event loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/loop_time.h"
#include "common/options.h"
#include "launcher/observability/goodput.h"
#include "launcher/observability/gpu_health_metrics.h"
#include "launcher/observability/ledger_file.h"
#include "launcher/observability/metrics.h"
#include "launcher/observability/metrics_server.h"
#include "launcher/observability/progress.h"
#include "launcher/supervision/run_observer.h"

namespace tv {

struct ObservabilityConfig {
  GoodputConfig goodput;
  int metrics_port = 0;  // 0 = off
  std::string metrics_address = "0.0.0.0";
  std::optional<std::string> progress_regex;
  std::optional<std::string> summary_file;
  // The job's ledger (docs/observability.md, "The job's ledger"): kept by node 0 in the checkpoint
  // dir when the job has an id; rewritten every ledger_interval seconds (0: no ledger) and at exit.
  std::optional<std::string> ledger_dir;
  std::string job_id;  // "" or "none": no ledger
  double ledger_interval = 30;
  // Node 0 logs format_metrics_line every metrics_log_interval seconds and at the end; 0: never.
  double metrics_log_interval = 0;
};

// The options of the Observability section, checked (exit 64/78 naming the option); `goodput`
// fields other than mtbf_hours are left for the caller (they come from the topology). Without
// --metrics-address the port listens on loopback only, except in a Kubernetes pod
// (`in_kubernetes`: KUBERNETES_SERVICE_HOST), where the kubelet's probes and Prometheus reach it
// on the pod's address (docs/observability.md).
Result<ObservabilityConfig> read_observability_options(const Options& o, bool in_kubernetes);

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

  void generation_started(int generation) override;
  void generation_failed(int generation) override { accountant_.generation_failed(generation); }
  void generation_hung(int generation, double silent_seconds) override {
    accountant_.generation_hung(generation, silent_seconds);
  }
  void finishing(int exit_code) override { accountant_.finishing(exit_code); }
  void worker_started(int) override { accountant_.worker_started(); }
  void worker_exited(int, int exit_code) override { accountant_.worker_exited(exit_code); }
  std::function<void(std::string_view)> output_tap(int local_rank, bool is_stderr) override;
  void gpu_health(const GpuHealthEvent& e) override;
  void retry_judged(std::string_view rule) override { ++retry_decisions_[std::string(rule)]; }
  // The newest progress step of the current generation (a failure's signature); nullopt before
  // any progress line, and always without --progress-regex.
  std::optional<std::int64_t> generation_step() const { return generation_step_; }

 private:
  Observability(ObservabilityConfig cfg, const Clock& clock, double started_at);
  void open_ledger(boost::asio::io_context& io, LoopTime& time);
  void log_metrics() const;
  void write_ledger(bool ended);
  std::optional<JobTotals> job_totals_now() const;
  ContainerRecord current_record(bool ended) const;
  ObservabilityConfig cfg_;
  MetricsIdentity id_;
  GoodputAccountant accountant_;
  double started_unix_;  // trainvisor's start on the Unix clock (the ledger spans containers)
  std::optional<ProgressParser> parser_;
  std::unique_ptr<MetricsServer> server_;
  GpuHealthMetrics gpu_health_;
  std::optional<std::int64_t> generation_step_;
  std::map<std::string, int> retry_decisions_;  // by the RootCauseJudge's rule
  std::optional<LedgerFile> ledger_;
  std::unique_ptr<LoopTimer> ledger_timer_;       // every --ledger-interval, on the loop's time
  std::unique_ptr<LoopTimer> metrics_log_timer_;  // every --metrics-log-interval
};

}  // namespace tv
