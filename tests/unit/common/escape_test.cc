#include "common/escape.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(Escape, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(escape_control("a\nb\rc\td\x1b[31me\x7f"), "a\\nb\\rc\\td\\x1b[31me\\x7f");
  EXPECT_EQ(escape_control("h\xc3\xa9llo"), "h\xc3\xa9llo");  // UTF-8 kept
  EXPECT_EQ(escape_control(std::string_view("a\0b", 3)), "a\\x00b");
}

TEST(Escape, KeepLinesKeepsNewlinesAndTabsOnly) {
  EXPECT_EQ(escape_control_keep_lines("a\n\tb\r\x1b"), "a\n\tb\\r\\x1b");
  EXPECT_TRUE(has_control("x\ny"));
  EXPECT_FALSE(has_control("node-1.example"));
}

}  // namespace
}  // namespace tv
