#include "common/open_files.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(OpenFiles, RaiseTakesTheSoftLimitToTheHardOneAndSaysFromWhat) {
  const auto start = open_file_limit();
  ASSERT_GT(start.hard, 64u);
  rlimit low{static_cast<rlim_t>(64), static_cast<rlim_t>(start.hard)};
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const auto r = raise_open_file_limit();
  EXPECT_EQ(r.before.soft, 64u);
  EXPECT_EQ(r.after.soft, start.hard);
  EXPECT_EQ(open_file_limit().soft, start.hard);
  const auto again = raise_open_file_limit();  // already there: nothing to do
  EXPECT_EQ(again.before.soft, again.after.soft);
  rlimit back{static_cast<rlim_t>(start.soft), static_cast<rlim_t>(start.hard)};
  ::setrlimit(RLIMIT_NOFILE, &back);
}

}  // namespace
}  // namespace tv
