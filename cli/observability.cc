#include "cli/observability.h"

#include <spdlog/spdlog.h>

#include "common/exit_codes.h"
#include "launcher/observability/retry_metrics.h"
#include "launcher/observability/summary.h"

#ifndef TRAINVISOR_VERSION
#define TRAINVISOR_VERSION "unknown"
#endif

namespace tv {

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
  return c;
}

Observability::Observability(ObservabilityConfig cfg, const Clock& clock, double started_at)
    : cfg_(std::move(cfg)),
      id_{TRAINVISOR_VERSION, cfg_.goodput.node_rank, cfg_.goodput.nnodes},
      accountant_(clock, cfg_.goodput, started_at) {}

Result<std::unique_ptr<Observability>> Observability::make(boost::asio::io_context& io,
                                                           ObservabilityConfig cfg,
                                                           const Clock& clock, double started_at) {
  std::unique_ptr<Observability> o(new Observability(std::move(cfg), clock, started_at));
  if (o->cfg_.progress_regex) {
    auto p = ProgressParser::make(*o->cfg_.progress_regex, "--progress-regex");
    if (!p) return p.error();
    o->parser_.emplace(std::move(*p));
  }
  if (o->cfg_.metrics_port != 0) {
    auto* self = o.get();
    auto s = MetricsServer::listen(
        io, o->cfg_.metrics_address, o->cfg_.metrics_port, "--metrics-port", [self] {
          return render_metrics(self->accountant_.snapshot(), self->id_) +
                 self->gpu_health_.render() +
                 render_retry_decisions(self->retry_decisions_);
        });
    if (!s) return s.error();
    o->server_ = std::move(*s);
    spdlog::info("metrics on http://{}:{}/metrics (and /healthz)", o->cfg_.metrics_address,
                 o->server_->port());
  }
  return o;
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
  const auto snap = accountant_.snapshot();
  spdlog::info("{}", format_summary_table(snap, id_));
  if (!cfg_.summary_file) return;
  if (auto s = write_summary_file(*cfg_.summary_file, summary_json(snap, id_)); !s)
    spdlog::warn("{}", s.error().message);
}

}  // namespace tv
