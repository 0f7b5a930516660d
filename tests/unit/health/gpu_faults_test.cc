#include "health/gpu_faults.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "health/gpu_check.h"
#include "health/gpu_watch.h"

namespace tv {
namespace {

bool has(const std::vector<GpuCondition>& cs, const std::string& name, bool fatal) {
  return std::any_of(cs.begin(), cs.end(),
                     [&](const GpuCondition& c) { return c.name == name && c.fatal == fatal; });
}

TEST(XidInfo, HardwareFaultsAreFatal) {
  for (unsigned xid : {48u, 61u, 62u, 64u, 74u, 79u, 95u, 119u, 120u, 140u, 154u})
    EXPECT_TRUE(xid_info(xid).fatal) << xid;
  EXPECT_EQ(xid_info(79).meaning, "GPU has fallen off the bus");
}

TEST(XidInfo, ApplicationFaultsAndContainedErrorsAreNot) {
  for (unsigned xid : {13u, 31u, 43u, 45u, 63u, 92u, 94u}) EXPECT_FALSE(xid_info(xid).fatal) << xid;
}

TEST(XidInfo, AnUnknownXidIsNotFatalAndSaysSo) {
  const XidInfo x = xid_info(4242);
  EXPECT_FALSE(x.fatal);
  EXPECT_NE(x.meaning.find("not in trainvisor's table"), std::string::npos);
}

TEST(TrainingConditions, LostAndFailedRemapAreFatal) {
  GpuReading r;
  r.lost = true;
  r.remap_failed = true;
  const auto cs = training_conditions(r, GpuReading{});
  EXPECT_TRUE(has(cs, "lost", true));
  EXPECT_TRUE(has(cs, "remap_failed", true));
}

TEST(TrainingConditions, EccCountsOnlyWhenItGrewSinceTheStart) {
  GpuReading base;
  base.ecc_uncorrected = 2;
  GpuReading same = base;
  EXPECT_TRUE(training_conditions(same, base).empty());
  GpuReading more = base;
  more.ecc_uncorrected = 3;
  EXPECT_TRUE(has(training_conditions(more, base), "ecc_uncorrected", false));
}

TEST(TrainingConditions, SlowdownsButNotThePowerCap) {
  GpuReading r;
  r.clock_event_reasons = 0x4 | 0x40;  // SW power cap, HW thermal
  const auto cs = training_conditions(r, GpuReading{});
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].name, "hw_thermal");
  EXPECT_FALSE(cs[0].fatal);
}

TEST(PreflightFaults, AnyUncorrectableErrorOrPendingRepairFails) {
  EXPECT_TRUE(preflight_faults(GpuReading{}).empty());
  GpuReading ecc;
  ecc.ecc_uncorrected = 1;
  EXPECT_TRUE(has(preflight_faults(ecc), "ecc_uncorrected", true));
  GpuReading pending;
  pending.remap_pending = true;
  EXPECT_TRUE(has(preflight_faults(pending), "remap_pending", true));
  GpuReading failed;
  failed.remap_failed = true;
  EXPECT_TRUE(has(preflight_faults(failed), "remap_failed", true));
  GpuReading slow;
  slow.clock_event_reasons = 0x40;  // a slowdown alone does not fail a preflight
  EXPECT_TRUE(preflight_faults(slow).empty());
}

TEST(VisibleGpus, FollowsCudaVisibleDevices) {
  const std::vector<std::string> uuids{"GPU-aaaa", "GPU-bbbb", "GPU-cccc"};
  EXPECT_EQ(visible_gpus(std::nullopt, uuids), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(visible_gpus(std::string("2,0"), uuids), (std::vector<unsigned>{2, 0}));
  EXPECT_EQ(visible_gpus(std::string("GPU-bb"), uuids), (std::vector<unsigned>{1}));
  EXPECT_TRUE(visible_gpus(std::string(""), uuids).empty());
  // CUDA stops at the first entry that names no GPU.
  EXPECT_EQ(visible_gpus(std::string("1,7,2"), uuids), (std::vector<unsigned>{1}));
  EXPECT_EQ(visible_gpus(std::string("MIG-x,0"), uuids), (std::vector<unsigned>{0}));
}

TEST(Snapshot, RoundTripsThroughJson) {
  GpuHealthSnapshot s;
  s.loaded = true;
  s.driver_version = "550.1";
  s.gpus.push_back({3, "GPU-x", "00000000:04:00.0", "H200"});
  GpuReading r;
  r.ecc_uncorrected = 5;
  r.remap_failed = true;
  s.readings.push_back(r);
  const auto back = snapshot_from_json(snapshot_to_json(s));
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].uuid, "GPU-x");
  EXPECT_EQ(back.readings[0].ecc_uncorrected, 5u);
  EXPECT_EQ(back.readings[0].remap_failed, true);
  EXPECT_FALSE(back.readings[0].remap_pending.has_value());
  EXPECT_EQ(describe_gpu(back.gpus[0]), "GPU 3 (GPU-x, PCI 00000000:04:00.0, H200)");
}

// The start banner takes its GPUs from the preflight's gpu-health check (no second query).
TEST(Snapshot, ThePreflightsReadingComesBackFromItsReport) {
  GpuHealthSnapshot s;
  s.loaded = true;
  s.gpus.push_back({0, "GPU-8e3b2c1d-aaaa-bbbb-cccc-0123456789ab", "00000000:18:00.0", "H200"});
  s.readings.emplace_back();
  PreflightReport report;
  report.checks.push_back({"gpu", Outcome::kSkip, "no driver", nullptr});
  report.checks.push_back(gpu_health_check(s, true));
  const auto back = gpu_health_of(report);
  EXPECT_TRUE(back.loaded);
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].uuid, "GPU-8e3b2c1d-aaaa-bbbb-cccc-0123456789ab");
  EXPECT_EQ(back.gpus[0].pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(back.gpus[0].name, "H200");
}

TEST(Snapshot, AFailedQueryOrNoCheckIsNoGpuAndSaysWhy) {
  PreflightReport hung;  // the shape of preflight.cc's failed_query
  const std::string why = "trainvisor __query gpu-health hung: killed after 60 s";
  hung.checks.push_back({"gpu-health", Outcome::kFail, why, {{"error", why}}});
  const auto from_hung = gpu_health_of(hung);
  EXPECT_FALSE(from_hung.loaded);
  EXPECT_TRUE(from_hung.gpus.empty());
  EXPECT_EQ(from_hung.error, why);
  const auto from_none = gpu_health_of(PreflightReport{});
  EXPECT_FALSE(from_none.loaded);
  EXPECT_EQ(from_none.error, "the preflight read no GPU health");
}

}  // namespace
}  // namespace tv
