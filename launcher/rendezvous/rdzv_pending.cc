#include "launcher/rendezvous/rdzv_pending.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace tv::rdzv {
namespace {
constexpr size_t kMaxSourcesLogged = 1024;
constexpr auto kHandshake = std::chrono::milliseconds(5000);
constexpr size_t kStrangersTotal = 256;
constexpr size_t kStrangersPerSource = 64;
}  // namespace

PendingLimits pending_limits(int nnodes) {
  const size_t nodes = static_cast<size_t>(std::max(nnodes, 1));
  return {nodes + kStrangersTotal, nodes + kStrangersPerSource};
}

std::optional<size_t> eviction_victim(const std::vector<std::string>& sources,
                                      const std::string& source, size_t max_total,
                                      size_t per_source) {
  std::map<std::string, size_t> count;
  for (const auto& s : sources) ++count[s];
  std::string from;
  if (count[source] >= per_source)
    from = source;
  else if (sources.size() >= max_total)
    from = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) {
             return a.second < b.second;
           })->first;
  else
    return std::nullopt;
  return static_cast<size_t>(std::find(sources.begin(), sources.end(), from) - sources.begin());
}

std::chrono::milliseconds handshake_deadline(std::chrono::milliseconds peer_timeout) {
  return std::clamp(peer_timeout, std::chrono::milliseconds(1000), kHandshake);
}

PendingConnections::PendingConnections(boost::asio::io_context& io,
                                       std::chrono::milliseconds deadline, PendingLimits limits,
                                       LoopTime& time)
    : io_(io), time_(time), deadline_(deadline), limits_(limits) {}

PendingConnections::~PendingConnections() { close_all(); }

std::list<PendingConnections::Entry>::iterator PendingConnections::find(const Conn& conn) {
  return std::find_if(entries_.begin(), entries_.end(), [&](auto& e) { return e.conn == conn; });
}

void PendingConnections::add(const Conn& conn, const std::string& source) {
  std::vector<std::string> sources;
  for (const auto& e : entries_) sources.push_back(e.source);
  if (auto victim = eviction_victim(sources, source, limits_.total, limits_.per_source)) {
    auto it = std::next(entries_.begin(), static_cast<long>(*victim));
    drop(it->conn, "evicted to make room (" + std::to_string(entries_.size()) +
                       " unauthenticated connections open, " + std::to_string(limits_.per_source) +
                       " per address at most)");
  }
  auto timer = std::make_shared<LoopTimer>(io_, time_);
  timer->expires_after(deadline_);
  std::weak_ptr<Connection> weak = conn;
  timer->async_wait([this, weak, alive = std::weak_ptr<bool>(alive_),
                     ms = deadline_.count()](boost::system::error_code ec) {
    auto c = weak.lock();
    if (ec || !c || alive.expired()) return;  // it joined, closed, or we are gone
    drop(c, "no valid join in time (" + std::to_string(ms) + " ms)");
  });
  entries_.push_back(Entry{conn, source, std::move(timer)});
}

void PendingConnections::release(const Conn& conn) {
  auto it = find(conn);
  if (it == entries_.end()) return;
  it->timer->cancel();
  entries_.erase(it);
}

void PendingConnections::drop(Conn conn, const std::string& why) {
  auto it = find(conn);
  if (it == entries_.end()) return;
  const std::string source = it->source;
  it->timer->cancel();
  entries_.erase(it);
  log_closed(source, conn->peer(), why);
  conn->close();
}

void PendingConnections::close_all() {
  for (auto& e : entries_) {
    e.timer->cancel();
    e.conn->close();
  }
  entries_.clear();
}

void PendingConnections::log_closed(const std::string& source, const std::string& peer,
                                    const std::string& why) {
  if (closed_.size() >= kMaxSourcesLogged && !closed_.count(source)) return;
  const uint64_t n = ++closed_[source];
  if (n <= kLoggedPerSource)
    spdlog::warn("rdzv: closed connection from {} before it joined: {}", peer, why);
  else if (n == kLoggedPerSource + 1)
    spdlog::warn("rdzv: more connections from {} closed before joining; logging every 1000th",
                 source);
  else if (n % 1000 == 0)
    spdlog::warn("rdzv: {} connections from {} closed before joining (latest: {})", n, source, why);
}

}  // namespace tv::rdzv
