#include "launcher/workers/worker_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <utility>

#include "common/output_sink.h"
#include "common/worker_line.h"

namespace tv {
namespace {
constexpr size_t kTailLines = 20;
constexpr int kReadsPerWakeup = 4;  // 64 KiB, then the loop runs its other handlers
// A drain takes what is there: a pipe's whole buffer (64 KiB by default) and more, but stops after
// 1 MiB when a grandchild that holds the pipe keeps writing.
constexpr int kDrainReads = 64;
}  // namespace

WorkerProcess::WorkerProcess(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                             Identity id, int log_dir_fd)
    : drain_timer(io, time),
      io_(io),
      time_(time),
      spawner_(spawner),
      id_(std::move(id)),
      last_activity_(time.now()),
      prefix_("[rank" + std::to_string(id_.rank) + "]: "),
      continued_prefix_("[rank" + std::to_string(id_.rank) + "]+ ") {
  err_.is_err = true;
  if (id_.log_dir.empty() || log_dir_fd < 0) return;
  out_.log.open(log_dir_fd, "stdout.log", id_.log_dir + "/stdout.log");
  err_.log.open(log_dir_fd, "stderr.log", id_.log_dir + "/stderr.log");
}

WorkerProcess::~WorkerProcess() { close_pipes(); }

bool WorkerProcess::open_pipes(int* out_w, int* err_w) {
  int o[2], e[2];
  if (::pipe2(o, O_CLOEXEC) != 0) return false;
  if (::pipe2(e, O_CLOEXEC) != 0) {
    ::close(o[0]);
    ::close(o[1]);
    return false;
  }
  own_pipe(out_, o[0]);
  own_pipe(err_, e[0]);
  *out_w = o[1];
  *err_w = e[1];
  return true;
}

void WorkerProcess::adopt_pipes(int out_r, int err_r) {
  own_pipe(out_, out_r);
  own_pipe(err_, err_r);
}

void WorkerProcess::own_pipe(Stream& s, int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  s.pipe.emplace(io_, fd);
  s.at_end = false;
}

void WorkerProcess::attach(pid_t pid, std::function<void()> on_streams_closed) {
  pid_ = pid;
  on_streams_closed_ = std::move(on_streams_closed);
  last_activity_ = time_.now();
  open_streams_ = 2;
  wait_readable(out_);
  wait_readable(err_);
}

// Whatever the worker wrote before it died is forwarded before its pipe is closed, even when the
// event loop has not got round to reading it yet.
void WorkerProcess::close_pipes() {
  for (Stream* s : {&out_, &err_}) {
    if (!s->pipe || !s->pipe->is_open()) continue;
    read_now(*s, kDrainReads);
    stream_closed(*s);
    boost::system::error_code ec;
    s->pipe->close(ec);  // the pending wait ends with operation_aborted: nothing left to do
  }
}

void WorkerProcess::drain() {
  for (Stream* s : {&out_, &err_}) read_now(*s, kDrainReads);
}

void WorkerProcess::wait_readable(Stream& s) {
  auto self = shared_from_this();
  s.pipe->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [this, self, &s](const boost::system::error_code& ec) {
                       if (ec) return stream_closed(s);
                       if (read_now(s, kReadsPerWakeup)) wait_readable(s);
                     });
}

bool WorkerProcess::read_now(Stream& s, int max_reads) {
  if (s.at_end || !s.pipe || !s.pipe->is_open()) return false;
  const int fd = s.pipe->native_handle();
  for (int i = 0; i < max_reads;) {
    const ssize_t n = ::read(fd, s.buf.data(), s.buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) {
      stream_closed(s);  // end of stream (or a read error: nothing more will come)
      return false;
    }
    const std::string_view data(s.buf.data(), static_cast<size_t>(n));
    last_activity_ = time_.now();  // any bytes: a bar redrawn with '\r' is not silence
    if (s.tap) s.tap(data);
    s.log.append(data);  // the per-rank file keeps the bytes as written; only the console splits
    s.splitter.feed(data,
                    [&](std::string_view line, bool continued) { on_line(s, line, continued); });
    ++i;
  }
  return true;
}

void WorkerProcess::on_line(Stream& s, std::string_view line, bool continued) {
  std::string text(line);
  OutputSink& sink = s.is_err ? stderr_sink() : stdout_sink();
  if (id_.json_lines)
    sink.push(worker_line_json(id_.rank, s.is_err ? WorkerStream::kStderr : WorkerStream::kStdout,
                               text, std::chrono::system_clock::now(), continued));
  else
    sink.push(continued ? continued_prefix_ : prefix_, text);
  if (s.is_err) traceback_.line(text);
  tail_.push_back(std::move(text));
  if (tail_.size() > kTailLines) tail_.pop_front();
}

void WorkerProcess::stream_closed(Stream& s) {
  if (s.at_end) return;
  s.at_end = true;
  s.splitter.finish([&](std::string_view line, bool continued) { on_line(s, line, continued); });
  if (s.tap) s.tap({});
  s.log.close();  // on the log writer's thread, once its bytes are written
  // Before attach() nothing was counted (a worker that never started: its pipes closed unread).
  if (open_streams_ > 0 && --open_streams_ == 0 && on_streams_closed_) on_streams_closed_();
}

void WorkerProcess::signal(int sig) const {
  if (pid_ <= 0) return;
  spawner_.signal_group(pid_, sig);
  // A stopped worker (SIGSTOP, a debugger, Ctrl-Z) acts on SIGTERM only once it runs again:
  // SIGCONT after every termination signal, so it is not held for the whole grace period.
  if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) spawner_.signal_group(pid_, SIGCONT);
}

void WorkerProcess::heartbeat_read(std::optional<std::int64_t> mtime_ns) {
  if (!mtime_ns) return;
  if (heartbeat_mtime_ && *heartbeat_mtime_ == *mtime_ns) return;  // else changed, or first touch
  last_activity_ = time_.now();
  heartbeat_changed_ = true;
  heartbeat_mtime_ = mtime_ns;
}

bool WorkerProcess::take_heartbeat_change() { return std::exchange(heartbeat_changed_, false); }

}  // namespace tv
