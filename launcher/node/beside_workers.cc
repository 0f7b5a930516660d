#include "launcher/node/beside_workers.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace tv {
namespace {
constexpr auto kPoll = std::chrono::microseconds(500);
constexpr int kMaxPolls = 400000;  // 200 s at most
}  // namespace

BesideWorkers::BesideWorkers(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                             std::optional<SpawnRequest> gpu_watch, GpuHealthWatch::OnEvent on_gpu,
                             std::vector<SideQueryRequest> queries)
    : io_(io), time_(time), spawner_(spawner), requests_(std::move(queries)) {
  if (!gpu_watch) return;
  gpu_watch->background = true;
  watch_ =
      std::make_unique<GpuHealthWatch>(io, time, spawner, std::move(*gpu_watch), std::move(on_gpu));
}

void BesideWorkers::start() {
  if (started_) return;
  started_ = true;
  if (watch_) watch_->start();
  for (auto q : requests_) {
    q.request.background = true;
    queries_.push_back(std::make_unique<SideQuery>(io_, time_, spawner_, std::move(q)));
    queries_.back()->start();
  }
}

bool BesideWorkers::answers_pending() const {
  return std::ranges::any_of(queries_, [](const auto& q) { return !q->over(); });
}

void BesideWorkers::stop(bool await_answers) {
  if (await_answers && answers_pending())
    poll_until(io_, time_, kPoll, kMaxPolls, [this] { return !answers_pending(); });
  queries_.clear();  // what is left is killed
  if (watch_) watch_->stop();
}

}  // namespace tv
