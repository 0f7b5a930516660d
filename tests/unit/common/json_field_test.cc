#include "common/json_field.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

using nlohmann::json;

TEST(JsonField, ReturnsTheValueWhenTheTypeMatches) {
  const json j = json::parse(R"({"s": "x", "b": true, "i": -3, "u": 7, "d": 2.5})");
  EXPECT_EQ(json_field(j, "s", std::string("?")), "x");
  EXPECT_TRUE(json_field(j, "b", false));
  EXPECT_EQ(json_field(j, "i", 0), -3);
  EXPECT_EQ(json_field(j, "u", 0), 7);
  EXPECT_DOUBLE_EQ(json_field(j, "d", 0.0), 2.5);
  EXPECT_DOUBLE_EQ(json_field(j, "u", 0.0), 7.0);
}

TEST(JsonField, AnotherTypeOrAMissingFieldIsTheFallback) {
  const json j = json::parse(R"({"s": {"a": 1}, "b": "true", "i": "3", "d": null, "f": 1.5})");
  EXPECT_EQ(json_field(j, "s", std::string("?")), "?");
  EXPECT_FALSE(json_field(j, "b", false));
  EXPECT_EQ(json_field(j, "i", 9), 9);
  EXPECT_EQ(json_field(j, "f", 9), 9);  // a fraction is not an integer
  EXPECT_DOUBLE_EQ(json_field(j, "d", 1.0), 1.0);
  EXPECT_EQ(json_field(j, "missing", 4), 4);
  EXPECT_EQ(json_field(json::array({1}), "s", 4), 4);
  EXPECT_EQ(json_field(json(), "s", 4), 4);
}

TEST(JsonField, AnIntegerThatDoesNotFitIsTheFallback) {
  const json j = json::parse(R"({"big": 4294967296, "huge": 18446744073709551615, "neg": -1})");
  EXPECT_EQ(json_field(j, "big", 5), 5);
  EXPECT_EQ(json_field(j, "huge", 5), 5);
  EXPECT_EQ(json_field(j, "neg", 5u), 5u);
  EXPECT_EQ(json_field(j, "big", std::int64_t{0}), 4294967296);
}

}  // namespace
}  // namespace tv
