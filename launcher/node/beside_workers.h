// What runs beside the workers for the whole run and never on a worker's start or restart path:
// the GPU health watch (gpu_health_watch.h) and the side queries that answer once (side_query.h:
// the start banner's GPU query). Started once, after the first generation's workers, at the
// lowest CPU priority (SpawnRequest::background), so they never delay a worker's start on a busy
// node; at the end, the side queries get until their own deadlines to answer, then what is left
// is killed. Their owner: the Supervisor's one BesideWorkers.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <vector>

#include "common/loop_time.h"
#include "launcher/node/gpu_health_watch.h"
#include "launcher/workers/side_query.h"
#include "launcher/workers/spawner.h"

namespace tv {

class BesideWorkers {
 public:
  // `gpu_watch`: the watch's child (unset: the GPUs are not watched); its events go to `on_gpu`.
  BesideWorkers(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                std::optional<SpawnRequest> gpu_watch, GpuHealthWatch::OnEvent on_gpu,
                std::vector<SideQueryRequest> queries);
  void start();  // once: later calls do nothing
  pid_t gpu_watch_pid() const { return watch_ ? watch_->pid() : 0; }
  // The loop has stopped. With `await_answers`, the side queries still running get until their
  // own deadlines (polled on the loop, 200 s at most); then every one left is killed and the watch
  // is stopped (SIGKILL, no restart).
  void stop(bool await_answers);
  bool gone() const { return !watch_ || watch_->gone(); }  // the watch's child reaped

 private:
  bool answers_pending() const;

  boost::asio::io_context& io_;
  LoopTime& time_;
  Spawner& spawner_;
  std::unique_ptr<GpuHealthWatch> watch_;  // null when the GPUs are not watched
  std::vector<SideQueryRequest> requests_;
  std::vector<std::unique_ptr<SideQuery>> queries_;
  bool started_ = false;
};

}  // namespace tv
