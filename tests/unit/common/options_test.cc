// The typed option table (common/options.h): every value is checked against its row whatever
// its origin, and the one-line error names that origin (flag, TRAINVISOR_X, PET_X, default);
// --help and the Markdown come from the same rows.
#include "common/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tv {
namespace {

using T = OptionType;

const std::vector<OptionSpec> kTable = {
    {.name = "log-format", .type = T::kChoice, .default_value = "text", .words = {"text", "json"}},
    {.name = "standalone", .type = T::kFlag, .help = "one node"},
    {.name = "max-restarts",
     .type = T::kInt,
     .help = "restarts",
     .default_value = "3",
     .max = 1000,
     .from_pet = true},
    {.name = "nproc-per-node", .type = T::kInt, .min = 1, .max = 8, .words = {"auto"}},
    {.name = "grace", .type = T::kNumber, .max = 60},
    {.name = "metrics-address", .type = T::kAddress, .default_value = "0.0.0.0"},
    {.name = "metrics-port", .type = T::kInt, .default_value = "0", .max = 65535},
    {.name = "path", .help = "any text", .metavar = "PATH"},
    {.name = "module", .type = T::kFlag, .short_name = "m"},
    {.name = "hang-timeout", .type = T::kSeconds, .max = 604800, .words = {"auto"}},
};

Result<Options> parse(const std::vector<std::string>& args, Environment env = Environment()) {
  return parse_options(kTable, args, env, ParseMode{.stop_at_command = true, .use_env = true});
}

void expect_refused(const Result<Options>& r, const std::string& message) {
  ASSERT_FALSE(r.ok()) << message;
  EXPECT_EQ(r.error().exit_code(), 78);
  EXPECT_EQ(r.error().message, message);
}

TEST(Options, EveryEnumeratedValueIsCheckedAndTheErrorNamesItsOrigin) {
  expect_refused(parse({"--log-format", "xml"}), "--log-format=\"xml\": expected one of text|json");
  expect_refused(parse({}, Environment{{"TRAINVISOR_LOG_FORMAT", "xml"}}),
                 "TRAINVISOR_LOG_FORMAT=\"xml\": expected one of text|json");
  expect_refused(parse({}, Environment{{"TRAINVISOR_STANDALONE", "maybe"}}),
                 "TRAINVISOR_STANDALONE=\"maybe\": expected 1|true|yes|on or 0|false|no|off");
  expect_refused(parse({}, Environment{{"PET_MAX_RESTARTS", "many"}}),
                 "PET_MAX_RESTARTS=\"many\": expected an integer from 0 to 1000");
  expect_refused(parse({"--max_restarts=1001"}),
                 "--max-restarts=\"1001\": expected an integer from 0 to 1000");
  expect_refused(parse({"--nproc-per-node", "gpu"}),
                 "--nproc-per-node=\"gpu\": expected an integer from 1 to 8, or auto");
  expect_refused(parse({"--grace", "inf"}), "--grace=\"inf\": expected a number from 0 to 60");
}

TEST(Options, AnUnknownOptionNamesTheNearestKnownOne) {
  auto typo = parse({"--max-restart", "2"});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().exit_code(), 64);
  EXPECT_EQ(typo.error().message,
            "unknown option --max-restart (did you mean --max-restarts?) (see --help)");
  auto underscores = parse({"--nproc_per_nod=2"});  // spelt with _: the hint has the dashes
  ASSERT_FALSE(underscores.ok());
  EXPECT_NE(underscores.error().message.find("(did you mean --nproc-per-node?)"), std::string::npos)
      << underscores.error().message;
  auto far = parse({"--frobnicate"});  // nothing near: no guess
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().message, "unknown option --frobnicate (see --help)");
}

TEST(Options, DidYouMeanTakesOnlyANearName) {
  const std::vector<std::string> known = {"stacks", "report", "run", "render"};
  EXPECT_EQ(did_you_mean("stcks", known), " (did you mean stacks?)");
  EXPECT_EQ(did_you_mean("rn", known, "--"), " (did you mean --run?)");
  EXPECT_EQ(did_you_mean("rendr", known), " (did you mean render?)");
  EXPECT_EQ(did_you_mean("xyz", known), "");
  EXPECT_EQ(did_you_mean("", known), "");
}

TEST(Options, ADurationSaysItIsInSecondsAndWhatAUnitWouldBe) {
  expect_refused(parse({"--hang-timeout", "5m"}),
                 "--hang-timeout=\"5m\": expected a number of seconds from 0 to 604800 (as 90 or "
                 "0.5, no unit), or auto: 5m is 300 seconds");
  expect_refused(parse({}, Environment{{"TRAINVISOR_HANG_TIMEOUT", "soon"}}),
                 "TRAINVISOR_HANG_TIMEOUT=\"soon\": expected a number of seconds from 0 to 604800 "
                 "(as 90 or 0.5, no unit), or auto");
  EXPECT_EQ(*parse({"--hang-timeout", "90.5"})->get_double("hang-timeout"), 90.5);
  EXPECT_EQ(seconds_with_unit("1.5h"), 5400);
  EXPECT_EQ(seconds_with_unit("250ms"), 0.25);
  EXPECT_EQ(seconds_with_unit("30S"), 30);
  EXPECT_EQ(seconds_with_unit("2d"), 172800);
  EXPECT_FALSE(seconds_with_unit("5"));
  EXPECT_FALSE(seconds_with_unit("m5"));
  EXPECT_FALSE(seconds_with_unit("5 parsecs"));
}

TEST(Options, ABadAddressNamesTheAddressOptionNotThePort) {
  expect_refused(parse({"--metrics-address", "not-an-ip", "--metrics-port", "9090"}),
                 "--metrics-address=\"not-an-ip\": expected an IPv4 or IPv6 address");
  auto ok = parse({"--metrics-address", "::1"});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->get("metrics-address")->value, "::1");
}

TEST(Options, PrecedenceIsFlagThenTrainvisorThenPetThenDefault) {
  const Environment env{{"TRAINVISOR_MAX_RESTARTS", "5"}, {"PET_MAX_RESTARTS", "7"}};
  auto flag = parse({"--max-restarts", "2"}, env);
  EXPECT_EQ(*flag->get_int("max-restarts"), 2);
  EXPECT_EQ(flag->get("max-restarts")->origin, "--max-restarts");
  auto tv = parse({}, env);
  EXPECT_EQ(tv->get("max-restarts")->origin, "TRAINVISOR_MAX_RESTARTS");
  auto pet = parse({}, Environment{{"PET_MAX_RESTARTS", "7"}});
  EXPECT_EQ(*pet->get_int("max-restarts"), 7);
  EXPECT_EQ(pet->get("max-restarts")->origin, "PET_MAX_RESTARTS");
  auto def = parse({});
  EXPECT_EQ(*def->get_int("max-restarts"), 3);
  EXPECT_EQ(def->get("max-restarts")->origin, "default");
}

TEST(Options, FlagsFromTheEnvironmentAreBooleans) {
  EXPECT_TRUE(parse({}, Environment{{"TRAINVISOR_STANDALONE", "Yes"}})->flag("standalone"));
  EXPECT_FALSE(parse({}, Environment{{"TRAINVISOR_STANDALONE", "off"}})->flag("standalone"));
  EXPECT_TRUE(parse({"-m", "pkg"})->flag("module"));
  auto r = parse({"--standalone=1"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code(), 64);  // a flag takes no value on the command line
}

TEST(Options, WordsAreTakenBesideTheRangeAndTextIsNotChecked) {
  auto r = parse({"--nproc-per-node", "auto", "--path", "any thing", "cmd", "--log-format", "x"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->get("nproc-per-node")->value, "auto");
  EXPECT_EQ(r->positional, (std::vector<std::string>{"cmd", "--log-format", "x"}));
}

TEST(Options, UnknownOptionsAndMissingValuesAreUsageErrors) {
  EXPECT_EQ(parse({"--no-such"}).error().exit_code(), 64);
  EXPECT_EQ(parse({"--max-restarts"}).error().exit_code(), 64);
}

TEST(Options, HelpAndMarkdownComeFromTheRows) {
  const std::string help = format_help(kTable, true);
  EXPECT_NE(help.find("  --max-restarts N (default 3)\n      restarts; an integer from 0 to 1000\n"
                      "      env TRAINVISOR_MAX_RESTARTS, PET_MAX_RESTARTS\n"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("  --log-format text|json (default text)"), std::string::npos) << help;
  EXPECT_NE(help.find("  -m, --module\n"), std::string::npos) << help;
  const std::string md = format_markdown(kTable, true);
  EXPECT_NE(md.find("| `--max-restarts` | N: an integer from 0 to 1000 | `3` | "
                    "`TRAINVISOR_MAX_RESTARTS`, `PET_MAX_RESTARTS` | restarts |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `--log-format` | text\\|json | `text` |"), std::string::npos) << md;
}

}  // namespace
}  // namespace tv
