#include "launcher/node/gpu_health_watch.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>

#include "common/json_field.h"
#include "common/json_parse.h"

namespace tv {
namespace {

constexpr auto kRestartDelay = std::chrono::seconds(1);

GpuHealthEvent::Kind kind_of(const std::string& event) {
  using K = GpuHealthEvent::Kind;
  if (event == "watching") return K::kWatching;
  if (event == "unavailable") return K::kUnavailable;
  if (event == "reading") return K::kReading;
  if (event == "condition") return K::kCondition;
  if (event == "xid") return K::kXid;
  if (event == "note") return K::kNote;
  return K::kUnknown;
}

}  // namespace

GpuHealthEvent parse_gpu_health_line(std::string_view line) {
  GpuHealthEvent e;
  const auto j = parse_json(line);
  if (!j || !j->is_object()) return e;
  e.kind = kind_of(json_field(*j, "event", std::string()));
  e.fatal = json_field(*j, "fatal", false);
  e.active = json_field(*j, "active", true);
  e.condition = json_field(*j, "condition", std::string());
  e.xid = json_field(*j, "xid", 0u);
  e.message =
      json_field(*j, "message", json_field(*j, "meaning", json_field(*j, "reason", std::string())));
  if (const auto g = j->find("gpu"); g != j->end() && g->is_object()) {
    e.gpu = json_field(*g, "index", -1);
    e.uuid = json_field(*g, "uuid", std::string());
    e.pci_bus_id = json_field(*g, "pci_bus_id", std::string());
    e.gpu_name = json_field(*g, "name", std::string());
  }
  return e;
}

std::string describe_gpu_event(const GpuHealthEvent& e) {
  std::string out = "GPU " + std::to_string(e.gpu) + " (" + (e.uuid.empty() ? "?" : e.uuid);
  if (!e.pci_bus_id.empty()) out += ", PCI " + e.pci_bus_id;
  if (!e.gpu_name.empty()) out += ", " + e.gpu_name;
  out += "): ";
  if (e.kind == GpuHealthEvent::Kind::kXid) out += "Xid " + std::to_string(e.xid) + ": ";
  return out + e.message;
}

GpuHealthWatch::GpuHealthWatch(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                               SpawnRequest request, OnEvent on_event)
    : io_(io),
      spawner_(spawner),
      request_(std::move(request)),
      on_event_(std::move(on_event)),
      pipe_(io),
      restart_timer_(io, time) {}

GpuHealthWatch::~GpuHealthWatch() {
  *alive_ = false;
  stop();
}

void GpuHealthWatch::start() {
  if (stopping_) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    spdlog::warn("GPU health watch: cannot create a pipe: not watching the GPUs");
    return;
  }
  SpawnRequest req = request_;
  req.stdout_fd = fds[1];
  auto pid = spawner_.spawn(req, [this, alive = alive_](pid_t p, int status) {
    if (*alive) on_exit(p, status);
  });
  ::close(fds[1]);
  if (!pid) {
    ::close(fds[0]);
    spdlog::warn("GPU health watch not started: {}", pid.error().message);
    return;
  }
  pid_ = *pid;
  boost::system::error_code ec;
  pipe_.close(ec);
  splitter_ = LineSplitter();
  pipe_.assign(fds[0]);
  read();
}

void GpuHealthWatch::read() {
  pipe_.async_read_some(boost::asio::buffer(buf_),
                        [this, alive = alive_](const boost::system::error_code& ec, std::size_t n) {
                          if (!*alive) return;
                          if (n > 0)
                            splitter_.feed(std::string_view(buf_.data(), n),
                                           [this](std::string_view l) { on_line(l); });
                          if (ec) {
                            splitter_.finish([this](std::string_view l) { on_line(l); });
                            boost::system::error_code ignored;
                            pipe_.close(ignored);
                            return;
                          }
                          read();
                        });
}

void GpuHealthWatch::on_line(std::string_view line) {
  const GpuHealthEvent e = parse_gpu_health_line(line);
  if (e.kind == GpuHealthEvent::Kind::kUnavailable) unavailable_ = true;
  if (e.kind == GpuHealthEvent::Kind::kWatching) restarts_ = 0;
  if (!stopping_ && on_event_) on_event_(e);
}

void GpuHealthWatch::on_exit(pid_t pid, int status) {
  if (pid != pid_) return;
  pid_ = -1;
  if (stopping_ || unavailable_) return;
  if (restarts_ >= kMaxRestarts) {
    spdlog::warn("GPU health watch ended (wait status {}) {} times: no longer watching the GPUs",
                 status, restarts_ + 1);
    return;
  }
  ++restarts_;
  spdlog::warn("GPU health watch ended (wait status {}): starting it again in {} s", status,
               kRestartDelay.count());
  restart_timer_.expires_after(kRestartDelay);
  restart_timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (!ec && *alive) start();
  });
}

void GpuHealthWatch::stop() {
  stopping_ = true;
  restart_timer_.cancel();
  if (pid_ > 0) spawner_.signal_group(pid_, SIGKILL);
  boost::system::error_code ec;
  pipe_.close(ec);
}

}  // namespace tv
