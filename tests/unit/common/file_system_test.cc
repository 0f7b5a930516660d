// RealFileSystem against a real tree (and /dev/null), and the unit tests' FakeFileSystem against
// the same tree held in memory: the fake must answer as the real one does, or the tests that use it
// prove nothing about the product.
#include "common/file_system.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

// A sysfs-like tree: class/infiniband/efa_0/device/{vendor,big,driver -> drivers/efa}.
struct Tree {
  // Without a link above it: the real one's weakly_canonical would resolve one the fake lacks.
  fs::path root =
      fs::weakly_canonical(fs::temp_directory_path()) / ("tv-fs-" + std::to_string(::getpid()));
  std::string dev = (root / "class/infiniband/efa_0/device").string();
  std::string driver_dir = (root / "drivers/efa").string();
  testing::FakeFileSystem fake;

  Tree() {
    fs::create_directories(dev);
    fs::create_directories(driver_dir);
    file(dev + "/vendor", "0x1d0f\n");
    file(dev + "/big", std::string(100, 'x'));
    file(driver_dir + "/bind", "");
    fs::create_directory_symlink(driver_dir, dev + "/driver");
    fake.add_link(dev + "/driver", driver_dir);
    fake.add_node("/dev/null");
  }
  ~Tree() { fs::remove_all(root); }
  void file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    fake.add_file(path, text);
  }
};

struct Answers {
  bool exists, is_directory;
  std::vector<std::string> list;
  std::optional<std::string> read_link, read;
  std::string why;
  bool operator==(const Answers&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Answers& a) {
  os << "exists=" << a.exists << " is_directory=" << a.is_directory << " list=[";
  for (const auto& n : a.list) os << n << " ";
  return os << "] read_link=" << a.read_link.value_or("-") << " read=" << a.read.value_or("-")
            << " why=" << a.why;
}

Answers ask(const FileSystem& f, const std::string& path) {
  Answers a{f.exists(path), f.is_directory(path), f.list(path), f.read_link(path), {}, {}};
  a.read = f.read(path, 10, &a.why);
  return a;
}

TEST(FileSystem, RealAnswers) {
  Tree t;
  const RealFileSystem real;
  EXPECT_EQ(real.list(t.root.string()), (std::vector<std::string>{"class", "drivers"}));
  EXPECT_EQ(real.list(t.dev), (std::vector<std::string>{"big", "driver", "vendor"}));
  EXPECT_TRUE(real.list(t.dev + "/none").empty());
  EXPECT_EQ(real.read_link(t.dev + "/driver"), t.driver_dir);
  EXPECT_FALSE(real.read_link(t.dev + "/vendor"));
  EXPECT_EQ(real.read(t.dev + "/vendor", 10, nullptr), "0x1d0f\n");
  std::string why;
  EXPECT_FALSE(real.read(t.dev + "/big", 99, &why));
  EXPECT_EQ(why, "larger than 99 bytes (100); not read");
  EXPECT_FALSE(real.read("/dev/null", 10, &why));
  EXPECT_EQ(why, "not a regular file (a character device)");
}

TEST(FileSystem, FakeAnswersAsTheRealOneDoes) {
  Tree t;
  const RealFileSystem real;
  for (const std::string& path :
       {t.root.string(), (t.root / "class/infiniband").string(), t.dev, t.dev + "/vendor",
        t.dev + "/big", t.dev + "/none", t.driver_dir, (t.root / "none/deeper").string()})
    EXPECT_EQ(ask(t.fake, path), ask(real, path)) << path;
  // A device node (not listed: the real /dev holds more) and a link (the fake does not follow it).
  EXPECT_EQ(t.fake.exists("/dev/null"), real.exists("/dev/null"));
  std::string real_why, fake_why;
  EXPECT_EQ(t.fake.read("/dev/null", 10, &fake_why), real.read("/dev/null", 10, &real_why));
  EXPECT_EQ(fake_why, real_why);
  EXPECT_EQ(t.fake.exists(t.dev + "/driver"), real.exists(t.dev + "/driver"));
  EXPECT_EQ(t.fake.read_link(t.dev + "/driver"), real.read_link(t.dev + "/driver"));
}

// A heartbeat's mtime as a worker sets it (utimensat, ns), through both: the same number; nothing
// where there is no file. (A directory the fake implies from its paths has none; the real one's
// has, and nothing reads a directory's mtime through this seam.)
TEST(FileSystem, ModifiedTimesAnswerAlike) {
  Tree t;
  const RealFileSystem real;
  const std::string beat = t.dev + "/vendor";
  const timespec times[2] = {{1700000000, 123456789}, {1700000000, 123456789}};
  ASSERT_EQ(::utimensat(AT_FDCWD, beat.c_str(), times, 0), 0);
  t.fake.touch(beat, 1700000000LL * 1'000'000'000 + 123456789);
  EXPECT_EQ(real.modified_ns(beat), 1700000000LL * 1'000'000'000 + 123456789);
  EXPECT_EQ(t.fake.modified_ns(beat), real.modified_ns(beat));
  EXPECT_EQ(t.fake.modified_ns(t.dev + "/none"), std::nullopt);
  EXPECT_EQ(real.modified_ns(t.dev + "/none"), std::nullopt);
  EXPECT_TRUE(t.fake.modified_ns("/dev/null"));
  EXPECT_TRUE(real.modified_ns("/dev/null"));
}

TEST(FileSystem, RegularSizesAnswerAlike) {
  Tree t;
  const RealFileSystem real;
  for (const std::string& path : {t.dev + "/vendor", t.dev + "/big", t.driver_dir + "/bind", t.dev,
                                  t.dev + "/none", std::string("/dev/null")})
    EXPECT_EQ(t.fake.regular_size(path), real.regular_size(path)) << path;
  EXPECT_EQ(real.regular_size(t.dev + "/big"), 100u);
  EXPECT_EQ(real.regular_size("/dev/null"), std::nullopt);  // a device: never read for its size
}

// A log's tail (the exception at the end of a worker's stderr.log): its last bytes whatever its
// size, through both alike; a FIFO, a device or nothing: refused at once, never waited on.
TEST(FileSystem, TailsAnswerAlike) {
  Tree t;
  const RealFileSystem real;
  for (const std::string& path : {t.dev + "/vendor", t.dev + "/big", t.dev, t.dev + "/none"})
    for (std::size_t cap : {std::size_t{3}, std::size_t{1000}}) {
      std::string real_why, fake_why;
      EXPECT_EQ(t.fake.read_tail(path, cap, &fake_why), real.read_tail(path, cap, &real_why))
          << path;
      EXPECT_EQ(fake_why, real_why) << path;
    }
  EXPECT_EQ(real.read_tail(t.dev + "/vendor", 3, nullptr), "0f\n");
  const std::string fifo = (t.root / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string why;
  EXPECT_FALSE(real.read_tail(fifo, 10, &why));
  EXPECT_EQ(why, "not a regular file (a FIFO)");
  EXPECT_FALSE(real.read_tail("/dev/zero", 10, &why));
  EXPECT_EQ(why, "not a regular file (a character device)");
  EXPECT_FALSE(real.read_tail(t.dev + "/driver", 10, &why));  // a link (a worker's planted one)
  EXPECT_EQ(why, "a symbolic link; not followed");
}

// A glob's matches (a "/" and a leading "." only literally; the directories too), through both:
// the same paths in the same order; none where nothing matches.
TEST(FileSystem, GlobsMatchAlike) {
  Tree t;
  const RealFileSystem real;
  t.file(t.driver_dir + "/.hidden", "");
  const std::string r = t.root.string();
  EXPECT_EQ(real.glob(t.dev + "/*"),
            (std::vector<std::string>{t.dev + "/big", t.dev + "/driver", t.dev + "/vendor"}));
  EXPECT_EQ(real.glob(r + "/none*"), std::vector<std::string>{});
  for (const std::string& pattern :
       {t.dev + "/*", r + "/*", r + "/*/infiniband/*/device/v*", t.dev + "/[bv]*", r + "/*/efa",
        t.driver_dir + "/*", t.driver_dir + "/.h*", r + "/*/*/efa_?", r + "/none*", r + "/*ss"})
    EXPECT_EQ(t.fake.glob(pattern), real.glob(pattern)) << pattern;
}

// A path with its links, "." and ".." resolved where it exists, the rest appended: the same
// through both (a ".." after a link is its target's parent); a loop of links is no answer.
TEST(FileSystem, WeaklyCanonicalPathsAnswerAlike) {
  Tree t;
  const RealFileSystem real;
  const std::string r = t.root.string();
  fs::create_symlink("loop", r + "/loop");
  t.fake.add_link(r + "/loop", "loop");
  EXPECT_EQ(real.weakly_canonical(t.dev + "/driver/bind"), t.driver_dir + "/bind");
  EXPECT_EQ(real.weakly_canonical(r + "/loop/x"), std::nullopt);
  for (const std::string& path :
       {r, t.dev + "/driver", t.dev + "/driver/bind", t.dev + "/driver/none/x/../y",
        t.dev + "/../device/./vendor", t.dev + "/driver/../efa/bind", r + "/none/../drivers",
        r + "/drivers/efa/", t.dev + "/vendor", r + "/loop/x", r + "/loop"})
    EXPECT_EQ(t.fake.weakly_canonical(path), real.weakly_canonical(path)) << path;
}

// As the workers' paths are made absolute: against the directory given, by the path's text alone.
TEST(AbsolutePath, AgainstTheDirectoryGivenByTheTextAlone) {
  const struct {
    const char* path;
    const char* cwd;
    const char* absolute;
  } table[] = {
      {"ckpt", "/jobs/42", "/jobs/42/ckpt"},
      {"./runs/../ckpt/", "/jobs/42", "/jobs/42/ckpt"},
      {"/data//ckpt/.", "/jobs/42", "/data/ckpt"},
      {".", "/jobs/42", "/jobs/42"},
      {"/", "/jobs/42", "/"},
      {"ckpt", "", "ckpt"},  // the directory unknown: as given
      {"", "/jobs/42", ""},  // nothing named stays nothing
  };
  for (const auto& row : table)
    EXPECT_EQ(absolute_path(row.path, row.cwd), row.absolute) << row.path << " in " << row.cwd;
}

}  // namespace
}  // namespace tv
