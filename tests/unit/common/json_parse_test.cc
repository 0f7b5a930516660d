#include "common/json_parse.h"

#include <gtest/gtest.h>

#include "common/json_text.h"

namespace tv {
namespace {

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonParse, NestingIsBoundedWhileParsing) {
  EXPECT_TRUE(parse_json(nested(kMaxJsonDepth)).ok());
  auto deep = parse_json(nested(100000));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().message, "nested deeper than 64 levels");
  EXPECT_TRUE(parse_json_or_discarded(nested(100000)).is_discarded());
  EXPECT_TRUE(parse_json_or_discarded("{").is_discarded());
  EXPECT_EQ(parse_json_or_discarded(R"({"a": [1]})")["a"][0], 1);
}

TEST(JsonParse, SyntaxErrorIsNlohmannsText) {
  auto r = parse_json("{\"a\":");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("parse error"), std::string::npos) << r.error().message;
}

TEST(JsonPreview, NeverSerializesContainersWhole) {
  EXPECT_EQ(json_preview(nlohmann::json::object()), "{}");
  EXPECT_EQ(json_preview(nlohmann::json::array()), "[]");
  EXPECT_EQ(json_preview(nlohmann::json::parse("[[1],[2]]")), "a list of 2 items");
  EXPECT_EQ(json_preview(nlohmann::json::parse(R"({"a":1})")), "an object of 1 fields");
  EXPECT_EQ(json_preview(nlohmann::json(std::string(1000, 'x'))).size(), 80u);
  EXPECT_EQ(json_preview(nlohmann::json(7)), "7");
}

}  // namespace
}  // namespace tv
