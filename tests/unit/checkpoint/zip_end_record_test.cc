#include "checkpoint/zip_end_record.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fake_checkpoint_fs.h"

namespace tv {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<ZipEndRecord> parse_whole(const std::string& bytes) {
  return parse_zip_end_record(bytes, bytes.size());
}

TEST(ZipEndRecord, RealTorchSaveFileIsIntact) {
  const std::string pt = read_file(TV_TESTDATA "/checkpoint/agent_1000.pt");
  ASSERT_GT(pt.size(), 100u);
  auto r = parse_whole(pt);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->entries, 4u);  // data.pkl, two tensors, version
  EXPECT_TRUE(is_central_directory_header(pt.substr(r->central_directory_offset, 4)));
}

TEST(ZipEndRecord, EveryTruncationOfARealFileIsRejected) {
  const std::string pt = read_file(TV_TESTDATA "/checkpoint/agent_1000.pt");
  for (std::size_t n = 0; n < pt.size(); ++n) {
    auto r = parse_whole(pt.substr(0, n));
    EXPECT_FALSE(r.ok()) << "accepted a file cut off at " << n << " of " << pt.size() << " bytes";
  }
}

TEST(ZipEndRecord, TailOnlyParsesTheSameAsTheWholeFile) {
  const std::string z = testing::make_zip(std::string(100000, 'x'));
  const std::string tail = z.substr(z.size() - 1000);
  auto r = parse_zip_end_record(tail, z.size());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(is_central_directory_header(z.substr(r->central_directory_offset, 4)));
}

TEST(ZipEndRecord, CommentIsAllowedButTrailingGarbageIsNot) {
  EXPECT_TRUE(parse_whole(testing::make_zip("p", "a comment")).ok());
  EXPECT_FALSE(parse_whole(testing::make_zip("p") + "junk").ok());
}

TEST(ZipEndRecord, CentralDirectoryPastTheRecordIsRejected) {
  std::string z = testing::make_zip("p");
  z[z.size() - 22 + 16] = char(0xf0);  // central directory offset far too large
  auto r = parse_whole(z);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("central directory"), std::string::npos);
}

TEST(ZipEndRecord, EmptyArchiveIsNotACheckpoint) {
  std::string z = {'P', 'K', 5, 6};
  z += std::string(18, '\0');
  EXPECT_FALSE(parse_whole(z).ok());
}

// zip64: the end record's fields are 0xFFFF.., the real ones are in the zip64 record.
TEST(ZipEndRecord, Zip64RecordIsFollowed) {
  std::string z = testing::make_zip("p");
  const std::size_t end = z.size() - 22;
  const std::uint64_t cd_size = 16 + 46, cd_offset = end - cd_size;
  std::string rec = z.substr(0, end);
  auto put = [](std::string& s, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s += char((v >> (8 * i)) & 0xff);
  };
  const std::uint64_t rec64 = rec.size();
  put(rec, 0x06064b50, 4);
  put(rec, 44, 8);
  put(rec, 45, 2);
  put(rec, 45, 2);
  put(rec, 0, 4);
  put(rec, 0, 4);
  put(rec, 1, 8);
  put(rec, 1, 8);
  put(rec, cd_size, 8);
  put(rec, cd_offset, 8);
  put(rec, 0x07064b50, 4);
  put(rec, 0, 4);
  put(rec, rec64, 8);
  put(rec, 1, 4);
  put(rec, 0x06054b50, 4);
  put(rec, 0, 4);
  put(rec, 0xffff, 2);
  put(rec, 0xffff, 2);
  put(rec, 0xffffffff, 4);
  put(rec, 0xffffffff, 4);
  put(rec, 0, 2);
  auto r = parse_whole(rec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->zip64);
  EXPECT_EQ(r->central_directory_offset, cd_offset);
  // Without the locator the record cannot be trusted.
  std::string broken = rec;
  broken[rec.size() - 22 - 20] = 'X';
  EXPECT_FALSE(parse_whole(broken).ok());
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// Found by fuzz_zip_end_record: a zip64 locator pointing near 2^64 overflowed the bounds check.
TEST(ZipEndRecord, Zip64LocatorWithAHugeOffsetIsRejected) {
  std::string z(64, '\0');
  auto put = [](std::string& s, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s += char((v >> (8 * i)) & 0xff);
  };
  put(z, 0x07064b50, 4);
  put(z, 0, 4);
  put(z, 0xfffffffffffffff8ull, 8);
  put(z, 1, 4);
  put(z, 0x06054b50, 4);
  put(z, 0, 4);
  put(z, 0xffff, 2);
  put(z, 0xffff, 2);
  put(z, 0xffffffff, 4);
  put(z, 0xffffffff, 4);
  put(z, 0, 2);
  EXPECT_FALSE(parse_zip_end_record(z, z.size()).ok());
}

}  // namespace
}  // namespace tv
