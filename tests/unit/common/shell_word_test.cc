#include "common/shell_word.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(ShellWord, SafeWordsStayAsTheyAre) {
  EXPECT_EQ(shell_word("--checkpoint"), "--checkpoint");
  EXPECT_EQ(shell_word("/ckpt/agent_500.pt"), "/ckpt/agent_500.pt");
  EXPECT_EQ(shell_word("a=b,c:d@e%f+g"), "a=b,c:d@e%f+g");
}

TEST(ShellWord, OthersAreSingleQuoted) {
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_word("two words"), "'two words'");
  EXPECT_EQ(shell_word("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word("caf\xc3\xa9"), "'caf\xc3\xa9'");  // not ASCII: quoted, kept
}

}  // namespace
}  // namespace tv
