// SideQuery: a child that answers once on its stdout and runs beside the workers, off the
// critical paths (docs/architecture.md, "Start, failure, restart"): the start banner's
// `trainvisor __query gpu-health` when no preflight read the GPUs. The Supervisor starts each one
// after the first generation's workers, through its Spawner; its stdout is read on the event
// loop, and once the child has exited and its output ended `done` gets both. A child still
// running at `deadline` is SIGKILLed (timed_out). stop() kills it without an answer.
#pragma once

#include <sys/types.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/loop_time.h"
#include "common/process.h"
#include "launcher/workers/spawner.h"

namespace tv {

struct SideQueryEnd {
  std::string output;       // everything it wrote on stdout (capped at 1 MiB)
  int wait_status = 0;      // as waitpid gave it
  bool timed_out = false;   // killed at its deadline
  std::string not_started;  // the spawn error; nothing else is set then
};

struct SideQueryRequest {
  SpawnRequest request;
  std::chrono::milliseconds deadline{60000};
  std::function<void(const SideQueryEnd&)> done;
};

class SideQuery {
 public:
  SideQuery(boost::asio::io_context& io, LoopTime& time, Spawner& spawner, SideQueryRequest req);
  ~SideQuery();
  void start();
  void stop();
  // Answered (done was called) or never to answer (stopped).
  bool over() const { return over_; }

 private:
  void read();
  void maybe_done();

  Spawner& spawner_;
  SideQueryRequest req_;
  boost::asio::posix::stream_descriptor pipe_;
  LoopTimer deadline_;
  std::array<char, 4096> buf_{};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  SideQueryEnd end_;
  pid_t pid_ = -1;
  bool exited_ = false, eof_ = false, over_ = false;
};

}  // namespace tv
