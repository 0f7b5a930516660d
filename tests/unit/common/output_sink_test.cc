#include "common/output_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <map>
#include <cstdio>
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
        for (int i = 0; i < 1000; ++i) sink.push("t" + std::to_string(t) + " line " + std::to_string(i));
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

}  // namespace
}  // namespace tv
