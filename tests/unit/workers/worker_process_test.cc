// WorkerProcess (launcher/workers/worker_process.h) on real pipes and no process: what its
// worker wrote is read in order, the last traceback on stderr is kept apart from the tail, and
// drain() takes everything already written without the event loop.
#include "launcher/workers/worker_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

using testing::FakeSpawner;
using testing::SimLoopTime;

void put(int fd, std::string_view text) {
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

class WorkerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    w_ = std::make_shared<WorkerProcess>(io_, time_, spawner_, WorkerProcess::Identity{}, -1);
    ASSERT_TRUE(w_->open_pipes(&out_, &err_));
    w_->attach(4242, [this] { ++closed_; });
  }
  void TearDown() override {
    w_->close_pipes();
    if (out_ >= 0) ::close(out_);
    if (err_ >= 0) ::close(err_);
    time_.run_ready();  // the aborted waits release the WorkerProcess
    w_.reset();
  }
  // The worker exits: its ends of the pipes close.
  void exit_worker() {
    ::close(out_);
    ::close(err_);
    out_ = err_ = -1;
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  std::shared_ptr<WorkerProcess> w_;
  int out_ = -1, err_ = -1;
  int closed_ = 0;
};

constexpr std::string_view kTraceback =
    "Traceback (most recent call last):\n"
    "  File \"/w/train.py\", line 12, in <module>\n"
    "    dist.all_reduce(t)\n"
    "RuntimeError: NCCL error: unhandled system error\n";

TEST_F(WorkerProcessTest, DrainTakesBothPipesWithoutTheLoop) {
  put(err_, kTraceback);
  for (int i = 0; i < 200; ++i) put(out_, "log line " + std::to_string(i) + "\n");
  exit_worker();
  w_->drain();  // the loop has not run once
  const auto tail = w_->tail();
  EXPECT_NE(std::ranges::find(tail, "log line 199"), tail.end());  // all of stdout was read
  ASSERT_EQ(w_->last_traceback().size(), 4u);
  EXPECT_EQ(w_->last_traceback().back(), "RuntimeError: NCCL error: unhandled system error");
  // Both ends were read to their end: the streams are closed, once.
  EXPECT_FALSE(w_->streams_open());
  EXPECT_EQ(closed_, 1);
  time_.run_ready();
  EXPECT_EQ(closed_, 1);
}

TEST_F(WorkerProcessTest, TheLoopReadsAsItArrivesAndTheTracebackOutlivesLaterStdout) {
  put(out_, "step 1\n");
  time_.run_ready();
  EXPECT_EQ(w_->tail().back(), "step 1");
  EXPECT_TRUE(w_->last_traceback().empty());
  put(err_, kTraceback);
  time_.run_ready();  // stderr read first ...
  put(out_, "log line 199\n");
  time_.run_ready();  // ... stdout after it
  EXPECT_EQ(w_->tail().back(), "log line 199");
  EXPECT_EQ(w_->last_traceback().back(), "RuntimeError: NCCL error: unhandled system error");
  exit_worker();
  time_.run_ready();
  EXPECT_FALSE(w_->streams_open());
  EXPECT_EQ(closed_, 1);
}

TEST_F(WorkerProcessTest, ATracebackOnStdoutIsOnlyOutput) {
  put(out_, kTraceback);
  exit_worker();
  w_->drain();
  EXPECT_TRUE(w_->last_traceback().empty());
  EXPECT_EQ(w_->tail().back(), "RuntimeError: NCCL error: unhandled system error");
}

TEST_F(WorkerProcessTest, DrainOfALivePipeTakesWhatIsThereAndWaitsForNothing) {
  put(out_, "partial");  // no newline yet: not a line until more comes or the stream ends
  put(err_, "warn\n");
  w_->drain();
  EXPECT_EQ(w_->tail().back(), "warn");
  EXPECT_TRUE(w_->streams_open());
  put(out_, " line\n");
  time_.run_ready();
  EXPECT_EQ(w_->tail().back(), "partial line");
}

}  // namespace
}  // namespace tv
