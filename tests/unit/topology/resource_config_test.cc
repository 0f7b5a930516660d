#include "launcher/topology/resource_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/exit_codes.h"

namespace tv {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string data(const std::string& name) {
  std::ifstream in(std::string(TV_TESTDATA) + "/topology/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

ResourceConfig parse_ok(const std::string& text) {
  auto r = parse_resource_config(text, "rc.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : ResourceConfig{};
}

std::string refusal(const std::string& text) {
  auto r = parse_resource_config(text, "/x/rc.json");
  EXPECT_FALSE(r.ok()) << text;
  if (r.ok()) return "";
  EXPECT_EQ(r.error().exit_code(), exit_code_of(ErrorKind::kConfig));
  EXPECT_THAT(r.error().message, HasSubstr("file /x/rc.json"));
  return r.error().message;
}

TEST(ResourceConfig, PlainFile) {
  auto rc = parse_ok(data("resourceconfig_plain.json"));
  EXPECT_EQ(rc.current_host, "algo-2");
  EXPECT_THAT(rc.training_hosts, ElementsAre("algo-1", "algo-2", "algo-3", "algo-4"));
  EXPECT_EQ(rc.rank, 1);
  EXPECT_EQ(rc.network_interface_name, "eth0");
  ASSERT_EQ(rc.instance_groups.size(), 1u);
  EXPECT_EQ(rc.instance_groups[0].instance_type, "ml.p4d.24xlarge");
}

TEST(ResourceConfig, MinimalFileWithoutGroupsOrInterface) {
  auto rc = parse_ok(data("resourceconfig_minimal.json"));
  EXPECT_THAT(rc.training_hosts, ElementsAre("algo-1"));
  EXPECT_EQ(rc.rank, 0);
  EXPECT_EQ(rc.network_interface_name, "");
}

TEST(ResourceConfig, HostsAreSortedLexicographicallyLikeSageMaker) {
  auto rc = parse_ok(data("resourceconfig_ten_hosts.json"));
  EXPECT_EQ(rc.training_hosts[0], "algo-1");
  EXPECT_EQ(rc.training_hosts[1], "algo-10");
  EXPECT_EQ(rc.training_hosts[2], "algo-2");
  EXPECT_EQ(rc.rank, 1);
}

TEST(ResourceConfig, UnsortedHostsAreSortedSoEveryNodeAgrees) {
  auto rc = parse_ok(R"({"current_host":"b","hosts":["c","a","b"]})");
  EXPECT_THAT(rc.training_hosts, ElementsAre("a", "b", "c"));
  EXPECT_EQ(rc.rank, 1);
}

TEST(ResourceConfig, HeterogeneousClusterUsesEveryGroup) {
  auto rc = parse_ok(data("resourceconfig_hetero.json"));
  EXPECT_THAT(rc.training_hosts, ElementsAre("algo-1", "algo-2", "algo-3"));
  EXPECT_EQ(rc.rank, 2);
  EXPECT_EQ(rc.current_group_name, "g5");
  EXPECT_EQ(rc.instance_groups.size(), 2u);
}

TEST(ResourceConfig, GroupHostsMissingFromTopLevelHostsStillCount) {
  auto rc = parse_ok(R"({"current_host":"algo-3","current_group_name":"b","hosts":["algo-3"],
    "instance_groups":[{"instance_group_name":"a","hosts":["algo-1","algo-2"]},
                       {"instance_group_name":"b","hosts":["algo-3"]}]})");
  EXPECT_THAT(rc.training_hosts, ElementsAre("algo-1", "algo-2", "algo-3"));
  EXPECT_EQ(rc.rank, 2);
}

TEST(ResourceConfig, GroupsWithoutTopLevelHosts) {
  auto rc = parse_ok(R"({"current_host":"h2","instance_groups":[
    {"instance_group_name":"a","hosts":["h2","h1"]}]})");
  EXPECT_THAT(rc.training_hosts, ElementsAre("h1", "h2"));
}

TEST(ResourceConfig, MalformedJsonIsRefused) {
  EXPECT_THAT(refusal(data("resourceconfig_malformed.json")), HasSubstr("not valid JSON"));
  EXPECT_THAT(refusal(""), HasSubstr("not valid JSON"));
  EXPECT_THAT(refusal("[1,2]"), HasSubstr("expected a JSON object"));
  // nlohmann throws out_of_range, not parse_error, for a number too large for a double (found by
  // fuzz_resource_config).
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a"],"x":1e99999})"),
              HasSubstr("not valid JSON"));
}

TEST(ResourceConfig, CurrentHostNotInHostsIsRefused) {
  std::string m = refusal(data("resourceconfig_stranger.json"));
  EXPECT_THAT(m, HasSubstr("current_host \"algo-9\" is not in hosts"));
  EXPECT_THAT(m, HasSubstr("algo-1"));
}

TEST(ResourceConfig, FieldTypesAreChecked) {
  EXPECT_THAT(refusal(R"({"hosts":["a"]})"), HasSubstr("\"current_host\" is missing"));
  EXPECT_THAT(refusal(R"({"current_host":5,"hosts":["a"]})"), HasSubstr("\"current_host\" is 5"));
  EXPECT_THAT(refusal(R"({"current_host":"","hosts":["a"]})"), HasSubstr("non-empty string"));
  EXPECT_THAT(refusal(R"({"current_host":"a"})"), HasSubstr("\"hosts\" is missing"));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":"a"})"), HasSubstr("\"hosts\" is \"a\""));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a",1]})"), HasSubstr("holds 1"));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a","a"]})"), HasSubstr("twice"));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":[]})"), HasSubstr("is empty"));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a"],"network_interface_name":3})"),
              HasSubstr("network_interface_name"));
}

TEST(ResourceConfig, InstanceGroupsAreChecked) {
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a"],"instance_groups":{}})"),
              HasSubstr("\"instance_groups\" is {}"));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a"],"instance_groups":[3]})"),
              HasSubstr("instance_groups[0] is 3"));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a"],"instance_groups":[{"hosts":["a"]}]})"),
              HasSubstr("instance_groups[0].\"instance_group_name\" is missing"));
  EXPECT_THAT(
      refusal(
          R"({"current_host":"a","hosts":["a"],"instance_groups":[{"instance_group_name":"g"}]})"),
      HasSubstr("instance_groups[0].\"hosts\" is missing"));
}

TEST(ResourceConfig, CurrentGroupMustExistAndHoldCurrentHost) {
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a"],"current_group_name":"x",
      "instance_groups":[{"instance_group_name":"g","hosts":["a"]}]})"),
              HasSubstr("current_group_name \"x\" is not in instance_groups"));
  EXPECT_THAT(refusal(R"({"current_host":"a","hosts":["a","b"],"current_group_name":"g",
      "instance_groups":[{"instance_group_name":"g","hosts":["b"]}]})"),
              HasSubstr("not in the hosts of its group \"g\""));
}

TEST(ResourceConfig, OversizedFileIsRefusedBeforeParsing) {
  EXPECT_THAT(refusal(std::string(kMaxResourceConfigBytes + 1, ' ')), HasSubstr("bytes"));
}

// The one rule for SageMaker's other files (issue 53, item 7): `train`'s hyperparameters and code
// move with the resource config.
TEST(ResourceConfig, SageMakersLayoutFollowsTheResourceConfig) {
  const SageMakerLayout def = sagemaker_layout("/opt/ml/input/config/resourceconfig.json");
  EXPECT_EQ(def.hyperparameters, "/opt/ml/input/config/hyperparameters.json");
  EXPECT_EQ(def.code_dir, "/opt/ml/code");
  const SageMakerLayout moved = sagemaker_layout("/tmp/job/input/config/resourceconfig.json");
  EXPECT_EQ(moved.hyperparameters, "/tmp/job/input/config/hyperparameters.json");
  EXPECT_EQ(moved.code_dir, "/tmp/job/code");
  EXPECT_EQ(sagemaker_layout("rc.json").hyperparameters, "./hyperparameters.json");
}

}  // namespace
}  // namespace tv
