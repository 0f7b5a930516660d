#include "launcher/workers/stacks_collection.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include "common/init.h"
#include "common/whole_file.h"
#include "launcher/workers/stack_dump.h"

namespace tv {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr int kPolls = 60;                     // 3 s at most: faulthandler writes in the handler
constexpr std::size_t kStacksCap = 16u << 20;  // a stacks file read for its last dump

}  // namespace

StacksCollection::Target StacksCollection::aim(const Worker& w, bool hooked) const {
  Target t{w, "", "", 0, 0};
  auto text = fs_.read(w.stacks_path, kStacksCap);
  const auto header = text ? last_stacks_header(*text) : std::nullopt;
  if (!header)
    t.why = hooked ? "its hook has not registered (no stacks file header)"
                   : "not a Python worker with trainvisor's hook";
  else if (header->pid != w.pid)
    t.why = "its stacks file names pid " + std::to_string(header->pid);
  else if (const int err = spawner_.signal_process(w.pid, stacks_signal()); err != 0)
    t.why = std::string("cannot signal it (") + std::strerror(err) + ")";
  else
    t.main_thread = header->main_thread;
  t.before = t.last = text ? text->size() : 0;
  return t;
}

void StacksCollection::collect(const std::string& why, int generation,
                               const std::vector<Worker>& workers, bool hooked,
                               std::function<void()> then, bool hang) {
  Request req{why, generation, hang, 0, {}, std::move(then)};
  for (const auto& w : workers) req.targets.push_back(aim(w, hooked));
  spdlog::info("attempt {}: collecting the Python stacks of {} rank(s) ({})", generation,
               req.targets.size(), why);
  request_ = std::move(req);
  poll();
}

void StacksCollection::hang_then(const std::string& why, int generation,
                                 const std::vector<Worker>& workers, bool hooked,
                                 std::function<void()> then) {
  if (!request_) return collect(why, generation, workers, hooked, std::move(then), true);
  request_->hang = true;
  request_->then = [first = std::move(request_->then), then = std::move(then)] {
    if (first) first();
    then();
  };
}

// Done when every signalled file has grown and stopped growing, or after kPolls.
void StacksCollection::poll() {
  bool settled = true;
  for (auto& t : request_->targets) {
    if (t.main_thread.empty()) continue;
    const std::size_t now = fs_.regular_size(t.worker.stacks_path).value_or(0);
    if (now <= t.before || now != t.last) settled = false;
    t.last = now;
  }
  if ((settled && request_->polls > 0) || ++request_->polls > kPolls) return finish();
  timer_.expires_after(kPoll);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && request_) poll();
  });
}

// One rank's line of the report; its evidence and what its signal appended to its file.
std::string StacksCollection::rank_line(const Target& t, std::vector<RankEvidence>& evidence,
                                        std::string& dumps) const {
  const Worker& w = t.worker;
  std::string line = "  rank " + std::to_string(w.rank) + " (pid " + std::to_string(w.pid) + "): ";
  if (t.main_thread.empty()) return line + "no stack: " + t.why;
  const auto text = fs_.read(w.stacks_path, kStacksCap);
  // What this signal appended (a file that shrank meanwhile: nothing of it).
  const std::string fresh =
      text && text->size() > t.before ? text->substr(t.before) : std::string();
  const auto frame = innermost_frame(fresh, t.main_thread);
  const auto user = innermost_user_frame(fresh, t.main_thread);
  evidence.push_back({w.rank, node_rank_, user ? *user : frame.value_or(""), !frame});
  if (!fresh.empty())
    dumps += "== rank " + std::to_string(w.rank) + " (pid " + std::to_string(w.pid) + ") " +
             w.stacks_path + "\n" + fresh + "\n";
  return line + (!frame                     ? std::string("no stack written within 3 s")
                 : !user || *user == *frame ? "main thread in " + *frame
                                            : "main thread in " + *user + ", innermost " + *frame);
}

void StacksCollection::finish() {
  Request req = std::move(*request_);
  request_.reset();
  std::string lines, dumps;
  std::vector<RankEvidence> evidence;
  for (const auto& t : req.targets) lines += rank_line(t, evidence, dumps) + "\n";
  if (lines.empty()) lines = "  no running worker\n";  // the rendezvous, a restart's pause
  const std::string head = "stacks " + req.why + " (" +
                           (req.generation < 0 ? std::string("before generation 0")
                                               : "attempt " + std::to_string(req.generation)) +
                           "):\n";
  spdlog::log(req.hang ? spdlog::level::err : spdlog::level::info, "{}{}", head, lines);
  if (req.hang) {
    reports_[req.generation] = head + lines;  // for its report
    evidence_[req.generation] = std::move(evidence);
  }
  // <work dir>/stacks.txt: the whole of the last collection, for `trainvisor stacks`.
  const std::string body =
      "# trainvisor stacks #" + std::to_string(++seq_) + "\n" + head + lines + "\n" + dumps;
  auto w = write_whole_file(work_dir_ + "/stacks.txt", body);
  if (!w) spdlog::warn("stacks {}", w.error().message);
  if (req.then) req.then();
}

std::string StacksCollection::hang_report(int generation) const {
  const auto it = reports_.find(generation);
  return it == reports_.end() ? "" : it->second;
}

std::vector<RankEvidence> StacksCollection::hang_evidence(int generation) const {
  const auto it = evidence_.find(generation);
  return it == evidence_.end() ? std::vector<RankEvidence>{} : it->second;
}

}  // namespace tv
