// read_regular_file against real files: a FIFO with no writer, /dev/zero, a file over the cap, a
// link (read_regular_file_nofollow).
#include "common/bounded_read.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/file_system.h"

namespace tv {
namespace {

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tv-bounded-" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};

TEST(BoundedRead, ReadsARegularFile) {
  TempDir d;
  auto r = read_regular_file(d.file("a", "hello\n"), 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "hello\n");
}

TEST(BoundedRead, NoFollowRefusesALinkAndReadsAFile) {
  TempDir d;
  const std::string target = d.file("target", "secret\n");
  const std::string link = (d.path / "link").string();
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto r = read_regular_file_nofollow(link, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, link + ": a symbolic link; not followed");
  EXPECT_TRUE(read_regular_file(link, 100).ok());  // the plain reader follows it
  auto plain = read_regular_file_nofollow(target, 100);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "secret\n");
}

TEST(BoundedRead, AFifoIsRefusedAtOnce) {
  TempDir d;
  const std::string fifo = (d.path / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = read_regular_file(fifo, 100);  // blocks for good without O_NONBLOCK
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, fifo + ": not a regular file (a FIFO)");
  EXPECT_EQ(r.error().exit_code(), 78);
}

TEST(BoundedRead, DevZeroIsRefused) {
  auto r = read_regular_file("/dev/zero", 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "/dev/zero: not a regular file (a character device)");
}

TEST(BoundedRead, AFileOverTheCapIsRefused) {
  TempDir d;
  const std::string f = d.file("big", std::string(101, 'x'));
  auto r = read_regular_file(f, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, f + ": larger than 100 bytes (101); not read");
  EXPECT_TRUE(read_regular_file(f, 101).ok());
}

TEST(BoundedRead, ADirectoryAndAMissingFileAreRefused) {
  TempDir d;
  EXPECT_EQ(read_regular_file(d.path.string(), 100).error().message,
            d.path.string() + ": not a regular file (a directory)");
  EXPECT_EQ(read_regular_file((d.path / "none").string(), 100).error().message,
            (d.path / "none").string() + ": cannot open (No such file or directory)");
}

TEST(BoundedRead, RealFileSystemSaysWhy) {
  TempDir d;
  const std::string fifo = (d.path / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string why;
  EXPECT_FALSE(RealFileSystem().read(fifo, kConfigFileCap, &why));
  EXPECT_EQ(why, "not a regular file (a FIFO)");
}

}  // namespace
}  // namespace tv
