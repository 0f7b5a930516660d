// NameList (checkpoint/name_list.h): names stored in chunks that never move.
#include "checkpoint/name_list.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tv {
namespace {

TEST(NameList, EveryNameComesBackAcrossChunkBoundaries) {
  NameList list;
  std::vector<std::string> added;
  for (int i = 0; i < 20000; ++i) {  // lengths 1..255: many chunks, names end at chunk edges
    std::string name(static_cast<std::size_t>(1 + (i * 37) % 255), static_cast<char>('a' + i % 26));
    name += std::to_string(i);
    if (name.size() > NameList::kMaxName) name.resize(NameList::kMaxName);
    ASSERT_TRUE(list.add(name));
    added.push_back(name);
  }
  ASSERT_EQ(list.size(), added.size());
  for (std::size_t i = 0; i < added.size(); ++i) ASSERT_EQ(list[i], added[i]) << i;
  EXPECT_TRUE(list.contains(added[12345]));
  EXPECT_FALSE(list.contains("not there"));
}

TEST(NameList, NamesLongerThanNameMaxAreRefused) {
  NameList list;
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.add(std::string(255, 'x')));
  EXPECT_FALSE(list.add(std::string(256, 'y')));
  EXPECT_TRUE(list.add(""));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], std::string(255, 'x'));
  EXPECT_EQ(list[1], "");
}

TEST(NameList, AppendMovesEveryNameAfterTheOthersAndPopBackDropsTheLast) {
  NameList a, b, empty;
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(a.add("a" + std::to_string(i)));
  for (int i = 0; i < 7000; ++i) ASSERT_TRUE(b.add("b" + std::to_string(i)));
  a.append(std::move(b));
  a.append(std::move(empty));
  ASSERT_EQ(a.size(), 12000u);
  EXPECT_EQ(a[4999], "a4999");
  EXPECT_EQ(a[5000], "b0");
  EXPECT_EQ(a.back(), "b6999");
  EXPECT_TRUE(b.empty());
  a.pop_back();
  EXPECT_EQ(a.back(), "b6998");
  ASSERT_TRUE(a.add("after"));  // adding goes on after the appended chunks
  EXPECT_EQ(a.back(), "after");
  EXPECT_EQ(a[5000], "b0");
  NameList c;
  c.append(std::move(a));
  EXPECT_EQ(c.size(), 12000u);
  EXPECT_EQ(c[0], "a0");
}

}  // namespace
}  // namespace tv
