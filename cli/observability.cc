#include "cli/observability.h"

#include <spdlog/spdlog.h>

#include "common/exit_codes.h"
#include "launcher/observability/retry_metrics.h"
#include "launcher/observability/summary.h"

#ifndef TRAINVISOR_VERSION
#define TRAINVISOR_VERSION "unknown"
#endif

namespace tv {
namespace {

// Runs `tick` every `seconds` on the loop's time until the timer is cancelled.
void repeat(LoopTimer& timer, double seconds, std::function<void()> tick) {
  timer.expires_after(
      std::chrono::duration_cast<LoopClock::duration>(std::chrono::duration<double>(seconds)));
  timer.async_wait([&timer, seconds, tick](const boost::system::error_code& ec) {
    if (ec) return;
    tick();
    repeat(timer, seconds, tick);
  });
}

}  // namespace

Result<ObservabilityConfig> read_observability_options(const Options& o, bool in_kubernetes) {
  ObservabilityConfig c;
  auto port = o.get_int("metrics-port");
  if (!port) return port.error();
  c.metrics_port = static_cast<int>(*port);
  c.metrics_address = o.value_or("metrics-address", in_kubernetes ? "0.0.0.0" : "127.0.0.1");
  if (auto v = o.get("progress-regex")) c.progress_regex = v->value;
  if (auto v = o.get("summary-file")) c.summary_file = v->value;
  if (auto v = o.get("mtbf-hours")) {
    auto h = o.get_double("mtbf-hours");
    if (!h) return h.error();
    if (*h <= 0)
      return Error{exit_code::kConfig,
                   v->origin + "=\"" + v->value + "\": expected a number of hours above 0"};
    c.goodput.mtbf_hours = *h;
  }
  if (o.get("flops-per-step")) {
    auto f = o.get_double("flops-per-step");
    if (!f) return f.error();
    c.goodput.flops_per_step = *f;
  }
  auto interval = o.get_double("ledger-interval");
  if (!interval) return interval.error();
  c.ledger_interval = *interval;
  auto every = o.get_double("metrics-log-interval");
  if (!every) return every.error();
  c.metrics_log_interval = *every;
  return c;
}

Observability::Observability(ObservabilityConfig cfg, const Clock& clock, double started_at)
    : cfg_(std::move(cfg)),
      id_{TRAINVISOR_VERSION, cfg_.goodput.node_rank, cfg_.goodput.nnodes},
      accountant_(clock, cfg_.goodput, started_at),
      started_unix_(clock.unix_now() - (clock.now() - started_at)) {}

Result<std::unique_ptr<Observability>> Observability::make(boost::asio::io_context& io,
                                                           ObservabilityConfig cfg,
                                                           const Clock& clock, double started_at,
                                                           LoopTime& time) {
  std::unique_ptr<Observability> o(new Observability(std::move(cfg), clock, started_at));
  if (o->cfg_.progress_regex) {
    auto p = ProgressParser::make(*o->cfg_.progress_regex, "--progress-regex");
    if (!p) return p.error();
    o->parser_.emplace(std::move(*p));
  }
  o->open_ledger(io, time);
  if (o->cfg_.metrics_log_interval > 0 && o->cfg_.goodput.node_rank == 0) {
    auto* self = o.get();
    o->metrics_log_timer_ = std::make_unique<LoopTimer>(io, time);
    repeat(*o->metrics_log_timer_, o->cfg_.metrics_log_interval, [self] { self->log_metrics(); });
  }
  if (o->cfg_.metrics_port != 0) {
    auto* self = o.get();
    auto s = MetricsServer::listen(
        io, o->cfg_.metrics_address, o->cfg_.metrics_port, "--metrics-port",
        [self] {
          auto text = render_metrics(self->accountant_.snapshot(), self->id_) +
                      self->gpu_health_.render() + render_retry_decisions(self->retry_decisions_);
          if (auto job = self->job_totals_now()) text += render_job_metrics(*job);
          return text;
        },
        time);
    if (!s) return s.error();
    o->server_ = std::move(*s);
    spdlog::info("metrics on http://{}:{}/metrics (and /healthz)", o->cfg_.metrics_address,
                 o->server_->port());
  }
  return o;
}

// Node 0 of a job with an id and a checkpoint dir keeps the ledger; the other nodes' figures are
// their own (node 0 sees every generation of the job: docs/observability.md, "Several nodes").
void Observability::open_ledger(boost::asio::io_context& io, LoopTime& time) {
  if (!cfg_.ledger_dir || cfg_.ledger_interval <= 0 || cfg_.goodput.node_rank != 0) return;
  if (cfg_.job_id.empty() || cfg_.job_id == "none") {
    spdlog::info(
        "job ledger: not kept (no job id: set --run-id or --rdzv-id to continue one job's account "
        "across containers)");
    return;
  }
  ledger_.emplace(LedgerFile::open(*cfg_.ledger_dir, cfg_.job_id));
  ledger_timer_ = std::make_unique<LoopTimer>(io, time);
  repeat(*ledger_timer_, cfg_.ledger_interval, [this] { write_ledger(false); });
}

void Observability::log_metrics() const {
  spdlog::info("{}", format_metrics_line(accountant_.snapshot(), job_totals_now()));
}

ContainerRecord Observability::current_record(bool ended) const {
  const auto snap = accountant_.snapshot();
  return record_from(snap, ledger_->index(), started_unix_, started_unix_ + snap.wall, ended);
}

void Observability::write_ledger(bool ended) {
  if (ledger_) ledger_->write(current_record(ended));
}

std::optional<JobTotals> Observability::job_totals_now() const {
  if (!ledger_) return std::nullopt;
  Ledger l = ledger_->prior();
  put_record(l, current_record(false));
  return job_totals(l);
}

void Observability::generation_started(int generation) {
  generation_step_.reset();
  accountant_.generation_started(generation);
  write_ledger(false);  // each start is on the ledger at once, before the first heartbeat
}

std::function<void(std::string_view)> Observability::output_tap(int, bool) {
  if (!parser_) return {};
  auto tap = std::make_shared<ProgressTap>(*parser_, [this](const Progress& p) {
    generation_step_ = p.step;
    accountant_.progress(p);
  });
  return [tap](std::string_view bytes) {
    if (bytes.empty()) return tap->finish();
    tap->feed(bytes);
  };
}

void Observability::gpu_health(const GpuHealthEvent& e) {
  using Kind = GpuHealthEvent::Kind;
  if (e.kind == Kind::kWatching || e.kind == Kind::kUnavailable)
    gpu_health_.watching(e.kind == Kind::kWatching);
  else if (e.kind == Kind::kCondition)
    gpu_health_.condition(e.gpu, e.uuid, e.condition, e.active);
  else if (e.kind == Kind::kXid)
    gpu_health_.xid(e.gpu, e.uuid, e.xid);
}

void Observability::report() {
  if (ledger_timer_) ledger_timer_->cancel();
  if (metrics_log_timer_) {
    metrics_log_timer_->cancel();
    log_metrics();  // the end-of-run values in the same record
  }
  write_ledger(true);
  const auto snap = accountant_.snapshot();
  const auto job = job_totals_now();
  spdlog::info("{}{}", format_summary_table(snap, id_), job ? format_job_summary(*job) : "");
  if (!cfg_.summary_file) return;
  auto j = summary_json(snap, id_);
  j["job"] = job ? job_summary_json(*job) : nlohmann::json();
  if (auto s = write_summary_file(*cfg_.summary_file, j); !s) spdlog::warn("{}", s.error().message);
}

}  // namespace tv
