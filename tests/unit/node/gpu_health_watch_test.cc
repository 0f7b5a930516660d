#include "launcher/node/gpu_health_watch.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

TEST(GpuHealthLine, AFatalXidNamesTheGpu) {
  const auto e = parse_gpu_health_line(
      R"({"event":"xid","gpu":{"index":1,"uuid":"GPU-fake-0001","pci_bus_id":"00000000:02:00.0",)"
      R"("name":"Fake H200"},"xid":79,"fatal":true,"meaning":"GPU has fallen off the bus"})");
  EXPECT_EQ(e.kind, GpuHealthEvent::Kind::kXid);
  EXPECT_TRUE(e.fatal);
  EXPECT_EQ(e.xid, 79u);
  EXPECT_EQ(describe_gpu_event(e),
            "GPU 1 (GPU-fake-0001, PCI 00000000:02:00.0, Fake H200): Xid 79: GPU has fallen off "
            "the bus");
}

TEST(GpuHealthLine, AConditionThatCleared) {
  const auto e = parse_gpu_health_line(
      R"({"event":"condition","gpu":{"index":0,"uuid":"GPU-a"},"condition":"hw_thermal",)"
      R"("active":false,"fatal":false,"message":"cleared"})");
  EXPECT_EQ(e.kind, GpuHealthEvent::Kind::kCondition);
  EXPECT_FALSE(e.active);
  EXPECT_EQ(e.condition, "hw_thermal");
}

TEST(GpuHealthLine, AnythingElseIsUnknownNeverAThrow) {
  for (const char* line : {"", "not json", "[1]", R"({"event":7})", R"({"event":"xid","gpu":[]})"})
    EXPECT_NO_THROW(parse_gpu_health_line(line)) << line;
  EXPECT_EQ(parse_gpu_health_line("garbage").kind, GpuHealthEvent::Kind::kUnknown);
  EXPECT_EQ(parse_gpu_health_line(R"({"event":"unavailable","reason":"no NVML"})").message,
            "no NVML");
}

// The watch's child through a FakeSpawner and its restart delay on a SimLoopTime: no process, no
// sleep.
class GpuHealthWatchTest : public ::testing::Test {
 protected:
  GpuHealthWatchTest() {
    request_.executable = "/usr/bin/trainvisor";
    request_.argv = {"trainvisor", "__query", "gpu-watch", "5"};
  }
  boost::asio::io_context io_;
  testing::SimLoopTime time_;
  testing::FakeSpawner spawner_{io_};
  SpawnRequest request_;
  std::vector<GpuHealthEvent> events_;
};

TEST_F(GpuHealthWatchTest, ItsLinesAreEventsAndAChildThatDiesIsStartedAgainAfterOneSecond) {
  using namespace std::chrono_literals;
  GpuHealthWatch watch(io_, time_, spawner_, request_,
                       [this](const GpuHealthEvent& e) { events_.push_back(e); });
  watch.start();
  ASSERT_EQ(spawner_.spawned().size(), 1u);
  const pid_t first = spawner_.spawned()[0];
  EXPECT_EQ(spawner_.child(first).req.argv, request_.argv);
  EXPECT_EQ(watch.pid(), first);
  spawner_.write(first, std::string(R"({"event":"watching","gpus":8})") + "\n");
  time_.run_ready();
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].kind, GpuHealthEvent::Kind::kWatching);
  // Dies on its own, three times in a row: each time started again exactly 1 s later.
  for (int restart = 1; restart <= GpuHealthWatch::kMaxRestarts; ++restart) {
    spawner_.exit_code(spawner_.live().at(0), 1);
    time_.run_ready();
    EXPECT_TRUE(watch.gone());
    time_.advance(999ms);
    EXPECT_EQ(spawner_.spawned().size(), static_cast<size_t>(restart));
    time_.advance(1ms);
    EXPECT_EQ(spawner_.spawned().size(), static_cast<size_t>(restart + 1));
    EXPECT_FALSE(watch.gone());
  }
  // A fourth death in a row without `watching` between: no longer watched.
  spawner_.exit_code(spawner_.live().at(0), 1);
  time_.run_ready();
  time_.advance(10s);
  EXPECT_EQ(spawner_.spawned().size(), 1u + GpuHealthWatch::kMaxRestarts);
  EXPECT_TRUE(watch.gone());
}

TEST_F(GpuHealthWatchTest, StopKillsTheChildsGroupAndNothingStartsAgain) {
  using namespace std::chrono_literals;
  GpuHealthWatch watch(io_, time_, spawner_, request_,
                       [this](const GpuHealthEvent& e) { events_.push_back(e); });
  watch.start();
  const pid_t pid = spawner_.spawned().at(0);
  watch.stop();
  EXPECT_EQ(spawner_.child(pid).signals, (std::vector<int>{SIGKILL}));
  time_.run_ready();  // the SIGKILL's exit reaches it
  EXPECT_TRUE(watch.gone());
  time_.advance(10s);
  EXPECT_EQ(spawner_.spawned().size(), 1u);
}

}  // namespace
}  // namespace tv
