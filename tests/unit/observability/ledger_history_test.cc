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

// A log's exception line is kept beside its path: in the file by the path's index (no path twice),
// back as the path; an index that names no path is dropped; bounded like the rest.
TEST(LedgerHistory, ExceptionLinesKeepTheirLogsPathThroughTheFile) {
  Ledger l;
  l.job_id = "job";
  ContainerRecord c;
  GenerationRecord g;
  g.outcome = "failed";
  add_evidence(g, "/logs/attempt_0/rank_1/error.json", "");
  add_evidence(g, "/logs/attempt_0/rank_1/stderr.log", "ValueError: boom");
  add_evidence(g, "/logs/attempt_0/rank_1/stderr.log", "ValueError: twice");  // already there
  ASSERT_EQ(g.evidence.size(), 2u);
  c.generations = {g};
  put_record(l, c);
  const std::string text = ledger_text(l);
  EXPECT_EQ(nlohmann::json::parse(text)["records"][0]["generations"][0]["exceptions"],
            nlohmann::json::parse(R"([{"evidence": 1, "line": "ValueError: boom"}])"));
  auto back = parse_ledger(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(
      back->records.at(0).generations.at(0).exceptions,
      (std::vector<ExceptionLine>{{"/logs/attempt_0/rank_1/stderr.log", "ValueError: boom"}}));
  const auto dangling = read_generations(nlohmann::json::parse(R"([
    {"generation": 0, "started_unix": 1, "evidence": ["/a"],
     "exceptions": [{"evidence": 1, "line": "x"}, {"evidence": 0, "line": ""}, {"evidence": -1},
                    "junk", {"evidence": 0, "line": "KeyError: 'k'"}]}])"));
  EXPECT_EQ(dangling.at(0).exceptions, (std::vector<ExceptionLine>{{"/a", "KeyError: 'k'"}}));
}

TEST(LedgerHistory, ExceptionLinesAreBounded) {
  GenerationRecord g;
  for (int i = 0; i < 10; ++i)
    add_evidence(g, "/logs/rank_" + std::to_string(i) + "/stderr.log", std::string(1000, 'E'));
  EXPECT_EQ(g.evidence.size(), kEvidencePaths);
  ASSERT_EQ(g.exceptions.size(), kExceptionLines);
  EXPECT_EQ(g.exceptions[0].line.size(), kExceptionLineCap);
}

// The worst record at every bound, 16 of them: the file stays under the cap it is read with.
TEST(LedgerHistory, AFullLedgerStaysUnderItsReadCap) {
  Ledger l;
  l.job_id = std::string(kLedgerTextCap, 'j');
  for (int i = 0; i < static_cast<int>(kLedgerRecords); ++i) {
    ContainerRecord c;
    c.index = i;
    c.failure_file = std::string(kLedgerTextCap, 'f');
    for (int n = 0; n < static_cast<int>(kLedgerGenerations); ++n) {
      GenerationRecord g;
      g.number = n;
      g.started_unix = 1e9;
      g.ended_unix = 1e9 + 1;
      g.outcome = "failed";
      g.summary = std::string(kLedgerTextCap, 's');
      for (int p = 0; p < static_cast<int>(kEvidencePaths); ++p)
        add_evidence(g, std::string(kLedgerTextCap - 1, 'p') + std::to_string(p),
                     std::string(kExceptionLineCap, 'e'));
      add_generation(c.generations, g);
    }
    put_record(l, c);
  }
  const std::size_t size = ledger_text(l).size();
  EXPECT_LT(size, 1024u * 1024u) << size;  // kLedgerFileCap (ledger_file.h)
}

TEST(LedgerHistory, CutNeverSplitsAUtf8Sequence) {
  std::string text(kLedgerTextCap - 1, 'a');
  text += "\xc3\xa9\xc3\xa9";  // an é across the cap
  const std::string cut = ledger_text_cut(text);
  EXPECT_EQ(cut.size(), kLedgerTextCap - 1);
}

}  // namespace
}  // namespace tv
