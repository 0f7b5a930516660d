#include "launcher/observability/otlp_exporter.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "launcher/observability/otlp_request.h"

namespace tv {

namespace http = boost::beast::http;

OtlpExporter::OtlpExporter(OtlpConfig config, std::string user_agent)
    : config_(std::move(config)),
      user_agent_(std::move(user_agent)),
      work_(boost::asio::make_work_guard(io_)),
      thread_([this] { io_.run(); }) {}

OtlpExporter::~OtlpExporter() {
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

void OtlpExporter::push(OtlpBatch batch) {
  boost::asio::post(io_, [this, b = std::move(batch)]() mutable {
    if (!finishing_) offer(std::move(b));
  });
}

bool OtlpExporter::finish(OtlpBatch batch, std::chrono::milliseconds deadline) {
  auto finished = finished_.get_future();
  final_timeout_ = std::min(deadline, config_.timeout);
  boost::asio::post(io_, [this, b = std::move(batch)]() mutable {
    finishing_ = true;
    if (in_flight_) in_flight_->abort();  // the last figures go now, not after a slow answer
    offer(std::move(b));
  });
  finished.wait_for(deadline);
  io_.stop();  // whatever is still in flight is dropped
  thread_.join();
  return lookups_ == 0;  // the sender has stopped: read here
}

void OtlpExporter::offer(OtlpBatch batch) {
  pending_ = std::move(batch);  // the queue holds one: a newer batch replaces a waiting one
  if (!in_flight_) start_next();
}

void OtlpExporter::start_next() {
  if (!pending_) return;
  http::request<http::string_body> req{http::verb::post, config_.target, 11};
  try {  // nothing here throws on what otlp_config.h lets through; a throw would end PID 1
    req.set(http::field::host, config_.host + ":" + config_.port);
    req.set(http::field::user_agent, user_agent_);
    req.set(http::field::content_type,
            config_.protobuf ? "application/x-protobuf" : "application/json");
    for (const auto& [k, v] : config_.headers) req.set(k, v);
    req.body() = config_.protobuf ? otlp_protobuf(*pending_) : otlp_json(*pending_);
    req.prepare_payload();
  } catch (const std::exception& e) {
    pending_.reset();
    in_flight_final_ = finishing_;
    return done(std::string("cannot make the request: ") + e.what());
  }
  pending_.reset();
  const auto timeout = finishing_ ? final_timeout_ : config_.timeout;
  in_flight_final_ = finishing_;
  in_flight_ = std::make_shared<OtlpRequest>(io_, config_, std::move(req), timeout, lookups_,
                                             [this](const std::string& failure) { done(failure); });
  in_flight_->start();
}

void OtlpExporter::done(const std::string& failure) {
  const bool last = in_flight_final_;
  if (failure.empty()) {
    if (failing_ && !told_recovery_) {
      told_recovery_ = true;
      spdlog::info("OTLP push to {}: the collector accepts again", config_.url);
    }
    failing_ = false;
  } else if (!finishing_ || last) {  // an earlier request abandoned for the last one is no news
    if (!warned_)
      spdlog::warn(
          "OTLP push to {}: {}{}; trainvisor keeps pushing every {} ms and says nothing more "
          "about it failing (/metrics is unaffected)",
          config_.url, failure,
          config_.port == "4317"
              ? " (4317 is OTLP/gRPC's port; OTLP/HTTP's is 4318: --otlp-endpoint)"
              : "",
          config_.interval.count());
    warned_ = failing_ = true;
  }
  boost::asio::post(io_, [this, last] {  // after the request's own handlers returned
    in_flight_.reset();
    if (last && !finished_set_) {
      finished_set_ = true;
      finished_.set_value();
      return;
    }
    start_next();
  });
}

}  // namespace tv
