#include "launcher/topology/slurm_hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/exit_codes.h"

namespace tv {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> expand(const std::string& s, size_t cap = 100000) {
  auto r = expand_hostlist(s, "SLURM_JOB_NODELIST", cap);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : std::vector<std::string>{};
}

std::string refusal(const std::string& s, size_t cap = 100000) {
  auto r = expand_hostlist(s, "SLURM_JOB_NODELIST", cap);
  EXPECT_FALSE(r.ok()) << s;
  if (r.ok()) return "";
  EXPECT_EQ(r.error().exit_code(), exit_code_of(ErrorKind::kConfig));
  EXPECT_THAT(r.error().message, HasSubstr("SLURM_JOB_NODELIST=\"" + s + "\""));
  return r.error().message;
}

TEST(SlurmHostlist, PlainNames) {
  EXPECT_THAT(expand("node1"), ElementsAre("node1"));
  EXPECT_THAT(expand("a,b,c"), ElementsAre("a", "b", "c"));
}

TEST(SlurmHostlist, SpecExampleWithPaddingAndTrailingHost) {
  EXPECT_THAT(expand("gpu-[001-004,007],head"),
              ElementsAre("gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-007", "head"));
}

TEST(SlurmHostlist, PaddingFollowsTheLowerBound) {
  EXPECT_THAT(expand("n[08-11]"), ElementsAre("n08", "n09", "n10", "n11"));
  EXPECT_THAT(expand("n[9-11]"), ElementsAre("n9", "n10", "n11"));
  EXPECT_THAT(expand("n[0-2]"), ElementsAre("n0", "n1", "n2"));
  EXPECT_THAT(expand("n[098-101]"), ElementsAre("n098", "n099", "n100", "n101"));
}

TEST(SlurmHostlist, SeveralGroupsMultiplyLastFastest) {
  EXPECT_THAT(expand("r[1-2]n[01-02]"), ElementsAre("r1n01", "r1n02", "r2n01", "r2n02"));
}

TEST(SlurmHostlist, SuffixAfterGroupAndSingleNumbers) {
  EXPECT_THAT(expand("gpu[1,3]-ib,x[5]"), ElementsAre("gpu1-ib", "gpu3-ib", "x5"));
}

TEST(SlurmHostlist, CommasInsideBracketsAreNotItemSeparators) {
  EXPECT_THAT(expand("a[1,2],b[3-4,6]"), ElementsAre("a1", "a2", "b3", "b4", "b6"));
}

TEST(SlurmHostlist, ExactlyTheCapIsAccepted) {
  EXPECT_EQ(expand("n[1-100000]").size(), 100000u);
  EXPECT_EQ(expand("n[1-10]", 10).size(), 10u);
}

TEST(SlurmHostlist, HugeRangesAreRefusedNotExpanded) {
  EXPECT_THAT(refusal("n[0-999999999]"), HasSubstr("more than 100000 hosts"));
  EXPECT_THAT(refusal("n[0-999999999999999999]"), HasSubstr("more than"));
  EXPECT_THAT(refusal("n[1-11]", 10), HasSubstr("more than 10 hosts"));
}

TEST(SlurmHostlist, ProductOverTheCapIsRefused) {
  EXPECT_THAT(refusal("a[0-999]b[0-999]"), HasSubstr("more than 100000 hosts"));
  EXPECT_THAT(refusal("a[0-99999],b[0-1]"), HasSubstr("more than 100000 hosts"));
  EXPECT_THAT(refusal("a[0-9][0-9][0-9][0-9][0-9][0-9]"), HasSubstr("more than"));
}

TEST(SlurmHostlist, ManyRangesInOneGroupCountTogether) {
  EXPECT_THAT(refusal("a[0-60000,0-60000]"), HasSubstr("more than 100000 hosts"));
}

TEST(SlurmHostlist, MalformedListsAreRefused) {
  EXPECT_THAT(refusal(""), HasSubstr("empty"));
  EXPECT_THAT(refusal("a[1-2"), HasSubstr("unmatched '['"));
  EXPECT_THAT(refusal("a1-2]"), HasSubstr("unmatched ']'"));
  EXPECT_THAT(refusal("a]1[,b"), HasSubstr("unmatched ']'"));
  EXPECT_THAT(refusal("a[1],b[2"), HasSubstr("unmatched '['"));
  EXPECT_THAT(refusal("a[[1]]"), HasSubstr("nested"));
  EXPECT_THAT(refusal("a[]"), HasSubstr("bad range"));
  EXPECT_THAT(refusal("a[x-2]"), HasSubstr("bad range"));
  EXPECT_THAT(refusal("a[1-]"), HasSubstr("bad range"));
  EXPECT_THAT(refusal("a[-1]"), HasSubstr("bad range"));
  EXPECT_THAT(refusal("a[5-3]"), HasSubstr("descending"));
  EXPECT_THAT(refusal("a,,b"), HasSubstr("empty host name"));
  EXPECT_THAT(refusal("a,"), HasSubstr("empty host name"));
  EXPECT_THAT(refusal("a b"), HasSubstr("white space"));
  EXPECT_THAT(refusal("a[1-2:2]"), HasSubstr("bad range"));
}

TEST(SlurmHostlist, OverlongHostNamesAreRefused) {
  EXPECT_THAT(refusal(std::string(300, 'a')), HasSubstr("longer than 255"));
  EXPECT_THAT(refusal(std::string(250, 'a') + "[000001-000002]"), HasSubstr("longer than 255"));
  EXPECT_EQ(expand(std::string(255, 'a')).size(), 1u);
}

TEST(SlurmHostlist, MessageSaysWhatWasExpected) {
  EXPECT_THAT(refusal("a[5-3]"), HasSubstr("expected a Slurm hostlist"));
}

}  // namespace
}  // namespace tv
