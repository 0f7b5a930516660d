// `trainvisor report --ledger DIR` (launcher/observability/ledger_find.h): the one ledger in a
// directory, or one error naming the directory, what is there and what was expected.
#include "launcher/observability/ledger_find.h"

#include <gtest/gtest.h>

#include "common/exit_codes.h"
#include "launcher/observability/ledger_file.h"

namespace tv {
namespace {

TEST(LedgerFind, TheOneLedgerInADirectory) {
  const std::string name = ledger_file_name("job-1");
  auto found = ledger_in_directory(
      "/ckpt", {".", "..", "agent_10.pt", name, name + ".corrupt", name + ".tmp.x1Yz"});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, "/ckpt/" + name);
  EXPECT_EQ(*ledger_in_directory("/ckpt/", {name}), "/ckpt/" + name);
}

TEST(LedgerFind, NoneOrSeveralIsOneErrorNamingTheDirectory) {
  auto none = ledger_in_directory("/ckpt", {"agent_10.pt", ".trainvisor-ledger-xyz.json"});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().exit_code(), exit_code_of(ErrorKind::kConfig));
  EXPECT_EQ(none.error().message,
            "/ckpt: a directory with no job ledger; expected exactly one job ledger "
            "(.trainvisor-ledger-<16 hex digits>.json, which `trainvisor run` writes in the "
            "checkpoint dir of a job with an id)");
  const std::string a = ledger_file_name("a"), b = ledger_file_name("b");
  auto several = ledger_in_directory("/ckpt", {a, b});
  ASSERT_FALSE(several);
  EXPECT_EQ(several.error().exit_code(), exit_code_of(ErrorKind::kConfig));
  EXPECT_NE(several.error().message.find("/ckpt: a directory with 2 job ledgers (" + a + ", " + b +
                                         "); expected exactly one"),
            std::string::npos)
      << several.error().message;
  EXPECT_TRUE(several.error().message.ends_with(": name one with --ledger FILE"));
}

TEST(LedgerFind, OnlyTheLedgersOwnNames) {
  EXPECT_TRUE(is_ledger_name(ledger_file_name("any job")));
  EXPECT_FALSE(is_ledger_name(".trainvisor-ledger-0123456789ABCDEF.json"));
  EXPECT_FALSE(is_ledger_name(".trainvisor-ledger-0123456789abcdef.json.corrupt"));
  EXPECT_FALSE(is_ledger_name("trainvisor-ledger-0123456789abcdef.json"));
}

}  // namespace
}  // namespace tv
