// The start banner's items (cli/start_banner.h): each value with where it came from.
#include "cli/start_banner.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(StartBanner, OneItemPerLineWithOrigins) {
  BannerFacts f;
  f.host = "algo-2";
  f.topology.platform = "sagemaker";
  f.topology.job_id = "sm-job";
  f.topology.nnodes = 2;
  f.topology.node_rank = 1;
  f.topology.nproc_per_node = 4;
  f.topology.master_addr = "algo-1";
  f.topology.origin = {{"node_rank", "file rc.json (current_host)"}, {"nnodes", "--nnodes"}};
  f.gpus = "4 visible GPUs (4 devices in /dev/nvidia*)";
  f.command = "/isaac-sim/python.sh -u run_train.py";
  f.interpreter = "/isaac-sim/python.sh (from Isaac Sim's)";
  f.torch = "2.7.0+cu128";
  f.resume = "nothing (no --checkpoint-dir)";
  const auto items = banner_items(f);
  std::vector<std::string> names;
  for (const auto& [k, v] : items) names.push_back(k);
  EXPECT_EQ(names,
            (std::vector<std::string>{"host", "platform", "node rank", "nodes", "master", "workers",
                                      "gpus", "command", "interpreter", "torch", "resume"}));
  EXPECT_EQ(items[2].second, "1 (from file rc.json (current_host))");
  EXPECT_EQ(items[3].second, "2 (from --nnodes)");
  EXPECT_EQ(items[1].second, "sagemaker, job sm-job");
  EXPECT_EQ(items[5].second, "4 per node, world 8");
}

TEST(StartBanner, NoInterpreterForACommandAsGiven) {
  BannerFacts f;
  f.command = "/bin/true";
  f.resume = "nothing (--resume none)";
  for (const auto& [k, v] : banner_items(f)) {
    EXPECT_NE(k, "interpreter");
    EXPECT_NE(k, "torch");
  }
}

}  // namespace
}  // namespace tv
