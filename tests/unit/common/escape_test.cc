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

TEST(Escape, HtmlEscapesMarkupQuotesAndControlCharacters) {
  EXPECT_EQ(escape_html("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  EXPECT_EQ(escape_html("a\" onload=\"x & y"), "a&quot; onload=&quot;x &amp; y");
  EXPECT_EQ(escape_html("line\nnext\x1b[31m"), "line\\nnext\\x1b[31m");
  EXPECT_EQ(escape_html("h\xc3\xa9"), "h\xc3\xa9");  // UTF-8 kept
}

}  // namespace
}  // namespace tv
