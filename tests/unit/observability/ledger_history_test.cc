#include "launcher/observability/ledger_history.h"

#include <gtest/gtest.h>

#include "launcher/observability/ledger.h"

namespace tv {
namespace {

TEST(LedgerHistory, RecordKeepsGenerationsCheckpointsAndEvidenceThroughTheFile) {
  Ledger l;
  l.job_id = "job";
  ContainerRecord c;
  c.started_unix = 10;
  c.heartbeat_unix = 20;
  const GenerationRecord g{.number = 3,
                           .started_unix = 11,
                           .ended_unix = 15,
                           .outcome = "hung",
                           .summary = "rank 1: hang",
                           .evidence = {"/logs/attempt_3/rank_1/stacks.txt"}};
  c.generations = {g};
  c.checkpoints = CheckpointRecord{4, 2.5, 60.0};
  c.failure_file = "/opt/ml/output/failure";
  c.gpus = 8;
  put_record(l, c);
  auto back = parse_ledger(ledger_text(l));
  ASSERT_TRUE(back) << back.error().message;
  const ContainerRecord& r = back->records.at(0);
  ASSERT_EQ(r.generations.size(), 1u);
  EXPECT_EQ(r.generations[0].number, 3);
  EXPECT_EQ(r.generations[0].ended_unix, 15);
  EXPECT_EQ(r.generations[0].outcome, "hung");
  EXPECT_EQ(r.generations[0].summary, "rank 1: hang");
  EXPECT_EQ(r.generations[0].evidence, g.evidence);
  ASSERT_TRUE(r.checkpoints);
  EXPECT_EQ(r.checkpoints->count, 4);
  EXPECT_EQ(r.checkpoints->cost_seconds, 2.5);
  EXPECT_EQ(r.checkpoints->interval_seconds, 60.0);
  EXPECT_EQ(r.failure_file, "/opt/ml/output/failure");
  EXPECT_EQ(r.gpus, 8);
}

TEST(LedgerHistory, AnOlderRecordHasNone) {
  ContainerRecord c;
  Ledger l;
  l.job_id = "job";
  put_record(l, c);
  auto back = parse_ledger(ledger_text(l));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->records[0].generations.empty());
  EXPECT_FALSE(back->records[0].checkpoints);
  EXPECT_FALSE(back->records[0].gpus);
  EXPECT_EQ(ledger_text(l).find("generations"), std::string::npos);
}

TEST(LedgerHistory, MalformedEntriesAreDroppedOneByOne) {
  const auto j = nlohmann::json::parse(R"([
    {"generation": 0, "started_unix": 1, "outcome": "failed", "evidence": ["/a", 7, "/b"]},
    {"generation": "one", "started_unix": 2},
    {"generation": 2, "started_unix": 1e300},
    {"generation": 3, "started_unix": 4, "ended_unix": "soon", "summary": {}},
    7
  ])");
  const auto gens = read_generations(j);
  ASSERT_EQ(gens.size(), 2u);
  EXPECT_EQ(gens[0].evidence, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(gens[1].number, 3);
  EXPECT_FALSE(gens[1].ended_unix);
  EXPECT_EQ(gens[1].summary, "");
  EXPECT_EQ(gens[1].outcome, "running");
  EXPECT_FALSE(read_checkpoint_record(nlohmann::json::array()));
}

TEST(LedgerHistory, BoundedWhateverTheRestarts) {
  std::vector<GenerationRecord> gens;
  for (int i = 0; i < 100; ++i) {
    GenerationRecord g;
    g.number = i;
    g.summary = std::string(5000, 'x');
    g.evidence.assign(20, std::string(5000, '/'));
    add_generation(gens, g);
  }
  ASSERT_EQ(gens.size(), kLedgerGenerations);
  EXPECT_EQ(gens.front().number, 100 - static_cast<int>(kLedgerGenerations));
  EXPECT_EQ(gens.back().summary.size(), kLedgerTextCap);
  EXPECT_EQ(gens.back().evidence.size(), kEvidencePaths);
  EXPECT_EQ(gens.back().evidence[0].size(), kLedgerTextCap);
  EXPECT_EQ(find_generation(gens, 99), &gens.back());
  EXPECT_EQ(find_generation(gens, 3), nullptr);
}

TEST(LedgerHistory, CutNeverSplitsAUtf8Sequence) {
  std::string text(kLedgerTextCap - 1, 'a');
  text += "\xc3\xa9\xc3\xa9";  // an é across the cap
  const std::string cut = ledger_text_cut(text);
  EXPECT_EQ(cut.size(), kLedgerTextCap - 1);
}

}  // namespace
}  // namespace tv
