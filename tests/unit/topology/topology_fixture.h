// Shared fixture of the topology tests: an environment, an in-memory file system, a fixed GPU
// count and a fixed own address, resolved through the real option parser.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/exit_codes.h"
#include "launcher/topology/topology.h"
#include "launcher/topology/topology_options.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/topology/fixed_inputs.h"

namespace tv::testing {

inline std::string topology_data(const std::string& name) {
  std::ifstream in(std::string(TV_TESTDATA) + "/topology/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TopologyTest : public ::testing::Test {
 protected:
  static constexpr const char* kRc = "/opt/ml/input/config/resourceconfig.json";

  Result<Topology> resolve() {
    // A value its option row refuses is refused here, as run refuses it (exit 78, its origin).
    auto opts = parse_options(topology_option_specs(), args, env, ParseMode{false, true});
    if (!opts) return opts.error();
    FixedGpuCounter gpus(gpu_count, std::to_string(gpu_count) + " fake GPUs");
    FixedHostAddress self(own_address);
    return resolve_topology(*opts, env, fs, gpus, self);
  }
  Topology ok() {
    auto t = resolve();
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
    return t.ok() ? *t : Topology{};
  }
  // The refusal's message; checks exit 78.
  std::string refused() {
    auto t = resolve();
    EXPECT_FALSE(t.ok()) << "resolved to platform " << (t.ok() ? platform_name(t->platform) : "");
    if (t.ok()) return "";
    EXPECT_EQ(t.error().exit_code(), exit_code_of(ErrorKind::kConfig));
    return t.error().message;
  }
  void set(const std::string& k, const std::string& v) { env.set(k, v); }

  Environment env;
  FakeFileSystem fs;
  std::vector<std::string> args;
  int gpu_count = 0;
  std::string own_address = "10.0.0.9";
};

}  // namespace tv::testing
