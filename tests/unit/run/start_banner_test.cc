// The start banner's items (launcher/run/start_banner.h): each value with where it came from; the
// GPUs from an NVML reading (the preflight's or a query child's), none, or unknown with the reason.
#include "launcher/run/start_banner.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

using State = BannerGpus::State;

GpuHealthSnapshot fake_nvml(int n) {
  GpuHealthSnapshot s;
  s.loaded = true;
  for (int i = 0; i < n; ++i)
    s.gpus.push_back({i, "GPU-3f1a2b4c-0000-1111-2222-33334444555" + std::to_string(i),
                      "00000000:1" + std::to_string(i) + ":00.0", "NVIDIA H200"});
  s.readings.resize(static_cast<std::size_t>(n));
  return s;
}

const GpuVisibility kTwoDevices{2, "2 visible GPUs (2 devices in /dev/nvidia*)"};
const GpuVisibility kNoDevice{0, "no NVIDIA GPU device (/dev/nvidia*, /proc/driver/nvidia/gpus)"};

TEST(StartBanner, OneItemPerLineWithOrigins) {
  BannerFacts f;
  f.host = "algo-2";
  f.topology.platform = Platform::kSageMaker;
  f.topology.job_id = "sm-job";
  f.topology.nnodes = 2;
  f.topology.node_rank = 1;
  f.topology.nproc_per_node = 4;
  f.topology.master_addr = "algo-1";
  f.topology.origin = {{"node_rank", "file rc.json (current_host)"}, {"nnodes", "--nnodes"}};
  f.gpus = banner_gpus(std::nullopt, "", kNoDevice, 4);
  f.command = "/isaac-sim/python.sh -u run_train.py";
  f.interpreter = "/isaac-sim/python.sh (from Isaac Sim's)";
  f.torch = "2.7.0+cu128";
  f.resume = "nothing (no --checkpoint-dir)";
  const auto items = banner_items(f);
  std::vector<std::string> names;
  for (const auto& item : items) names.push_back(item.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"host", "platform", "node rank", "nodes", "master", "workers",
                                      "gpus", "command", "interpreter", "torch", "resume"}));
  EXPECT_EQ(items[2].text, "1 (from file rc.json (current_host))");
  EXPECT_EQ(items[3].text, "2 (from --nnodes)");
  EXPECT_EQ(items[1].text, "sagemaker, job sm-job");
  EXPECT_EQ(items[5].text, "4 per node, world 8");
  // Only the gpus item carries extra JSON members.
  for (const auto& item : items) EXPECT_EQ(item.fields.is_object(), item.name == "gpus");
}

TEST(StartBanner, NoInterpreterForACommandAsGiven) {
  BannerFacts f;
  f.command = "/bin/true";
  f.resume = "nothing (--resume none)";
  for (const auto& item : banner_items(f)) {
    EXPECT_NE(item.name, "interpreter");
    EXPECT_NE(item.name, "torch");
  }
}

TEST(BannerGpus, ListsEachWorkersGpuAsNvidiaSmiNamesIt) {
  const auto g = banner_gpus(Result<GpuHealthSnapshot>(fake_nvml(2)), "NVML, read in the preflight",
                             kTwoDevices, 2);
  ASSERT_EQ(g.state, State::kListed);
  EXPECT_EQ(
      gpus_text(g),
      "GPU 0: NVIDIA H200 (UUID: GPU-3f1a2b4c-0000-1111-2222-333344445550, PCI "
      "00000000:10:00.0); GPU 1: NVIDIA H200 (UUID: GPU-3f1a2b4c-0000-1111-2222-333344445551, "
      "PCI 00000000:11:00.0) (from NVML, read in the preflight; device nodes: 2 visible GPUs "
      "(2 devices in /dev/nvidia*))");
  const auto j = gpus_json(g);
  EXPECT_EQ(j["gpus_state"], "listed");
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][1], (nlohmann::json{{"index", 1},
                                          {"name", "NVIDIA H200"},
                                          {"uuid", "GPU-3f1a2b4c-0000-1111-2222-333344445551"},
                                          {"pci_bus_id", "00000000:11:00.0"}}));
}

TEST(BannerGpus, OnlyTheWorkersGpusAndSaysWhatIsLeftOrMissing) {
  auto snapshot = fake_nvml(4);
  snapshot.gpus[0].index = 2;  // CUDA_VISIBLE_DEVICES=2,...: NVML's index, in CUDA's order
  const auto fewer = banner_gpus(Result<GpuHealthSnapshot>(snapshot), "q", kTwoDevices, 1);
  ASSERT_EQ(fewer.gpus.size(), 1u);
  EXPECT_EQ(fewer.gpus[0].index, 2);
  EXPECT_EQ(fewer.unused, 3);
  EXPECT_NE(gpus_text(fewer).find("; 3 more visible GPUs not used)"), std::string::npos);
  const auto more = banner_gpus(Result<GpuHealthSnapshot>(fake_nvml(1)), "q", kTwoDevices, 2);
  EXPECT_EQ(more.missing, 1);
  EXPECT_NE(gpus_text(more).find("; only 1 GPU for 2 workers)"), std::string::npos);
}

TEST(BannerGpus, NoneWhereTheContainerHasNoGpuDevice) {
  GpuHealthSnapshot no_nvml;
  no_nvml.error = "libnvidia-ml.so.1 could not be loaded (not found)";
  for (const auto& g : {banner_gpus(std::nullopt, "", kNoDevice, 2),
                        banner_gpus(Result<GpuHealthSnapshot>(no_nvml), "q", kNoDevice, 2)}) {
    EXPECT_EQ(g.state, State::kNone);
    EXPECT_EQ(gpus_text(g), "none (no NVIDIA GPU device (/dev/nvidia*, /proc/driver/nvidia/gpus))");
    EXPECT_EQ(gpus_json(g)["gpus"], nlohmann::json::array());
    EXPECT_EQ(gpus_json(g)["gpus_state"], "none");
  }
}

TEST(BannerGpus, UnknownWithTheReasonWhenTheDevicesAreThereButNotRead) {
  const auto hung =
      banner_gpus(Result<GpuHealthSnapshot>(Error{
                      ErrorKind::kFailed, "trainvisor __query gpu-health hung: killed after 1 s"}),
                  "q", kTwoDevices, 2);
  EXPECT_EQ(hung.state, State::kUnknown);
  EXPECT_EQ(gpus_text(hung),
            "unknown (trainvisor __query gpu-health hung: killed after 1 s; device nodes: 2 "
            "visible GPUs (2 devices in /dev/nvidia*))");
  EXPECT_TRUE(gpus_json(hung)["gpus"].is_null());
  GpuHealthSnapshot no_nvml;
  no_nvml.error = "libnvidia-ml.so.1 could not be loaded (not found)";
  EXPECT_EQ(gpus_text(banner_gpus(Result<GpuHealthSnapshot>(no_nvml), "q", kTwoDevices, 2)),
            "unknown (NVML: libnvidia-ml.so.1 could not be loaded (not found); device nodes: 2 "
            "visible GPUs (2 devices in /dev/nvidia*))");
}

}  // namespace
}  // namespace tv
