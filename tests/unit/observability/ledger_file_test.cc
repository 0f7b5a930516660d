// The job's ledger on disk: containers of one job that read it before either wrote keep a record
// each (issue 58: four started together left three, two of them "container 2").
#include "launcher/observability/ledger_file.h"

#include <gtest/gtest.h>

#include "common/bounded_read.h"
#include "tests/unit/fakes/temp_dir.h"

namespace tv {
namespace {

using testing::TempDir;

std::vector<int> indexes_on_disk(const TempDir& d, const std::string& job) {
  auto text =
      read_regular_file_nofollow((d.path() / ledger_file_name(job)).string(), kLedgerFileCap);
  EXPECT_TRUE(text.ok());
  auto l = parse_ledger(text.ok() ? *text : "");
  std::vector<int> out;
  if (l)
    for (const auto& r : l->records) out.push_back(r.index);
  return out;
}

ContainerRecord record(int index, double started) {
  ContainerRecord r;
  r.index = index;
  r.started_unix = started;
  r.heartbeat_unix = started + 1;
  return r;
}

TEST(LedgerFile, ContainersThatReadTheLedgerBeforeEitherWroteKeepARecordEach) {
  TempDir d;
  LedgerFile a = LedgerFile::open(d.path().string(), "job");
  LedgerFile b = LedgerFile::open(d.path().string(), "job");
  LedgerFile c = LedgerFile::open(d.path().string(), "job");
  EXPECT_EQ(b.index(), 0);  // all three read the same (no) ledger
  a.write(record(a.index(), 100));
  b.write(record(b.index(), 101));  // 0 is taken: b takes the next free index
  EXPECT_EQ(b.index(), 1);
  c.write(record(c.index(), 102));
  EXPECT_EQ(c.index(), 2);
  EXPECT_EQ(indexes_on_disk(d, "job"), (std::vector<int>{0, 1, 2}));
  a.write(record(a.index(), 100));  // a's own record is its own: replaced, not moved
  b.write(record(b.index(), 101));
  EXPECT_EQ(a.index(), 0);
  EXPECT_EQ(b.index(), 1);
  EXPECT_EQ(indexes_on_disk(d, "job"), (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace tv
