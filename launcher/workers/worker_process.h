// WorkerProcess: one running worker's OS resources — its pid/process group, the read ends of its
// stdout/stderr pipes, its per-attempt log files, the tail of its output and its last sign of
// life. Owned by the Supervisor (shared_ptr, so pending Asio reads keep it alive after the
// generation ends). All methods run on the event loop. Its signals go through the Supervisor's
// Spawner, its times (last sign of life, the drain timer) are the Supervisor's LoopTime.
//
// The pipes are read by this class alone, non-blocking, when the loop says they are readable
// (async_wait): no read is ever in flight, so drain() can take everything already written at any
// moment, in order. Besides the tail (both streams, in the order read) it keeps the last
// traceback on stderr apart (traceback_watch.h): the root cause's line whichever pipe was read
// last (root_cause.h).
#pragma once

#include <sys/types.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/log_file.h"
#include "common/loop_time.h"
#include "launcher/workers/line_splitter.h"
#include "launcher/workers/spawner.h"
#include "launcher/workers/traceback_watch.h"

namespace tv {

class WorkerProcess : public std::enable_shared_from_this<WorkerProcess> {
 public:
  using Clock = LoopClock;
  struct Identity {
    int local_rank = 0;
    int rank = 0;
    int generation = 0;
    std::string error_file;
    std::string heartbeat_file;
    std::string stacks_file;  // where `trainvisor stacks` and a hang write its stacks
    std::string log_dir;      // "" = no per-rank files
    // --log-format json: each forwarded line is one JSON object (common/worker_line.h), not
    // "[rankN]: " and the line.
    bool json_lines = false;
  };

  // `log_dir_fd`: the open rank directory (log_dir), whose stdout.log / stderr.log are opened
  // relative to it (never through a link); -1 with no per-rank files.
  WorkerProcess(boost::asio::io_context& io, LoopTime& time, Spawner& spawner, Identity id,
                int log_dir_fd);
  ~WorkerProcess();

  // Creates the two pipes; returns the write ends for the child (closed again by attach()).
  bool open_pipes(int* out_w, int* err_w);
  // Instead of open_pipes: read ends that already exist (a standby's, written to before it
  // became this worker); the WorkerProcess owns them from now on.
  void adopt_pipes(int out_r, int err_r);
  // After spawn: remembers the pid, closes the write ends, starts reading.
  void attach(pid_t pid, std::function<void()> on_streams_closed);
  void close_pipes();
  // Reads what the worker has written so far on both pipes (never waits): before its root cause
  // is taken, so nothing it wrote before it died is missing, whichever pipe the loop read first.
  void drain();
  // Observers of the raw stdout/stderr bytes (an empty view: end of stream); set before attach().
  void set_taps(std::function<void(std::string_view)> out,
                std::function<void(std::string_view)> err) {
    out_.tap = std::move(out);
    err_.tap = std::move(err);
  }

  // Sends sig to the worker's process group (and to the worker itself if it left the group);
  // SIGCONT after SIGTERM, SIGINT or SIGHUP, so a stopped worker acts on it at once.
  void signal(int sig) const;
  // The heartbeat file's mtime as read off the loop (HeartbeatReads; nullopt: absent); a change
  // counts as a sign of life, and as a step for --hang-timeout auto (take_heartbeat_change).
  void heartbeat_read(std::optional<std::int64_t> mtime_ns);
  // True when the heartbeat changed (or the file appeared) since the last call.
  bool take_heartbeat_change();
  // The last sign of life: any bytes on either pipe (a tqdm bar's '\r' redraw without a newline
  // counts), or a heartbeat change.
  Clock::duration silent_for() const { return time_.now() - last_activity_; }

  const Identity& id() const { return id_; }
  pid_t pid() const { return pid_; }
  bool streams_open() const { return open_streams_ > 0; }
  std::optional<int> wait_status;  // set by the supervisor when Init reports the exit
  std::chrono::system_clock::time_point reaped_at;  // when it was (for the root cause's order)
  bool over = false;                                // its end reported to the WorkerGroup
  LoopTimer drain_timer;
  std::vector<std::string> tail() const { return {tail_.begin(), tail_.end()}; }
  // The last complete Python traceback on stderr, its exception line last; empty: none.
  const std::vector<std::string>& last_traceback() const { return traceback_.last(); }

 private:
  struct Stream {
    std::optional<boost::asio::posix::stream_descriptor> pipe;
    LineSplitter splitter;
    std::array<char, 16384> buf{};
    LogFile log;
    bool is_err = false;
    bool at_end = false;  // end of stream (or closed): reported once
    std::function<void(std::string_view)> tap;
  };
  void own_pipe(Stream& s, int fd);
  void wait_readable(Stream& s);
  // Reads at most `max_reads` buffers of what is there now; false once the stream has ended.
  bool read_now(Stream& s, int max_reads);
  // `continued`: the piece goes on from a longer line cut at the split size.
  void on_line(Stream& s, std::string_view line, bool continued);
  void stream_closed(Stream& s);

  boost::asio::io_context& io_;
  LoopTime& time_;
  Spawner& spawner_;
  Identity id_;
  pid_t pid_ = -1;
  Stream out_, err_;
  int open_streams_ = 0;
  std::function<void()> on_streams_closed_;
  Clock::time_point last_activity_;
  std::optional<std::int64_t> heartbeat_mtime_;  // ns (as HeartbeatReads read it)
  bool heartbeat_changed_ = false;               // since take_heartbeat_change
  std::deque<std::string> tail_;
  TracebackWatch traceback_;      // stderr's
  std::string prefix_;            // "[rankN]: "
  std::string continued_prefix_;  // "[rankN]+ ": a piece that continues a cut line
};

}  // namespace tv
