// The per-rank log files' writer (common/log_writer.h, common/log_file.h): the bytes kept as
// written, a disk that takes nothing never blocks the producer, memory bounded by the budget and
// the rest dropped and counted, a FIFO in a log file's place refused.
#include "common/log_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "common/log_file.h"

namespace tv {
namespace {

using std::chrono::seconds;

std::string read_all(int fd) {
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

struct TempDir {
  std::filesystem::path path;
  int fd = -1;
  TempDir() {
    char tmpl[] = "/tmp/tv_log_writer_XXXXXX";
    path = ::mkdtemp(tmpl);
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~TempDir() {
    ::close(fd);
    std::filesystem::remove_all(path);
  }
};

TEST(LogFile, KeepsTheBytesAsWritten) {
  TempDir d;
  LogWriter writer(1 << 20);
  {
    LogFile log(writer);
    log.open(d.fd, "stdout.log", "d/stdout.log");
    log.append("abc");
    log.append(std::string(100000, 'x'));  // longer than a chunk, no newline
    log.append("def\nno newline at the end");
  }
  ASSERT_TRUE(writer.flush(seconds(30)));
  const int fd = ::open((d.path / "stdout.log").c_str(), O_RDONLY);
  EXPECT_EQ(read_all(fd), "abc" + std::string(100000, 'x') + "def\nno newline at the end");
  ::close(fd);
}

TEST(LogFile, ADiskThatTakesNothingDropsBeyondTheBudgetAndCountsIt) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  // The "disk": a pipe filled up front, so the writer's first write blocks until the test reads.
  ::fcntl(p[1], F_SETFL, O_NONBLOCK);
  std::string filler;
  for (ssize_t n; (n = ::write(p[1], std::string(4096, 'f').data(), 4096)) > 0;)
    filler.append(static_cast<size_t>(n), 'f');
  ::fcntl(p[1], F_SETFL, 0);
  constexpr std::size_t kBudget = 1 << 20;
  LogWriter writer(kBudget);
  std::string data;
  for (int i = 0; data.size() < 4 * kBudget; ++i) data += "line " + std::to_string(i) + "\n";
  LogFile log(writer);
  log.adopt(p[1], "the pipe");
  for (std::size_t off = 0; off < data.size(); off += 16384) log.append(data.substr(off, 16384));
  // Back here at all: the producer never waited for the disk. What it holds is the budget (less
  // the rest of a chunk the writer took while it was being filled).
  const std::size_t kept = data.size() - log.dropped_bytes();
  EXPECT_LE(kept, kBudget);
  EXPECT_GT(kept, kBudget - 65536);
  const std::string lost = data.substr(kept);
  EXPECT_EQ(log.dropped_lines(),
            static_cast<std::size_t>(std::count(lost.begin(), lost.end(), '\n')));
  EXPECT_FALSE(writer.flush(std::chrono::milliseconds(50)));  // still waiting for the disk
  log.close();
  std::string got;
  std::thread reader([&] { got = read_all(p[0]); });  // the disk takes the bytes now
  EXPECT_TRUE(writer.flush(seconds(60)));
  reader.join();
  ::close(p[0]);
  EXPECT_EQ(got, filler + data.substr(0, kept));  // the first bytes, as written
  EXPECT_EQ(writer.pending_bytes(), 0u);
}

TEST(LogFile, AFifoInItsPlaceIsRefusedWithoutBlocking) {
  TempDir d;
  const auto fifo = d.path / "stdout.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so an open for writing works
  LogWriter writer(1 << 20);
  LogFile log(writer);
  log.open(d.fd, "stdout.log", "d/stdout.log");
  log.append("bytes nobody reads\n");
  ASSERT_TRUE(writer.flush(seconds(30)));
  EXPECT_TRUE(log.failed());
  EXPECT_EQ(read_all(reader), "");
  ::close(reader);
}

}  // namespace
}  // namespace tv
