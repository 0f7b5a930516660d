// first_free_attempt: a container's generation 0 writes past the attempts already in --log-dir.
#include "launcher/node/attempt_number.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(AttemptNumber, AnEmptyOrForeignDirectoryStartsAtZero) {
  EXPECT_EQ(first_free_attempt({}), 0);
  EXPECT_EQ(first_free_attempt({"stacks.txt", "trainvisor.pid", ".trainvisor"}), 0);
}

TEST(AttemptNumber, OnePastTheHighestAttemptInNumberOrder) {
  EXPECT_EQ(first_free_attempt({"attempt_0"}), 1);
  EXPECT_EQ(first_free_attempt({"attempt_0", "attempt_10", "attempt_9", "stacks.txt"}), 11);
}

TEST(AttemptNumber, NamesThatAreNotExactlyAttemptAndDigitsAreIgnored) {
  EXPECT_EQ(first_free_attempt({"attempt_", "attempt_x", "attempt_3.old", "attempt_-1",
                                "attempt_+4", "my_attempt_7", "attempt_1234567890"}),
            0);
}

}  // namespace
}  // namespace tv
