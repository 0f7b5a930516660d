// Every ErrorKind with its exit code (docs/exit-codes.md): the one map, common/exit_codes.h.
#include "common/exit_codes.h"

#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <set>

#include "common/result.h"

namespace tv {
namespace {

// The contract's table. A kind added to ErrorKind without a row here fails
// EveryKindHasItsRowAndOneCode (and a kind without a case fails to compile: -Werror=switch).
const std::map<ErrorKind, int> kContract = {
    {ErrorKind::kFailed, 1},
    {ErrorKind::kUsage, 64},
    {ErrorKind::kPreflightFailed, 69},
    {ErrorKind::kOsError, 71},
    {ErrorKind::kCannotCreate, 73},
    {ErrorKind::kNodeFault, 74},
    {ErrorKind::kLost, 75},
    {ErrorKind::kConfig, 78},
    {ErrorKind::kHang, 124},
    {ErrorKind::kCannotExecute, 126},
    {ErrorKind::kNotFound, 127},
};

TEST(ExitCodes, EveryKindHasItsRowAndOneCode) {
  std::set<int> codes;
  int carried = 0;
  for (ErrorKind k : kEveryErrorKind) {
    if (k == ErrorKind::kWorkerFailed || k == ErrorKind::kStoppedBySignal) {
      ++carried;
      continue;
    }
    ASSERT_TRUE(kContract.count(k)) << "ErrorKind " << static_cast<int>(k) << " has no row";
    EXPECT_EQ(exit_code_of(k), kContract.at(k));
    EXPECT_TRUE(codes.insert(exit_code_of(k)).second) << "two kinds share " << exit_code_of(k);
  }
  EXPECT_EQ(carried, 2);
  EXPECT_EQ(codes.size(), kContract.size());
  // kEveryErrorKind lists each enumerator once: the last one's value + 1 entries.
  EXPECT_EQ(std::size(kEveryErrorKind), static_cast<size_t>(ErrorKind::kStoppedBySignal) + 1);
}

TEST(ExitCodes, CarriedCodesAreTheWorkersAndTheSignals) {
  EXPECT_EQ(exit_code_of(ErrorKind::kWorkerFailed, 3), 3);
  EXPECT_EQ(exit_code_of(ErrorKind::kStoppedBySignal, SIGTERM), 143);
  EXPECT_EQ(exit_code_of(ErrorKind::kStoppedBySignal, SIGKILL), 137);
}

TEST(ExitCodes, ANumberFromAnotherNodeIsItsKindAgain) {
  for (const auto& [kind, code] : kContract) EXPECT_EQ(kind_of_exit_code(code), kind) << code;
  const Error worker = Error::from_exit_code(3, "rank 1: exit 3");
  EXPECT_EQ(worker.kind, ErrorKind::kWorkerFailed);
  EXPECT_EQ(worker.exit_code(), 3);
  const Error killed = Error::from_exit_code(137, "rank 1: SIGKILL");
  EXPECT_EQ(killed.kind, ErrorKind::kStoppedBySignal);
  EXPECT_EQ(killed.exit_code(), 137);
  EXPECT_EQ(Error::from_exit_code(75, "lost").kind, ErrorKind::kLost);
  EXPECT_EQ(Error::from_exit_code(75, "lost").exit_code(), 75);
}

}  // namespace
}  // namespace tv
