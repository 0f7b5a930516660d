// LedgerWriter (launcher/observability/ledger_writer.h): the job's ledger written on a thread of
// its own, in order, the newest record last; a mark made on the loop reaches the file and is
// seen at once; finish() waits for the last record. Real files in a temporary directory.
#include "launcher/observability/ledger_writer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "launcher/observability/ledger_marks.h"
#include "tests/unit/fakes/temp_dir.h"

namespace tv {
namespace {

using namespace std::chrono_literals;

ContainerRecord record(double heartbeat, bool ended, int index = 0) {
  ContainerRecord c;
  c.index = index;
  c.started_unix = 1700000000;
  c.heartbeat_unix = heartbeat;
  c.ended = ended;
  if (ended) c.exit_code = 0;
  return c;
}

Ledger read_back(const std::string& dir, const std::string& job) {
  std::ifstream in(dir + "/" + ledger_file_name(job));
  std::stringstream s;
  s << in.rdbuf();
  auto l = parse_ledger(s.str());
  EXPECT_TRUE(l) << s.str();
  return l ? *l : Ledger{};
}

TEST(LedgerWriter, WritesInOrderOffTheCallersThreadAndFinishesWithTheLastRecord) {
  testing::TempDir dir("tv-ledger");
  const std::string d = dir.path().string();
  {
    LedgerWriter w(LedgerFile::open(d, "job-1"));
    w.write(record(1700000010, false));
    PoisonMark m;
    m.path = "/c/agent_30.pt";
    m.mtime_ns = 5;
    m.reason = "failed the same way 2 times in a row";
    w.mark(m);
    ASSERT_EQ(w.marks().size(), 1u);  // seen at once, before any write of it
    w.write(record(1700000020, false));
    ASSERT_TRUE(w.finish(record(1700000030, true), 10s));
  }
  const Ledger l = read_back(d, "job-1");
  ASSERT_EQ(l.records.size(), 1u);
  EXPECT_TRUE(l.records[0].ended);
  EXPECT_EQ(l.records[0].heartbeat_unix, 1700000030);
  ASSERT_EQ(l.poisoned.size(), 1u);
  EXPECT_EQ(l.poisoned[0].path, "/c/agent_30.pt");

  // The job's next container: the first one is its prior account, the mark still there.
  LedgerWriter next(LedgerFile::open(d, "job-1"));
  EXPECT_EQ(next.index(), 1);
  EXPECT_EQ(next.prior().records.size(), 1u);
  EXPECT_EQ(next.marks().size(), 1u);
  EXPECT_TRUE(next.finish(record(1700000040, true, next.index()), 10s));
  EXPECT_EQ(read_back(d, "job-1").records.size(), 2u);
}

}  // namespace
}  // namespace tv
