// The safe pickle parser and the DCP .metadata reader: real torch 2.11 saves
// (tests/data/checkpoint/dcp_real), Python-pickled metadata, hand-built and hostile inputs.
#include "checkpoint/pickle.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "checkpoint/dcp_metadata.h"
#include "pickle_writer.h"

namespace tv {
namespace {

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Pickle, ScalarsContainersAndMemo) {
  // pickle.dumps({"a": [1, -2, 300, 2**40, 1.5, None, True], "b": ("x", b"yz")}, protocol=4)
  const std::string p(
      "\x80\x04\x95\x39\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x61\x94\x5d\x94\x28\x4b\x01"
      "\x4a\xfe\xff\xff\xff\x4d\x2c\x01\x8a\x06\x00\x00\x00\x00\x00\x01\x47\x3f\xf8\x00\x00\x00"
      "\x00\x00\x00\x4e\x88\x65\x8c\x01\x62\x94\x8c\x01\x78\x94\x43\x02\x79\x7a\x94\x86\x94\x75"
      "\x2e",
      68);
  auto v = parse_pickle(p);
  ASSERT_TRUE(v.ok()) << v.error().message;
  const auto a = v->field(v->root, "a");
  ASSERT_TRUE(v->valid(a));
  const auto& items = v->at(a).items;
  ASSERT_EQ(items.size(), 7u);
  EXPECT_EQ(v->at(items[0]).integer, 1);
  EXPECT_EQ(v->at(items[1]).integer, -2);
  EXPECT_EQ(v->at(items[2]).integer, 300);
  EXPECT_EQ(v->at(items[3]).integer, 1ll << 40);
  EXPECT_DOUBLE_EQ(v->at(items[4]).real, 1.5);
  EXPECT_EQ(v->at(items[5]).kind, PyKind::kNone);
  EXPECT_EQ(v->at(items[6]).kind, PyKind::kBool);
  const auto b = v->field(v->root, "b");
  ASSERT_EQ(v->at(b).kind, PyKind::kTuple);
  EXPECT_EQ(v->at(v->at(b).items[1]).text, "yz");
}

TEST(Pickle, EveryTruncationIsAnErrorNeverACrash) {
  const std::string whole = testing::make_dcp_metadata({{"__0_0.distcp", 0, 10}});
  ASSERT_TRUE(parse_pickle(whole).ok());
  for (std::size_t n = 0; n < whole.size(); ++n)
    EXPECT_FALSE(parse_pickle(whole.substr(0, n)).ok()) << n;
  EXPECT_FALSE(parse_pickle(whole + "x").ok());  // bytes after STOP
  EXPECT_TRUE(parse_pickle(whole + "x", {}, true).ok());
}

TEST(Pickle, NothingIsExecutedAndUnsupportedOpcodesAreErrors) {
  // os.system("x") as a REDUCE: parsed into an Object naming the global, never called.
  auto v =
      parse_pickle(std::string("\x80\x02"
                               "cos\nsystem\n"
                               "X\x01\x00\x00\x00x\x85R.",
                               22));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->class_name(v->root), "os.system");
  for (const std::string& bad : {std::string("I1\n."), std::string("\x82\x01."),
                                 std::string("\x80\x05\x97."), std::string("\x80\x09N.")})
    EXPECT_FALSE(parse_pickle(bad).ok());
}

TEST(Pickle, HostileSizesAndReferencesAreBounded) {
  EXPECT_FALSE(parse_pickle(std::string("\x8d\xff\xff\xff\xff\xff\xff\xff\x7f.", 10)).ok());
  EXPECT_FALSE(parse_pickle(std::string("h\x05.", 3)).ok());  // memo key never defined
  EXPECT_FALSE(parse_pickle(std::string("a.", 2)).ok());      // append on an empty stack
  PickleLimits tight;
  tight.max_nodes = 10;
  EXPECT_FALSE(parse_pickle(std::string(20, 'N') + ".", tight).ok());
  // A list that contains itself: parsed, and field() does not loop.
  auto v = parse_pickle(std::string("]q\x00h\x00\x61.", 7));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->field(v->root, "x"), kNoNode);
}

TEST(DcpMetadata, RealTorchSavesFromTwoRanksAndOne) {
  auto two = parse_dcp_metadata(read(TV_TESTDATA "/checkpoint/dcp_real/two_ranks/.metadata"));
  ASSERT_TRUE(two.ok()) << two.error().message;
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].relative_path, "__0_0.distcp");
  EXPECT_EQ((*two)[1].relative_path, "__1_0.distcp");
  EXPECT_EQ((*two)[0].min_size,
            read(TV_TESTDATA "/checkpoint/dcp_real/two_ranks/__0_0.distcp").size());
  EXPECT_EQ((*two)[1].min_size,
            read(TV_TESTDATA "/checkpoint/dcp_real/two_ranks/__1_0.distcp").size());
  auto one = parse_dcp_metadata(read(TV_TESTDATA "/checkpoint/dcp_real/one_rank/.metadata"));
  ASSERT_TRUE(one.ok()) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_GT((*one)[0].items, 3u);
}

TEST(DcpMetadata, RejectsWhatIsNotMetadataOrLeavesTheDirectory) {
  EXPECT_FALSE(parse_dcp_metadata("\x80\x04N.").ok());
  for (const char* bad : {"/etc/passwd", "../x", "a/../../x", ""})
    EXPECT_FALSE(parse_dcp_metadata(testing::make_dcp_metadata({{bad, 0, 1}})).ok()) << bad;
  EXPECT_FALSE(parse_dcp_metadata(testing::make_dcp_metadata({{"a", -1, 1}})).ok());
  EXPECT_FALSE(parse_dcp_metadata(testing::make_dcp_metadata({{"a", INT64_MAX, 2}})).ok());
  auto ok = parse_dcp_metadata(testing::make_dcp_metadata({{"sub/a", 5, 10}, {"sub/a", 0, 3}}));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[0].min_size, 15u);
  EXPECT_EQ((*ok)[0].items, 2u);
}

}  // namespace
}  // namespace tv
