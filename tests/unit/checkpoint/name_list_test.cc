// NameList (checkpoint/tree_walk.h): names stored in chunks that never move.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checkpoint/tree_walk.h"

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

}  // namespace
}  // namespace tv
