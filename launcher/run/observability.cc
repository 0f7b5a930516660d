#include "launcher/run/observability.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

#include "common/exit_codes.h"
#include "launcher/observability/retry_metrics.h"
#include "launcher/observability/summary.h"
#include "launcher/workers/evidence_files.h"

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

Observability::Observability(ObservabilityConfig cfg, const Clock& clock, double started_at)
    : cfg_(std::move(cfg)),
      clock_(clock),
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
        [self] { return prometheus_text(self->metrics_now()); }, time);
    if (!s) return s.error();
    o->server_ = std::move(*s);
    spdlog::info("metrics on http://{}:{}/metrics (and /healthz)", o->cfg_.metrics_address,
                 o->server_->port());
  }
  o->start_otlp(io, time);
  return o;
}

// Every interval the loop hands the sender the figures of now (otlp_exporter.h: the encoding
// and the HTTP are the sender thread's).
void Observability::start_otlp(boost::asio::io_context& io, LoopTime& time) {
  if (!cfg_.otlp) return;
  char host[256] = {};
  OtlpAttributes identity = {
      {"service.version", id_.version},
      {"host.name", ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown"}};
  if (!cfg_.job_id.empty() && cfg_.job_id != "none")
    identity.emplace_back("trainvisor.job.id", cfg_.job_id);
  identity.emplace_back("trainvisor.node_rank", std::to_string(id_.node_rank));
  identity.emplace_back("trainvisor.nnodes", std::to_string(id_.nnodes));
  add_identity(cfg_.otlp->resource, identity);
  otlp_ = std::make_unique<OtlpExporter>(*cfg_.otlp, std::string("trainvisor/") + id_.version);
  spdlog::info("OTLP push to {} ({}) every {} ms", cfg_.otlp->url,
               cfg_.otlp->protobuf ? "http/protobuf" : "http/json", cfg_.otlp->interval.count());
  otlp_timer_ = std::make_unique<LoopTimer>(io, time);
  repeat(*otlp_timer_, std::chrono::duration<double>(cfg_.otlp->interval).count(),
         [this] { otlp_->push(otlp_batch()); });
}

MetricSet Observability::metrics_now() const {
  MetricSet set = metric_set(accountant_.snapshot(), id_);
  for (MetricSet more : {gpu_health_.families(), retry_decision_set(retry_decisions_)})
    std::move(more.begin(), more.end(), std::back_inserter(set));
  if (auto job = job_totals_now()) {
    MetricSet j = job_metric_set(*job);
    std::move(j.begin(), j.end(), std::back_inserter(set));
  }
  return set;
}

OtlpBatch Observability::otlp_batch() const {
  auto nanos = [](double unix_seconds) { return static_cast<std::uint64_t>(unix_seconds * 1e9); };
  return {cfg_.otlp->resource, id_.version, nanos(started_unix_), nanos(clock_.unix_now()),
          metrics_now()};
}

// Node 0 of a job with an id and a checkpoint dir keeps the ledger; the other nodes' figures are
// their own (node 0 sees every generation of the job: docs/observability.md, "Several nodes").
void Observability::open_ledger(boost::asio::io_context& io, LoopTime& time) {
  const bool has_id = !cfg_.job_id.empty() && cfg_.job_id != "none";
  // The other nodes step over the checkpoints node 0's ledger marks (docs/checkpoints.md).
  if (cfg_.ledger_dir && has_id && cfg_.goodput.node_rank != 0)
    node0_marks_ = read_ledger_marks(*cfg_.ledger_dir, cfg_.job_id);
  if (!cfg_.ledger_dir || cfg_.ledger_interval <= 0 || cfg_.goodput.node_rank != 0) return;
  if (!has_id) {
    spdlog::info(
        "job ledger: not kept (no job id: set --run-id or --rdzv-id to continue one job's account "
        "across containers)");
    return;
  }
  ledger_ = std::make_unique<LedgerWriter>(LedgerFile::open(*cfg_.ledger_dir, cfg_.job_id));
  ledger_timer_ = std::make_unique<LoopTimer>(io, time);
  repeat(*ledger_timer_, cfg_.ledger_interval, [this] { write_ledger(false); });
}

void Observability::log_metrics() const {
  spdlog::info("{}", format_metrics_line(accountant_.snapshot(), job_totals_now()));
}

ContainerRecord Observability::current_record(bool ended) const {
  return record_of(accountant_.snapshot(), ended);
}

ContainerRecord Observability::record_of(const GoodputSnapshot& snap, bool ended) const {
  ContainerRecord c =
      record_from(snap, ledger_->index(), started_unix_, started_unix_ + snap.wall, ended);
  c.stop_save = stop_save_;
  c.generations = generations_;
  c.failure_file = failure_file_;
  c.gpus = cfg_.goodput.nnodes * cfg_.goodput.nproc_per_node;
  return c;
}

std::vector<PoisonMark> Observability::poisoned() const {
  return ledger_ ? ledger_->marks() : node0_marks_;
}

void Observability::mark_poisoned(PoisonMark m) {
  if (!ledger_) return;
  m.container = ledger_->index();
  ledger_->mark(std::move(m));
  write_ledger(false);
}

void Observability::stop_save(const StopSaveOutcome& o) {
  stop_save_ = StopSaveRecord{o.completed, o.waited_seconds, o.saved_step, o.lost_steps, o.path};
  write_ledger(false);
}

void Observability::write_ledger(bool ended) {
  if (ledger_) ledger_->write(current_record(ended));
}

std::optional<JobTotals> Observability::job_totals_now() const {
  if (!ledger_) return std::nullopt;
  return job_totals_with(current_record(false));
}

JobTotals Observability::job_totals_with(ContainerRecord c) const {
  Ledger l = ledger_->prior();
  put_record(l, std::move(c));
  return job_totals(l);
}

std::optional<double> Observability::prior_longest_startup() const {
  if (!ledger_) return std::nullopt;
  return job_totals(ledger_->prior()).longest_startup;
}

std::optional<double> Observability::prior_longest_save() const {
  if (!ledger_) return std::nullopt;
  return job_totals(ledger_->prior()).longest_save;
}

void Observability::generation_started(int generation) {
  generation_step_.reset();
  accountant_.generation_started(generation);
  if (ledger_) {
    GenerationRecord g;
    g.number = generation;
    g.started_unix = clock_.unix_now();
    add_generation(generations_, std::move(g));
  }
  write_ledger(false);  // each start is on the ledger at once, before the first heartbeat
}

// A generation's end on the ledger (the first one counts: a hang's verdict, then its failure).
void Observability::end_generation(int generation, const char* outcome) {
  GenerationRecord* g = find_generation(generations_, generation);
  if (!g || g->ended_unix) return;
  g->ended_unix = clock_.unix_now();
  g->outcome = outcome;
}

void Observability::generation_failed(int generation) {
  accountant_.generation_failed(generation);
  end_generation(generation, "failed");
}

void Observability::generation_hung(int generation, double silent_seconds) {
  accountant_.generation_hung(generation, silent_seconds);
  end_generation(generation, "hung");
}

void Observability::ending(int exit_code) {
  accountant_.ending(exit_code);
  stopped_by_signal_ = kind_of_exit_code(exit_code) == ErrorKind::kStoppedBySignal;
  if (!generations_.empty())
    end_generation(generations_.back().number, exit_code == 0 ? "succeeded" : "stopped");
}

void Observability::failure_evidence(int generation, std::string_view summary,
                                     const std::vector<std::string>& paths) {
  GenerationRecord* g = find_generation(generations_, generation);
  if (!g) return;
  if (g->summary.empty()) g->summary = ledger_text_cut(std::string(summary));  // the first one's
  const RealFileSystem fs;
  for (const auto& p : paths)  // a log's exception line beside its path (a bounded tail read)
    add_evidence(*g, p, p.ends_with("/stderr.log") ? log_exception(fs, p) : "");
}

std::function<void(std::string_view)> Observability::output_tap(int, bool) {
  if (!parser_) return {};
  auto tap = std::make_shared<ProgressTap>(*parser_, [this](const Progress& p) {
    generation_step_ = p.step;
    accountant_.progress(p);
    if (on_step_) on_step_(p.step);
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
  // One snapshot for the ledger's last record and the summary: they give the same account (a
  // slow fsync or the OTLP push between two snapshots would otherwise count as draining).
  const auto snap = accountant_.snapshot();
  std::optional<JobTotals> job;
  if (ledger_) {
    ContainerRecord last = record_of(snap, true);
    ledger_->finish(last, stopped_by_signal_ ? kLedgerStopDeadline : kLedgerExitDeadline);
    job = job_totals_with(std::move(last));
  }
  if (otlp_timer_) otlp_timer_->cancel();
  if (otlp_) {  // the last figures, exit code included, bounded: a stop is never held long
    if (!otlp_->finish(otlp_batch(), std::min(cfg_.otlp->timeout, kOtlpExitDeadline)))
      (void)otlp_.release();  // trainvisor exits next: waiting for a DNS lookup would hold the stop
    otlp_.reset();
  }
  const std::string save = stop_save_ ? stop_save_line(*stop_save_) + "\n" : "";
  spdlog::info("{}{}{}", format_summary_table(snap, id_), save,
               job ? format_job_summary(*job) : "");
  if (!cfg_.summary_file) return;
  auto j = summary_json(snap, id_);
  j["job"] = job ? job_summary_json(*job) : nlohmann::json();
  if (stop_save_) j["stop_save"] = stop_save_json(*stop_save_);
  if (auto s = write_summary_file(*cfg_.summary_file, j); !s) spdlog::warn("{}", s.error().message);
}

}  // namespace tv
