// ResumeWait: one resume lookup at a time, run off the event loop (common/off_loop.h: the
// checkpoint directory is on a network file system that stalls for seconds under load, and hangs
// when an NFS server is gone), its answer back on the loop. The loop meanwhile answers heartbeats,
// signals and the other nodes, so no node is lost for a slow lookup. Past kResumeLookupDeadline a
// warning names the directory and the time taken, and again each kResumeLookupRepeat after: the
// start waits on (starting without the checkpoint would throw away the job's progress), and a
// stop ends the run meanwhile (drop(): the lookup is abandoned). docs/checkpoints.md, "A slow
// checkpoint directory".
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>

#include "common/loop_time.h"
#include "common/off_loop.h"

namespace tv {

inline constexpr std::chrono::seconds kResumeLookupDeadline{10};
inline constexpr std::chrono::seconds kResumeLookupRepeat{60};

class ResumeWait {
 public:
  ResumeWait(boost::asio::io_context& io, LoopTime& time, OffLoop& off_loop, std::string dir);
  // Starts `work` (it replaces a lookup under way, whose answer is dropped); `what` names the
  // start that waits ("generation 2") in the deadline's warning.
  void start(std::string what, OffLoop::Work work);
  bool pending() const { return call_.pending(); }
  void drop();

 private:
  void arm(LoopClock::duration after);
  boost::asio::io_context& io_;
  OffLoop& off_loop_;
  std::string dir_;
  std::string what_;
  LoopClock::time_point began_{};
  LoopTimer timer_;
  OffLoopCall call_;
};

}  // namespace tv
