// GpuEventReader (gpu_verdict.h), table by table: which GPU health events end this node (a fatal
// fault that became active: 74, its text naming the GPU and the node), which refuse the run
// (--gpu-health on without a watch: 69), and which only go on (logged once).
#include "launcher/node/gpu_verdict.h"

#include <gtest/gtest.h>

#include "common/exit_codes.h"

namespace tv {
namespace {

using Kind = GpuHealthEvent::Kind;

GpuHealthEvent event(Kind kind, bool fatal = false, bool active = true) {
  GpuHealthEvent e;
  e.kind = kind;
  e.fatal = fatal;
  e.active = active;
  e.gpu = 1;
  e.uuid = "GPU-fake-0001";
  e.xid = kind == Kind::kXid ? 79 : 0;
  e.condition = kind == Kind::kCondition ? "ecc_uncorrected" : "";
  e.message = "GPU has fallen off the bus";
  return e;
}

TEST(GpuVerdict, AFatalFaultThatBecameActiveEndsTheNodeWith74NamingTheGpuAndTheNode) {
  for (Kind kind : {Kind::kXid, Kind::kCondition}) {
    GpuEventReader reader(false, 3);
    const GpuVerdict v = reader.read(event(kind, true), 42);
    EXPECT_EQ(v.kind, GpuVerdict::Kind::kNodeFault);
    EXPECT_EQ(v.exit_code, exit_code_of(ErrorKind::kNodeFault));
    EXPECT_NE(v.summary.find("GPU 1"), std::string::npos) << v.summary;
    EXPECT_EQ(v.detail.rfind("node 3: node fault: ", 0), 0u) << v.detail;
    EXPECT_NE(v.detail.find("replaced"), std::string::npos) << v.detail;
  }
  GpuEventReader reader(false, 3);
  EXPECT_NE(reader.read(event(Kind::kCondition, true), 42).summary.find("(ecc_uncorrected)"),
            std::string::npos);
}

TEST(GpuVerdict, AFaultThatClearedOrIsNotFatalGoesOn) {
  GpuEventReader reader(true, 0);
  EXPECT_EQ(reader.read(event(Kind::kXid, true, false), 42).kind, GpuVerdict::Kind::kGoOn);
  EXPECT_EQ(reader.read(event(Kind::kXid, false), 42).kind, GpuVerdict::Kind::kGoOn);
  EXPECT_EQ(reader.read(event(Kind::kXid, false), 42).kind, GpuVerdict::Kind::kGoOn);  // again
  EXPECT_EQ(reader.read(event(Kind::kCondition, false), 42).kind, GpuVerdict::Kind::kGoOn);
}

TEST(GpuVerdict, GpusThatCannotBeWatchedRefuseTheRunOnlyWithGpuHealthOn) {
  GpuEventReader automatic(false, 0);
  EXPECT_EQ(automatic.read(event(Kind::kUnavailable), 0).kind, GpuVerdict::Kind::kGoOn);
  GpuEventReader on(true, 0);
  const GpuVerdict v = on.read(event(Kind::kUnavailable), 0);
  EXPECT_EQ(v.kind, GpuVerdict::Kind::kRefuse);
  EXPECT_EQ(v.exit_code, exit_code_of(ErrorKind::kPreflightFailed));
  EXPECT_NE(v.summary.find("--gpu-health on"), std::string::npos) << v.summary;
  EXPECT_NE(v.summary.find("fallen off the bus"), std::string::npos) << v.summary;
}

TEST(GpuVerdict, TheWatchsOwnLinesGoOn) {
  GpuEventReader reader(true, 0);
  for (Kind kind : {Kind::kWatching, Kind::kNote, Kind::kReading, Kind::kUnknown})
    EXPECT_EQ(reader.read(event(kind, true), 42).kind, GpuVerdict::Kind::kGoOn);
}

}  // namespace
}  // namespace tv
