// HeartbeatReads: the workers' heartbeat files ($TRAINVISOR_HEARTBEAT_FILE, in their rank
// directories under --log-dir) read off the event loop (common/off_loop.h): a stat on a slow or
// hung log file system never silences this node's heartbeats to its peers (issue 58). Each hang
// check starts the next read, at most one at a time; its mtimes come back on the loop to each
// worker still there (WorkerProcess::heartbeat_read), so the check after sees them: a heartbeat is
// seen at most one check late, and a read that hangs only leaves the workers as silent as their
// output says.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <vector>

#include "common/file_system.h"
#include "common/off_loop.h"
#include "launcher/workers/worker_process.h"

namespace tv {

class HeartbeatReads {
 public:
  // `fs` must be safe to call from another thread (RealFileSystem is) and outlive the process's
  // threads (an abandoned read still holds it); `off_loop` and `io` must outlive this.
  HeartbeatReads(boost::asio::io_context& io, OffLoop& off_loop, const FileSystem& fs)
      : io_(io), off_loop_(off_loop), fs_(fs) {}
  // Reads `workers`' heartbeat files beside the loop, unless the last read is still under way.
  void read(const std::vector<std::shared_ptr<WorkerProcess>>& workers);
  // The answer of a read under way is dropped (the loop is ending).
  void drop() { call_.drop(); }

 private:
  boost::asio::io_context& io_;
  OffLoop& off_loop_;
  const FileSystem& fs_;
  OffLoopCall call_;
};

}  // namespace tv
