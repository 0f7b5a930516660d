// list_split (checkpoint/split_listing.h) against real directories: a directory listed in any
// number of parallel parts gives exactly the names readdir gives, once each.
#include "checkpoint/split_listing.h"

#include <gtest/gtest.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "tests/unit/fakes/temp_dir.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

bool on_ext4(const fs::path& p) {
  struct statfs s {};
  return ::statfs(p.c_str(), &s) == 0 && s.f_type == 0xEF53;
}

std::vector<std::string> readdir_names(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> split_names(const fs::path& dir, unsigned parts, unsigned* used,
                                     std::size_t* files = nullptr) {
  Listing listing;
  auto r = list_split(dir.string(), parts, 0, listing);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  if (used) *used = r ? *r : 0;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < listing.files.size(); ++i) out.emplace_back(listing.files[i]);
  if (files) *files = listing.files.size();
  for (const auto& o : listing.others) out.push_back(o.name);
  std::sort(out.begin(), out.end());
  return out;
}

void make_checkpoints(const fs::path& dir, int n) {
  for (int i = 0; i < n; ++i) std::ofstream(dir / ("agent_" + std::to_string(i * 100) + ".pt"));
}

TEST(SplitListing, AnyNumberOfPartsListsEveryNameOnce) {
  TempDir t;
  make_checkpoints(t.path(), 20000);
  fs::create_directory(t.path() / "sub");
  fs::create_symlink("agent_100.pt", t.path() / "link.pt");
  const auto expected = readdir_names(t.path());
  ASSERT_EQ(expected.size(), 20002u);
  for (unsigned parts : {1u, 2u, 3u, 8u, 64u, 1000u}) {
    unsigned used = 0;
    std::size_t files = 0;
    EXPECT_EQ(split_names(t.path(), parts, &used, &files), expected) << parts << " parts";
    EXPECT_EQ(files, 20000u) << "regular files apart from the directory and the link";
    if (on_ext4(t.path())) {
      EXPECT_EQ(used, parts);
    }
  }
}

TEST(SplitListing, PartsWithNoNameBetweenThemLoseAndRepeatNothing) {
  // 40 names over 1,000 slices: most slices hold no name and read the next slice's first.
  TempDir t;
  make_checkpoints(t.path(), 40);
  const auto expected = readdir_names(t.path());
  for (unsigned parts : {1000u, 999u, 41u, 40u, 39u}) {
    unsigned used = 0;
    EXPECT_EQ(split_names(t.path(), parts, &used), expected) << parts << " parts";
  }
}

TEST(SplitListing, AnEmptyDirectoryInManyParts) {
  TempDir t;
  unsigned used = 0;
  EXPECT_TRUE(split_names(t.path(), 16, &used).empty());
}

TEST(SplitListing, AMissingDirectoryIsAnErrorNamingWhy) {
  Listing listing;
  auto r = list_split("/nonexistent/tv-split", 4, 1 << 20, listing);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "No such file or directory");
}

// A pids cgroup (v1 or v2) this process is moved into, with pids.max at 1: no thread can start
// while it lives (the test runs as root; CI does). Moved back and removed at the end.
class NoNewThreads {
 public:
  NoNewThreads() {
    const std::string name = "tv-unit-" + std::to_string(::getpid());
    if (fs::exists("/sys/fs/cgroup/pids/cgroup.procs")) {
      parent_ = "/sys/fs/cgroup/pids";
    } else if (std::ifstream f("/sys/fs/cgroup/cgroup.subtree_control"); f) {
      std::string controllers((std::istreambuf_iterator<char>(f)), {});
      if (controllers.find("pids") != std::string::npos) parent_ = "/sys/fs/cgroup";
    }
    if (parent_.empty() || ::geteuid() != 0) return;
    path_ = parent_ / name;
    std::error_code ec;
    fs::create_directory(path_, ec);
    active_ = !ec && write(path_ / "pids.max", "1") && write(path_ / "cgroup.procs", "0");
  }
  ~NoNewThreads() {
    if (path_.empty()) return;
    write(parent_ / "cgroup.procs", "0");
    std::error_code ec;
    fs::remove(path_, ec);
  }
  bool active() const { return active_; }

 private:
  static bool write(const fs::path& file, const std::string& text) {
    std::ofstream f(file);
    f << text;
    f.close();
    return !f.fail();
  }
  fs::path parent_, path_;
  bool active_ = false;
};

TEST(SplitListing, SlicesWhoseThreadsCannotStartAreReadByTheCaller) {
  TempDir t;
  make_checkpoints(t.path(), 5000);
  const auto expected = readdir_names(t.path());
  NoNewThreads limit;
  if (!limit.active()) GTEST_SKIP() << "needs root and a pids cgroup controller";
  EXPECT_THROW(std::thread([] {}).join(), std::system_error);  // the limit holds
  unsigned used = 0;
  EXPECT_EQ(split_names(t.path(), 8, &used), expected);
  if (on_ext4(t.path())) {
    EXPECT_EQ(used, 8u);
  }
}

TEST(SplitListing, PartsFollowTheDirectorySizeAndStayWithinTheCpus) {
  EXPECT_EQ(parts_for(0), 1u);
  EXPECT_EQ(parts_for(kSplitBytes - 1), 1u);
  EXPECT_LE(parts_for(kSplitBytes * 2), 2u);
  EXPECT_LE(parts_for(std::uint64_t{1} << 40), kMostParts);
  EXPECT_LE(parts_for(std::uint64_t{1} << 40), std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_GE(parts_for(std::uint64_t{1} << 40), 1u);
}

}  // namespace
}  // namespace tv
