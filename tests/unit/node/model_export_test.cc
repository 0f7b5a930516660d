// export_overlap (launcher/node/model_export.h) on an in-memory file system and a current
// directory that is not this test's: the links it resolves, the matches a glob has and the
// directory a relative path is under are the FileSystem's and the cwd given, never this machine's
// (nothing here exists on its disk). The copy itself runs on real files:
// tests/integration/test_export.py.
#include "launcher/node/model_export.h"

#include <gtest/gtest.h>

#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

class ExportOverlapTest : public ::testing::Test {
 protected:
  std::optional<std::string> overlap(const std::string& what, const std::string& target) {
    return export_overlap(what, target, fs, cwd);
  }
  struct Row {
    const char* what;
    const char* target;
    const char* named;  // in the overlap's message
  };
  void expect_overlaps(std::initializer_list<Row> rows) {
    for (const Row& r : rows) {
      const auto why = overlap(r.what, r.target);
      ASSERT_TRUE(why.has_value()) << r.what << " into " << r.target << ": no overlap";
      EXPECT_NE(why->find(r.named), std::string::npos) << *why;
    }
  }
  testing::FakeFileSystem fs;
  std::string cwd = "/jobs/42";
};

TEST_F(ExportOverlapTest, SourcesApartFromTheTargetDoNotOverlap) {
  fs.add_file("/runs/out/model.pt", "");
  EXPECT_EQ(overlap("/runs/out", "/opt/ml/model"), std::nullopt);
  EXPECT_EQ(overlap("/runs/out/model.pt", "/opt/ml/model"), std::nullopt);
  EXPECT_EQ(overlap("/runs/out/*.pt", "/opt/ml/model"), std::nullopt);
  EXPECT_EQ(overlap("/runs/out/model", "/runs/out"), std::nullopt);  // inside it is no loop
}

TEST_F(ExportOverlapTest, TheTargetItselfOrASourceHoldingItOverlaps) {
  fs.add_file("/opt/ml/model/.keep", "");
  expect_overlaps({
      {"/opt/ml/model", "/opt/ml/model",
       "the export directory /opt/ml/model is the source /opt/ml/model itself"},
      {"/opt/ml", "/opt/ml/model", "the source /opt/ml holds the export directory /opt/ml/model"},
      {"/opt/ml/./model/", "/opt/ml/model", "itself"},
  });
}

// The path named is followed: its link's target, the fake's, holds the target.
TEST_F(ExportOverlapTest, ALinkNamedIsResolvedThroughTheFileSystem) {
  fs.add_file("/out/model/weights.pt", "");
  fs.add_link("/ckpt/latest", "/out");
  expect_overlaps({{"/ckpt/latest", "/out/model",
                    "the source /ckpt/latest holds the export directory /out/model"}});
  fs.add_link("/ckpt/model", "../out/model");  // a relative target, from the link's directory
  expect_overlaps({{"/ckpt/model", "/out/model", "is the source /ckpt/model itself"}});
  // The target's own links too: /export -> /ckpt/latest/model is inside /out.
  fs.add_link("/export", "/ckpt/latest/model");
  expect_overlaps({{"/out", "/export", "the source /out holds the export directory /export"}});
}

// A glob's matches are what the fake holds now: a match that is the target, one that holds it,
// or one already in it.
TEST_F(ExportOverlapTest, AGlobsMatchesAreTheFileSystemsNow) {
  EXPECT_EQ(overlap("/runs/model/*.pt", "/runs/model"), std::nullopt);  // nothing matches yet
  fs.add_file("/runs/model/old.pt", "");
  fs.add_file("/runs/a.pt", "");
  expect_overlaps({
      {"/runs/model/*.pt", "/runs/model",
       "the match /runs/model/old.pt is already in the export directory /runs/model"},
      {"/runs/*", "/runs/model",
       "the export directory /runs/model is the match /runs/model itself"},
      {"/r*", "/runs/model", "the match /runs holds the export directory /runs/model"},
  });
  EXPECT_EQ(overlap("/runs/*.pt", "/runs/model"), std::nullopt);  // a.pt is beside it
}

// A match is never followed (a link among the matches is only its own name); the target is.
TEST_F(ExportOverlapTest, AGlobsMatchIsNotFollowedButTheTargetIs) {
  fs.add_file("/out/model/weights.pt", "");
  fs.add_link("/logs/model", "/out/model");
  EXPECT_EQ(overlap("/logs/*", "/out/model"), std::nullopt);
  fs.add_file("/logs/w2.pt", "");
  fs.add_link("/out/model/logs", "/logs");  // the target: a link to the matches' directory
  expect_overlaps({{"/logs/*.pt", "/out/model/logs",
                    "the match /logs/w2.pt is already in the export directory /out/model/logs"}});
}

// Relative paths are under the cwd given: the source, the target, a glob and its matches (named
// as glob(3) in that directory names them), even where that directory's name has wildcards.
TEST_F(ExportOverlapTest, RelativePathsAreUnderTheCwdGiven) {
  fs.add_file("/jobs/42/out/model/old.pt", "");
  expect_overlaps({
      {"out", "/jobs/42/out/model", "the source out holds the export directory /jobs/42/out/model"},
      {"/jobs/42/out", "out", "the export directory out is the source /jobs/42/out itself"},
      {"./out/../out/model", "out/model/", "itself"},
      {"out/model/*", "/jobs/42/out/model",
       "the match out/model/old.pt is already in the export directory"},
  });
  EXPECT_EQ(overlap("out/model/*", "/elsewhere"), std::nullopt);
  cwd = "/jobs/4[2]";  // its brackets are its name's, not a pattern's
  fs.add_file("/jobs/4[2]/out/model/new.pt", "");
  expect_overlaps({{"out/model/*", "/jobs/4[2]/out/model",
                    "the match out/model/new.pt is already in the export directory"}});
  cwd = "/jobs/7";
  EXPECT_EQ(overlap("out", "/jobs/42/out/model"), std::nullopt);
  EXPECT_EQ(overlap("out/model/*", "/jobs/42/out/model"), std::nullopt);
}

}  // namespace
}  // namespace tv
