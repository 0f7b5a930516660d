// Observability's ledger interval on simulated time (tests/unit/fakes/sim_loop_time.h): the job's
// ledger is rewritten every --ledger-interval of the loop's time, and the accountant reads the
// same time through LoopTimeClock, so each heartbeat records exactly the time that passed.
#include "launcher/run/observability.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class LedgerInterval : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tv-ledger-interval-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The one record in the ledger file: heartbeat_unix - started_unix; nullopt while there is no
  // file.
  std::optional<double> recorded_wall() const {
    for (const auto& e : fs::directory_iterator(dir_)) {
      std::ifstream in(e.path());
      const auto j = nlohmann::json::parse(in);
      const auto& r = j.at("records").at(0);
      return r.at("heartbeat_unix").get<double>() - r.at("started_unix").get<double>();
    }
    return std::nullopt;
  }

  fs::path dir_;
};

TEST_F(LedgerInterval, RewrittenEveryIntervalOfTheLoopsTime) {
  boost::asio::io_context io;
  testing::SimLoopTime time;
  const LoopTimeClock clock(time);
  ObservabilityConfig cfg;
  cfg.ledger_dir = dir_.string();
  cfg.job_id = "unit-test-job";
  cfg.ledger_interval = 30;
  auto o = Observability::make(io, cfg, clock, clock.now(), time);
  ASSERT_TRUE(o.ok()) << o.error().message;
  // The ledger is written on a thread of its own (LedgerWriter): each look waits for its writes.
  const auto settled = [&o] { return (*o)->ledger_settled(10s); };
  time.advance(30s - 1ns);
  ASSERT_TRUE(settled());
  EXPECT_FALSE(recorded_wall());  // nothing written before the first interval
  time.advance(1ns);
  ASSERT_TRUE(settled());
  ASSERT_TRUE(recorded_wall());
  EXPECT_NEAR(*recorded_wall(), 30.0, 1e-6);
  time.advance(30s);
  ASSERT_TRUE(settled());
  EXPECT_NEAR(*recorded_wall(), 60.0, 1e-6);
  (*o)->report();  // the last write, and the timer is off
  EXPECT_EQ(time.pending(), 0u);
}

}  // namespace
}  // namespace tv
