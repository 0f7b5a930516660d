// keep_master_port_apart: the workers' MASTER_PORT is never a port trainvisor listens on.
#include "launcher/plan/master_port.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

Topology with_port(int port, const std::string& origin) {
  Topology t;
  t.master_port = port;
  t.origin["master_port"] = origin;
  return t;
}

const OwnPort kEndpoint{29400, "the rendezvous coordinator's port", "--rdzv-endpoint", false};

TEST(MasterPort, TheOperatorsPortOnTheEndpointBecomesAFreshPortAtGenerationZero) {
  Topology t = with_port(29400, "PET_MASTER_PORT");
  ASSERT_TRUE(keep_master_port_apart(t, {kEndpoint}).ok());
  EXPECT_EQ(t.master_port, 0);
  EXPECT_NE(t.origin["master_port"].find("29400 from PET_MASTER_PORT is the rendezvous "
                                         "coordinator's port, from --rdzv-endpoint"),
            std::string::npos)
      << t.origin["master_port"];
}

TEST(MasterPort, AnyOtherPortStaysAsGiven) {
  Topology t = with_port(23456, "env MASTER_PORT");
  const OwnPort off{0, "the metrics server's port", "default", false};
  ASSERT_TRUE(keep_master_port_apart(t, {kEndpoint, off}).ok());
  EXPECT_EQ(t.master_port, 23456);
  EXPECT_EQ(t.origin["master_port"], "env MASTER_PORT");
}

TEST(MasterPort, AnExplicitMasterPortOnTheEndpointsPortIsTorchrunsMeaningAFreshOne) {
  // torchrun --master-port P --rdzv-endpoint H:P with c10d never gives P to the workers.
  Topology t = with_port(29400, "--master-port");
  ASSERT_TRUE(keep_master_port_apart(t, {kEndpoint}).ok());
  EXPECT_EQ(t.master_port, 0);
}

TEST(MasterPort, OnePortNamedForTwoThingsByTrainvisorsOwnOptionsIsRefused) {
  for (const char* from : {"--master-port", "TRAINVISOR_MASTER_PORT"}) {
    Topology t = with_port(9400, from);
    const OwnPort metrics{9400, "the metrics server's port", "--metrics-port", true};
    auto s = keep_master_port_apart(t, {kEndpoint, metrics});
    ASSERT_FALSE(s.ok()) << from;
    EXPECT_EQ(s.error().exit_code, 78);
    EXPECT_EQ(s.error().message,
              std::string(from) +
                  "=\"9400\" is the metrics server's port (--metrics-port): expected another "
                  "port: rank 0's worker listens on MASTER_PORT, trainvisor on 9400");
  }
}

}  // namespace
}  // namespace tv
