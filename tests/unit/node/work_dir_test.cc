// WorkDir (launcher/node/work_dir.h) on real directories: a --log-dir created, generation
// 0 past an earlier container's attempts (links and files not counted), a refusal that names the
// option; a temporary directory under TMPDIR removed with its contents, and TMPDIR refused by name.
#include "launcher/node/work_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/fakes/temp_dir.h"

namespace tv {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(WorkDir, ALogDirIsCreatedAndGenerationZeroWritesPastTheAttemptsAlreadyThere) {
  TempDir tmp("tv-workdir");
  const fs::path logs = tmp.path() / "job" / "logs";
  fs::create_directories(logs / "attempt_0");
  fs::create_directories(logs / "attempt_2");
  fs::create_symlink(tmp.path(), logs / "attempt_7");  // planted: not one of this run's
  std::ofstream(logs / "attempt_9") << "a file";
  WorkDir wd;
  ASSERT_TRUE(wd.open(OptionValue{"job/logs", "--log-dir"}, Environment({}), tmp.path().string()));
  EXPECT_EQ(wd.path(), logs.string());  // relative to the cwd given, made absolute
  EXPECT_EQ(wd.first_attempt(), 3);
  EXPECT_FALSE(wd.temporary());

  WorkDir fresh;
  ASSERT_TRUE(fresh.open(OptionValue{(tmp.path() / "new/a/b").string(), "TRAINVISOR_LOG_DIR"},
                         Environment({}), "/"));
  EXPECT_TRUE(fs::is_directory(tmp.path() / "new/a/b"));
  EXPECT_EQ(fresh.first_attempt(), 0);
}

TEST(WorkDir, ALogDirThatCannotBeCreatedIsRefusedByItsOptionAndValue) {
  TempDir tmp("tv-workdir");
  std::ofstream(tmp.path() / "file") << "x";
  WorkDir wd;
  const auto s =
      wd.open(OptionValue{(tmp.path() / "file/logs").string(), "--log-dir"}, Environment({}), "/");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().exit_code(), 78);
  EXPECT_EQ(
      s.error().message.rfind(
          "--log-dir=\"" + (tmp.path() / "file/logs").string() + "\": cannot create directory", 0),
      0u)
      << s.error().message;
}

TEST(WorkDir, WithoutALogDirATemporaryDirectoryIsUsedAndRemovedWithItsContents) {
  TempDir tmp("tv-workdir");
  std::string path;
  {
    WorkDir wd;
    ASSERT_TRUE(wd.open(std::nullopt, Environment({{"TMPDIR", tmp.path().string()}}), "/"));
    EXPECT_TRUE(wd.temporary());
    path = wd.path();
    EXPECT_EQ(fs::path(path).parent_path(), tmp.path());
    fs::create_directories(fs::path(path) / "attempt_0/rank_0");
    std::ofstream(fs::path(path) / "attempt_0/rank_0/error.json") << "{}";
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(WorkDir, ATmpdirThatIsNoDirectoryIsRefusedByName) {
  TempDir tmp("tv-workdir");
  std::ofstream(tmp.path() / "file") << "x";
  WorkDir wd;
  const std::string bad = (tmp.path() / "file").string();
  const auto s = wd.open(std::nullopt, Environment({{"TMPDIR", bad}}), "/");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().exit_code(), 78);
  EXPECT_EQ(s.error().message.rfind("TMPDIR=\"" + bad + "\": cannot create a temporary", 0), 0u)
      << s.error().message;
}

}  // namespace
}  // namespace tv
