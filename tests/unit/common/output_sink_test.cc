#include "common/output_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace tv {
namespace {

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// The drop notices in `out` added up: the writer reports what was dropped since its last batch,
// so drops that come while a batch is being written land in a later notice.
std::size_t reported_drops(const std::string& out) {
  const std::string tail = " worker output lines dropped";
  std::size_t sum = 0;
  for (std::size_t at = out.find(tail); at != std::string::npos; at = out.find(tail, at + 1)) {
    std::size_t start = out.rfind("[trainvisor] ", at);
    if (start == std::string::npos) continue;
    sum += std::stoul(out.substr(start + 13, at - start - 13));
  }
  return sum;
}

TEST(OutputSink, WritesWholeLinesInOrderFromManyThreads) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  std::string got;
  std::thread reader([&] { got = drain(p[0]); });
  {
    OutputSink sink(p[1], 1 << 24);
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t)
      writers.emplace_back([&sink, t] {
        for (int i = 0; i < 1000; ++i)
          sink.push("t" + std::to_string(t) + " line " + std::to_string(i));
      });
    for (auto& w : writers) w.join();
    EXPECT_TRUE(sink.flush(std::chrono::seconds(10)));
    EXPECT_EQ(sink.dropped_lines(), 0u);
  }
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  std::map<int, int> next;
  size_t lines = 0;
  size_t pos = 0;
  while (pos < got.size()) {
    auto nl = got.find('\n', pos);
    ASSERT_NE(nl, std::string::npos);
    std::string line = got.substr(pos, nl - pos);
    int t = 0, i = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "t%d line %d", &t, &i), 2) << line;
    EXPECT_EQ(i, next[t]++) << "lines of one producer stay in order";
    ++lines;
    pos = nl + 1;
  }
  EXPECT_EQ(lines, 4000u);
}

TEST(OutputSink, NeverBlocksWhenTheReaderStallsAndCountsDrops) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);  // nobody reads until the end: the pipe fills up (64 KiB)
  OutputSink sink(p[1], 1 << 16);
  const std::string payload(1000, 'x');
  for (int i = 0; i < 2000; ++i) sink.push(payload);  // 2 MB into a stalled reader: returns
  EXPECT_GT(sink.dropped_lines(), 0u);
  std::thread reader([&] { drain(p[0]); });
  EXPECT_TRUE(sink.flush(std::chrono::seconds(10)));
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
}

TEST(OutputSink, AStalledReaderNeverHoldsMoreThanTheBudget) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const std::size_t budget = 1u << 20;
  OutputSink sink(p[1], budget);
  const std::string payload(1000, 'y');
  const int pushed = 10000;  // 10 MB into a reader that reads nothing yet
  for (int i = 0; i < pushed; ++i) sink.push(payload);
  const std::size_t accepted = pushed - sink.dropped_lines();
  EXPECT_GT(accepted, 0u);
  // What the pipe took left the sink: its buffer (64 KiB) is the kernel's, not ours.
  const auto pipe_size = static_cast<std::size_t>(::fcntl(p[1], F_GETPIPE_SZ));
  EXPECT_LE(accepted * (payload.size() + 1), budget + pipe_size) << "queued and in flight together";
  std::string got;
  std::thread reader([&] { got = drain(p[0]); });
  EXPECT_TRUE(sink.flush(std::chrono::seconds(10)));
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_EQ(reported_drops(got), sink.dropped_lines()) << "every drop is reported, once";
}

TEST(OutputSink, ALineLongerThanABlockIsWrittenWholeWithItsPrefix) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  std::string got;
  std::thread reader([&] { got = drain(p[0]); });
  {
    OutputSink sink(p[1], 64u << 20);  // blocks of 256 KiB
    sink.push("[rank0]: ", std::string(600u << 10, 'z'));
    sink.push("after");
    EXPECT_TRUE(sink.flush(std::chrono::seconds(10)));
    EXPECT_EQ(sink.dropped_lines(), 0u);
  }
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_EQ(got, "[rank0]: " + std::string(600u << 10, 'z') + "\nafter\n");
}

TEST(OutputBudget, EachSlotKeepsItsFloorWhateverTheOtherTakes) {
  OutputBudget b(64, 8);
  EXPECT_TRUE(b.take(0, 50));
  EXPECT_TRUE(b.take(0, 6));
  EXPECT_FALSE(b.take(0, 1)) << "56 of 64: the other's 8 stay free";
  EXPECT_TRUE(b.take(1, 8));
  EXPECT_FALSE(b.take(1, 1));
  b.give(0, 56);
  EXPECT_TRUE(b.take(1, 48));
  EXPECT_FALSE(b.take(1, 9)) << "slot 1 at 56: slot 0's floor";
  EXPECT_TRUE(b.take(0, 8));
  EXPECT_FALSE(b.take(0, 1));
}

}  // namespace
}  // namespace tv
