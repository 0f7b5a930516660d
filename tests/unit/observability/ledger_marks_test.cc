// What the job's ledger keeps besides the time (launcher/observability/ledger_marks.h): the
// poisoned checkpoints (--resume-fallback) and each container's save before its stop
// (--save-signal), through the ledger's text and back.
#include "launcher/observability/ledger_marks.h"

#include <gtest/gtest.h>

#include "launcher/observability/ledger.h"

namespace tv {
namespace {

PoisonMark mark(const std::string& path, std::int64_t mtime = 5) {
  PoisonMark m;
  m.path = path;
  m.mtime_ns = mtime;
  m.step = 30;
  m.reason = "failed the same way 2 times in a row";
  m.marked_unix = 1700000000;
  m.container = 1;
  return m;
}

TEST(LedgerMarks, MarksAndTheStopSaveRoundTripThroughTheLedgersText) {
  Ledger l;
  l.job_id = "job-1";
  ContainerRecord c;
  c.stop_save = StopSaveRecord{true, 1.25, 40, 2, "/c/agent_40.pt"};
  put_record(l, c);
  l.poisoned = {mark("/c/agent_30.pt")};
  auto back = parse_ledger(ledger_text(l));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->poisoned.size(), 1u);
  EXPECT_EQ(back->poisoned[0].path, "/c/agent_30.pt");
  EXPECT_EQ(back->poisoned[0].mtime_ns, 5);
  EXPECT_EQ(back->poisoned[0].step, 30);
  EXPECT_EQ(back->poisoned[0].container, 1);
  ASSERT_TRUE(back->records[0].stop_save);
  EXPECT_TRUE(back->records[0].stop_save->completed);
  EXPECT_EQ(back->records[0].stop_save->saved_step, 40);
  EXPECT_EQ(back->records[0].stop_save->lost_steps, 2);
  EXPECT_EQ(back->records[0].stop_save->path, "/c/agent_40.pt");
}

TEST(LedgerMarks, ALedgerWithoutThemHasNone) {
  Ledger l;
  l.job_id = "job-1";
  put_record(l, ContainerRecord{});
  const std::string text = ledger_text(l);
  EXPECT_EQ(text.find("poisoned"), std::string::npos);
  EXPECT_EQ(text.find("stop_save"), std::string::npos);
  auto back = parse_ledger(text);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->poisoned.empty());
  EXPECT_FALSE(back->records[0].stop_save);
}

TEST(LedgerMarks, MalformedMarksAreDroppedOneByOne) {
  const auto marks = read_marks(nlohmann::json::parse(
      R"([{"path": "/c/a.pt", "mtime_ns": 7}, {"path": 3}, "x", {}, {"path": "/c/a.pt", "mtime_ns": 7},
          {"path": "/c/b.pt", "step": "many"}])"));
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].path, "/c/a.pt");
  EXPECT_EQ(marks[1].path, "/c/b.pt");
  EXPECT_FALSE(marks[1].step);
  EXPECT_TRUE(read_marks(nlohmann::json::object()).empty());
}

TEST(LedgerMarks, OneMarkPerSaveAndTheNewestKept) {
  std::vector<PoisonMark> marks;
  EXPECT_TRUE(add_mark(marks, mark("/c/a.pt", 1)));
  EXPECT_FALSE(add_mark(marks, mark("/c/a.pt", 1)));
  EXPECT_TRUE(add_mark(marks, mark("/c/a.pt", 2)));  // saved again there: another save
  for (std::size_t i = 0; i < kLedgerMarks; ++i) add_mark(marks, mark("/c/" + std::to_string(i)));
  EXPECT_EQ(marks.size(), kLedgerMarks);
  EXPECT_EQ(marks.back().path, "/c/" + std::to_string(kLedgerMarks - 1));
}

TEST(LedgerMarks, TheSummarySaysWhetherTheSaveCompletedInTime) {
  EXPECT_EQ(stop_save_line({true, 1.2, 40, 2, "/c/agent_40.pt"}),
            "save before the stop: completed in 1.20 s (step 40, 2 steps lost)");
  EXPECT_EQ(stop_save_line({false, 6.4, 30, std::nullopt, ""}),
            "save before the stop: NOT completed in time (no complete checkpoint newer than the "
            "stop within 6.40 s) (the newest before it: step 30)");
  EXPECT_EQ(stop_save_line({false, 6.4, std::nullopt, std::nullopt, ""}),
            "save before the stop: NOT completed in time (no complete checkpoint newer than the "
            "stop within 6.40 s)");
}

}  // namespace
}  // namespace tv
