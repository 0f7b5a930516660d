// write_whole_file and open_own_directory against a real temporary directory.
#include "common/whole_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/own_dir.h"
#include "tests/unit/fakes/temp_dir.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

class WholeFile : public ::testing::Test {
 protected:
  static std::string text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  testing::TempDir tmp{"tv-whole"};
  fs::path dir = tmp.path();
};

TEST_F(WholeFile, NewFileIsWrittenAndNothingElseIsLeft) {
  const auto p = dir / "summary.json";
  auto r = write_whole_file(p.string(), "{}\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(*r);
  EXPECT_EQ(text(p), "{}\n");
  EXPECT_EQ(names(), std::vector<std::string>{"summary.json"});
}

TEST_F(WholeFile, ExistingRegularFileIsReplacedUnlessOnlyIfAbsent) {
  const auto p = dir / "f";
  std::ofstream(p) << "old";
  EXPECT_FALSE(*write_whole_file(p.string(), "new", {.only_if_absent = true}));
  EXPECT_EQ(text(p), "old");
  EXPECT_TRUE(*write_whole_file(p.string(), "new"));
  EXPECT_EQ(text(p), "new");
}

TEST_F(WholeFile, SymbolicLinkIsNeverFollowed) {
  const auto victim = dir / "victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir / "link");
  auto r = write_whole_file((dir / "link").string(), "owned");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            (dir / "link").string() + ": not written (a symbolic link; not followed)");
  EXPECT_EQ(text(victim), "precious");
}

TEST_F(WholeFile, FifoIsRefusedWithoutWaiting) {
  const auto p = dir / "fifo";
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  auto r = write_whole_file(p.string(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, p.string() + ": not written (not a regular file)");
}

TEST_F(WholeFile, CharacterDeviceIsWrittenInPlace) {
  EXPECT_TRUE(*write_whole_file("/dev/null", "x"));
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(WholeFile, MissingDirectoryNamesTheReason) {
  auto r = write_whole_file((dir / "no" / "f").string(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            (dir / "no" / "f").string() + ": not written (No such file or directory)");
}

TEST(StandardStream, OnlyTheDocumentedNames) {
  EXPECT_EQ(standard_stream_of("/dev/stdout"), 1);
  EXPECT_EQ(standard_stream_of("/dev/fd/2"), 2);
  EXPECT_EQ(standard_stream_of("/proc/self/fd/1"), 1);
  EXPECT_EQ(standard_stream_of("/dev/fd/3"), 0);
  EXPECT_EQ(standard_stream_of("/tmp/stdout"), 0);
}

TEST_F(WholeFile, OwnDirectoryIsCreatedOrRefusedWhenLooseOrALink) {
  const UniqueFd parent(::open(dir.c_str(), O_RDONLY | O_DIRECTORY));
  auto made = open_own_directory(parent.get(), "attempt_0", "D/attempt_0");
  ASSERT_TRUE(made.ok()) << made.error().message;
  fs::create_directory(dir / "loose");
  ::chmod((dir / "loose").c_str(), 0777);
  auto loose = open_own_directory(parent.get(), "loose", "D/loose");
  ASSERT_FALSE(loose.ok());
  EXPECT_EQ(loose.error().message, "D/loose: writable by other users (mode 0777)");
  fs::create_directory_symlink(dir / "attempt_0", dir / "link");
  auto link = open_own_directory(parent.get(), "link", "D/link");
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().message, "D/link: a symbolic link, not a directory of its own");
  if (::geteuid() == 0) {
    fs::create_directory(dir / "theirs");
    ASSERT_EQ(::chown((dir / "theirs").c_str(), 65534, 65534), 0);
    auto theirs = open_own_directory(parent.get(), "theirs", "D/theirs");
    ASSERT_FALSE(theirs.ok());
    EXPECT_EQ(theirs.error().message, "D/theirs: owned by uid 65534, not by trainvisor (uid 0)");
  }
}

TEST_F(WholeFile, OwnAppendFileRefusesLinksAndHardLinks) {
  const UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY));
  std::string why;
  const int fd = open_own_append_file(d.get(), "stdout.log", &why);
  ASSERT_GE(fd, 0) << why;
  ::close(fd);
  fs::create_symlink(dir / "stdout.log", dir / "link.log");
  EXPECT_EQ(open_own_append_file(d.get(), "link.log", &why), -1);
  EXPECT_EQ(why, "a symbolic link, not followed");
  fs::create_hard_link(dir / "stdout.log", dir / "hard.log");
  EXPECT_EQ(open_own_append_file(d.get(), "hard.log", &why), -1);
  EXPECT_EQ(why, "it has other hard links");
}

}  // namespace
}  // namespace tv
