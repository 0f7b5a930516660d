// The OTLP/HTTP metrics push (docs/observability.md, "OTLP push"): one sender thread with its own
// io_context, and a queue of one batch. `push` (the Supervisor's loop, every interval) only hands
// the figures over: a batch still waiting is replaced by the newer one (the figures are
// cumulative, so nothing is lost), and encoding, connecting and waiting for the collector are the
// sender's. A collector that is down, refuses, hangs past the timeout or answers anything but 2xx
// costs one warning for the whole run (one info line when it accepts again) and nothing else.
// `finish` sends the last batch and waits at most its deadline; whatever is still in flight then
// is dropped.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "launcher/observability/otlp_config.h"
#include "launcher/observability/otlp_encode.h"

namespace tv {

class OtlpRequest;

class OtlpExporter {
 public:
  OtlpExporter(OtlpConfig config, std::string user_agent);
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void push(OtlpBatch batch);
  // The last batch; returns once it was answered, failed, or `deadline` passed (then the request
  // is abandoned). Later pushes are dropped. False when a host-name lookup is still running: the
  // destructor would wait for it (getaddrinfo cannot be cancelled), so a caller about to exit
  // lets the exporter go without destroying it.
  bool finish(OtlpBatch batch, std::chrono::milliseconds deadline);
  const OtlpConfig& config() const { return config_; }

 private:
  // On the sender thread.
  void offer(OtlpBatch batch);
  void start_next();
  void done(const std::string& failure);

  OtlpConfig config_;
  std::string user_agent_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::optional<OtlpBatch> pending_;
  std::shared_ptr<OtlpRequest> in_flight_;
  bool finishing_ = false;
  int lookups_ = 0;               // host-name lookups running (otlp_request.h)
  bool in_flight_final_ = false;  // the request in flight carries finish's batch
  bool warned_ = false;           // the run's one warning was said
  bool failing_ = false;          // the last request failed
  bool told_recovery_ = false;
  std::chrono::milliseconds final_timeout_{0};
  std::promise<void> finished_;
  bool finished_set_ = false;
  std::thread thread_;
};

}  // namespace tv
