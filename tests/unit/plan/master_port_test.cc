// The ports rule (launcher/plan/master_port.h): the ports trainvisor listens on (own_ports, table
// by table), and the workers' MASTER_PORT never one of them (keep_master_port_apart).
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
    EXPECT_EQ(s.error().exit_code(), 78);
    EXPECT_EQ(s.error().message,
              std::string(from) +
                  "=\"9400\" is the metrics server's port (--metrics-port): expected another "
                  "port: rank 0's worker listens on MASTER_PORT, trainvisor on 9400");
  }
}

TEST(OwnPorts, WhichPortsTrainvisorListensOnAndWhetherItsOwnOptionNamedThem) {
  const OptionValue rdzv_flag{"29401", "--rdzv-port"}, rdzv_var{"29401", "TRAINVISOR_RDZV_PORT"},
      rdzv_endpoint{"29400", "--rdzv-endpoint"}, metrics_flag{"9400", "--metrics-port"},
      metrics_var{"9400", "TRAINVISOR_METRICS_PORT"}, metrics_default{"0", "default"};
  struct Row {
    ListenersAsked asked;
    std::vector<std::string> want;  // "port what origin named" per port
  };
  for (const Row& r : std::initializer_list<Row>{
           {{1, 29401, rdzv_flag, 0, std::nullopt}, {}},  // one node: no coordinator
           {{2, 29401, std::nullopt, 0, std::nullopt},
            {"29401 the rendezvous coordinator's port default (master port + 1) 0"}},
           {{2, 29401, rdzv_flag, 0, std::nullopt},
            {"29401 the rendezvous coordinator's port --rdzv-port 1"}},
           {{2, 29401, rdzv_var, 0, std::nullopt},
            {"29401 the rendezvous coordinator's port TRAINVISOR_RDZV_PORT 1"}},
           {{2, 29400, rdzv_endpoint, 0, std::nullopt},  // torchrun's: not trainvisor's own
            {"29400 the rendezvous coordinator's port --rdzv-endpoint 0"}},
           {{1, 0, std::nullopt, 9400, metrics_flag},
            {"9400 the metrics server's port --metrics-port 1"}},
           {{1, 0, std::nullopt, 9400, metrics_var},
            {"9400 the metrics server's port TRAINVISOR_METRICS_PORT 1"}},
           {{1, 0, std::nullopt, 0, metrics_default},
            {"0 the metrics server's port default 0"}},  // 0: nothing listens
           {{2, 29401, std::nullopt, 9400, metrics_flag},
            {"29401 the rendezvous coordinator's port default (master port + 1) 0",
             "9400 the metrics server's port --metrics-port 1"}},
       }) {
    std::vector<std::string> got;
    for (const OwnPort& p : own_ports(r.asked))
      got.push_back(std::to_string(p.port) + " " + p.what + " " + p.origin + " " +
                    (p.named ? "1" : "0"));
    EXPECT_EQ(got, r.want) << r.asked.nnodes;
  }
}

TEST(MasterPortRule, TheMasterPortKeptOffTrainvisorsOwnPorts) {
  const OptionValue metrics_flag{"29500", "--metrics-port"};
  struct Row {
    int master_port;
    std::string master_origin;
    ListenersAsked asked;
    int want;  // the workers' MASTER_PORT; -1: refused (78)
  };
  for (const Row& r : std::initializer_list<Row>{
           {29500, "PET_MASTER_PORT", {1, 0, std::nullopt, 29500, metrics_flag}, 0},
           {29500, "--master-port", {1, 0, std::nullopt, 29500, metrics_flag}, -1},
           {29500, "TRAINVISOR_MASTER_PORT", {1, 0, std::nullopt, 29500, metrics_flag}, -1},
           {29500, "--master-port", {1, 0, std::nullopt, 9400, metrics_flag}, 29500},
           {29400, "--master-port", {2, 29400, std::nullopt, 0, std::nullopt}, 0},  // a default
           {29400, "PET_MASTER_PORT", {1, 29400, std::nullopt, 0, std::nullopt}, 29400},
       }) {
    Topology t = with_port(r.master_port, r.master_origin);
    auto s = master_port_rule(t, r.asked);
    if (r.want < 0) {
      ASSERT_FALSE(s.ok()) << r.master_origin;
      EXPECT_EQ(s.error().exit_code(), 78);
    } else {
      ASSERT_TRUE(s.ok()) << s.error().message;
      EXPECT_EQ(t.master_port, r.want) << r.master_origin << " " << r.master_port;
    }
  }
}

}  // namespace
}  // namespace tv
