// parse_integer / parse_finite / number options: every wrap and overflow is a refusal.
#include "common/parse_number.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/options.h"

namespace tv {
namespace {

TEST(ParseNumber, IntegersInRangeOnly) {
  EXPECT_EQ(parse_integer<int>("42", 0, 100), 42);
  EXPECT_FALSE(parse_integer<int>("101", 0, 100));
  EXPECT_FALSE(parse_integer<int>("-1", 0, 100));
  EXPECT_FALSE(parse_integer<int>("99999999999999999999999999", 0, INT32_MAX));
  EXPECT_FALSE(parse_integer<int>("", 0, 100));
  EXPECT_FALSE(parse_integer<int>("4x", 0, 100));
  EXPECT_FALSE(parse_integer<int>(" 4", 0, 100));
  EXPECT_FALSE(parse_integer<int>("+4", 0, 100));
  EXPECT_FALSE(parse_integer<std::uint64_t>("-1", 0, UINT64_MAX));
}

TEST(ParseNumber, FiniteNumbersInRangeOnly) {
  EXPECT_EQ(parse_finite("2.5", 0, 10), 2.5);
  EXPECT_EQ(parse_finite("1e1", 0, 10), 10);
  for (const char* bad :
       {"1e20", "inf", "-inf", "nan", "infinity", "-1", "1e999", "", "1s", "0x10"})
    EXPECT_FALSE(parse_finite(bad, 0, 86400)) << bad;
}

Result<Options> with(const OptionSpec& spec, const std::string& value) {
  return parse_options({spec}, {"--" + spec.name, value}, Environment(), ParseMode{});
}

const OptionSpec kGrace{.name = "grace-period", .type = OptionType::kNumber, .max = 86400};

TEST(ParseNumber, ANumberOptionNamesTheOptionAndTheRange) {
  for (const char* bad : {"1e20", "inf", "nan", "-1"}) {
    auto r = with(kGrace, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().exit_code(), 78);
    EXPECT_EQ(r.error().message,
              std::string("--grace-period=\"") + bad + "\": expected a number from 0 to 86400");
  }
  EXPECT_EQ(*with(kGrace, "2.5")->get_double("grace-period"), 2.5);
}

TEST(ParseNumber, AnIntOptionRefusesOverlongNumbers) {
  auto r =
      with({.name = "max-restarts", .type = OptionType::kInt, .max = 1000}, "99999999999999999999");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "--max-restarts=\"99999999999999999999\": expected an integer from 0 to 1000");
}

}  // namespace
}  // namespace tv
