#include "launcher/plan/node_fingerprint.h"

#include <gtest/gtest.h>

#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

using testing::FakeFileSystem;

TEST(NodeFingerprint, TheDriverVersionFromTheKernelModuleLine) {
  EXPECT_EQ(driver_version_in("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar "
                              "5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0\n"),
            "550.54.15");
  EXPECT_EQ(driver_version_in("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                              "570.86.15  Release Build\n"),
            "570.86.15");
  EXPECT_EQ(driver_version_in(""), "");
}

TEST(NodeFingerprint, FactsFromTheTorchAnswerAndTheDriverFiles) {
  FakeFileSystem fs;
  fs.add_file("/proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue\n");
  fs.add_file("/proc/driver/nvidia/gpus/0000:18:00.0/information",
              "Model: \t\t NVIDIA H200\nIRQ:   17\n");
  fs.add_file("/proc/driver/nvidia/gpus/0000:2a:00.0/information", "Model: \t\t NVIDIA H200\n");
  const TorchVersion torch{2, 11, "2.11.0+cu128", "12.8", "2.26.2"};
  const Environment env{{"NCCL_PROTO", "Simple"}, {"CUDA_VISIBLE_DEVICES", "0"}, {"PATH", "/x"}};
  const auto fp = node_fingerprint(env, torch, fs, "1.2.3");
  EXPECT_EQ(fp.facts.at("trainvisor"), "1.2.3");
  EXPECT_EQ(fp.facts.at("driver"), "550.54.15");
  EXPECT_EQ(fp.facts.at("gpu"), "NVIDIA H200");
  EXPECT_EQ(fp.facts.at("torch"), "2.11.0+cu128");
  EXPECT_EQ(fp.facts.at("cuda"), "12.8");
  EXPECT_EQ(fp.facts.at("nccl"), "2.26.2");
  EXPECT_EQ(fp.vars, (std::map<std::string, std::string>{{"NCCL_PROTO", "Simple"}}));
  EXPECT_FALSE(fp.vars_hash.empty());
}

TEST(NodeFingerprint, WhatCannotBeReadIsUnknown) {
  const FakeFileSystem none;
  const auto fp = node_fingerprint({}, std::nullopt, none, "1.2.3");
  for (const char* fact : {"driver", "gpu", "torch", "cuda", "nccl"})
    EXPECT_EQ(fp.facts.at(fact), "unknown") << fact;
}

// The net plugin's files are the file system's given, never the disk's: none in the fake is
// "none" whatever this machine has in /usr/lib or /opt/amazon.
TEST(NodeFingerprint, TheNetPluginFromTheFileSystemGiven) {
  const FakeFileSystem none;
  EXPECT_EQ(node_fingerprint({}, std::nullopt, none, "1.2.3").facts.at("aws-ofi-nccl"), "none");
  FakeFileSystem fs;
  const Environment env{{"LD_LIBRARY_PATH", "/fake/a:/fake/b"}};
  fs.add_file("/fake/a/libnccl-net.so", "no version in these bytes");
  EXPECT_EQ(node_fingerprint(env, std::nullopt, fs, "1.2.3").facts.at("aws-ofi-nccl"), "unknown");
  // The first file that names a version, in NCCL's search order.
  fs.add_file("/fake/b/libnccl-net-ofi.so", "Initializing aws-ofi-nccl 1.14.0 ...");
  fs.add_file("/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", "Initializing aws-ofi-nccl 1.2.0");
  EXPECT_EQ(node_fingerprint(env, std::nullopt, fs, "1.2.3").facts.at("aws-ofi-nccl"), "1.14.0");
}

}  // namespace
}  // namespace tv
