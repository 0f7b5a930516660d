// GpuHealthWatch: the owner of the GPU health child (`trainvisor __query gpu-watch SECONDS`,
// health/gpu_watch.h) while the Supervisor runs. It is started through the Supervisor's Spawner
// (Init::spawn), its stdout is a pipe read on the Supervisor's event loop, and each JSON line it
// prints becomes a GpuHealthEvent for the Supervisor (a fatal one ends the job on this node:
// docs/health.md, "GPU health while training"). A child that dies on its own is started again
// (after 1 s, at most kMaxRestarts times); one that said `unavailable` is not. stop() kills it
// (through the Spawner). The restart delay is a LoopTimer of the Supervisor's LoopTime.
#pragma once

#include <sys/types.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/loop_time.h"
#include "common/process.h"
#include "launcher/workers/line_splitter.h"
#include "launcher/workers/spawner.h"

namespace tv {

struct GpuHealthEvent {
  enum class Kind { kWatching, kUnavailable, kReading, kCondition, kXid, kNote, kUnknown };
  Kind kind = Kind::kUnknown;
  bool fatal = false;
  bool active = true;  // a condition that became active (false: it cleared)
  int gpu = -1;        // NVML's index
  std::string uuid;
  std::string pci_bus_id;
  std::string gpu_name;
  std::string condition;  // lost, remap_failed, ecc_uncorrected, hw_thermal ...
  unsigned xid = 0;
  std::string message;  // the child's own words (the Xid's meaning, the reason, the condition)
};

// One line of the child's protocol; kUnknown for anything else (never a throw).
GpuHealthEvent parse_gpu_health_line(std::string_view line);
// "GPU 0 (GPU-8f.., PCI 00000000:04:00.0, NVIDIA H200): Xid 79: GPU has fallen off the bus"
std::string describe_gpu_event(const GpuHealthEvent& e);

class GpuHealthWatch {
 public:
  using OnEvent = std::function<void(const GpuHealthEvent&)>;
  static constexpr int kMaxRestarts = 3;

  GpuHealthWatch(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                 SpawnRequest request, OnEvent on_event);
  ~GpuHealthWatch();
  void start();
  // SIGKILLs the child's process group; no restart after this.
  void stop();
  bool gone() const { return pid_ <= 0; }
  pid_t pid() const { return pid_; }

 private:
  void on_exit(pid_t pid, int status);
  void read();
  void on_line(std::string_view line);

  boost::asio::io_context& io_;
  Spawner& spawner_;
  SpawnRequest request_;
  OnEvent on_event_;
  boost::asio::posix::stream_descriptor pipe_;
  LoopTimer restart_timer_;
  LineSplitter splitter_;
  std::array<char, 4096> buf_{};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  pid_t pid_ = -1;
  int restarts_ = 0;
  bool stopping_ = false;
  bool unavailable_ = false;
};

}  // namespace tv
