// Every platform x every explicit topology option (docs/topology.md, "Explicit values over a
// platform"; the rule: launcher/topology/topology.cc, apply_explicit): for each cell, which source
// gives the field, or 78 naming both. Each platform is a 2-node job; an option never shrinks the
// world the platform states. The options go through run's own table and torchrun's mapping
// (--rdzv-endpoint becomes --master-addr), as run_command does, then resolve_topology.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cli/run_options.h"
#include "cli/torchrun_options.h"
#include "common/exit_codes.h"
#include "launcher/topology/topology.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/topology/fixed_inputs.h"

namespace tv {
namespace {

using ::testing::HasSubstr;

constexpr const char* kRc = "/opt/ml/input/config/resourceconfig.json";

// What each platform says on this node: its environment (and files), and the world it states.
struct PlatformSide {
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> files;
  std::string name;  // the topology's platform
  int nnodes = 0, node_rank = 0;
  std::string nnodes_var, rank_var;  // what a refusal must name (the platform's side)
};

const std::map<std::string, PlatformSide>& sides() {
  static const std::map<std::string, PlatformSide> all = {
      // A PyTorchJob's worker pod as kubeflow/training-operator v1.7+ sets it (nprocPerNode 2).
      {"kubeflow",
       {{{"PET_NNODES", "2"},
         {"PET_NODE_RANK", "1"},
         {"PET_MASTER_ADDR", "job-master-0"},
         {"PET_MASTER_PORT", "23456"},
         {"PET_NPROC_PER_NODE", "2"},
         {"MASTER_ADDR", "job-master-0"},
         {"MASTER_PORT", "23456"},
         {"RANK", "1"},
         {"WORLD_SIZE", "4"},
         {"HOSTNAME", "job-worker-0"}},
        {},
        "kubeflow",
        2,
        1,
        "env PET_NNODES",
        "env PET_NODE_RANK"}},
      {
          "sagemaker",
          {{{"TRAINING_JOB_NAME", "sm-job"}, {"SM_HOSTS", "[\"algo-1\",\"algo-2\"]"}},
           {{kRc, R"({"current_host": "algo-2", "hosts": ["algo-1", "algo-2"]})"}},
           "sagemaker",
           2,
           1,
           std::string("file ") + kRc,
           std::string("file ") + kRc},
      },
      // The main node of a 2-node multi-node parallel job (no main address: it is this node).
      {"batch",
       {{{"AWS_BATCH_JOB_ID", "job-1#0"},
         {"AWS_BATCH_JOB_NUM_NODES", "2"},
         {"AWS_BATCH_JOB_NODE_INDEX", "0"},
         {"AWS_BATCH_JOB_MAIN_NODE_INDEX", "0"}},
        {},
        "batch",
        2,
        0,
        "env AWS_BATCH_JOB_NUM_NODES",
        "AWS_BATCH_JOB_NODE_INDEX - AWS_BATCH_JOB_MAIN_NODE_INDEX"}},
      {"slurm",
       {{{"SLURM_JOB_ID", "77"},
         {"SLURM_STEP_ID", "0"},
         {"SLURM_NNODES", "2"},
         {"SLURM_NODEID", "1"},
         {"SLURM_JOB_NODELIST", "gpu-[1-2]"}},
        {},
        "slurm",
        2,
        1,
        "env SLURM_NNODES",
        "env SLURM_NODEID"}},
      // No platform: the options are the whole topology.
      {"local", {{}, {}, "local", 1, 0, "", ""}},
  };
  return all;
}

// One cell: on `platform`, `args` give `field` the value `value` from `source` (a substring of
// its origin: the option's name, or the platform's variable), or refuse (value "78") with a
// message holding each of `named`.
struct Cell {
  std::string platform;
  std::vector<std::string> args;
  std::string field, value, source;
  std::vector<std::string> named = {};
};

std::string field_of(const Topology& t, const std::string& field) {
  if (field == "nnodes") return std::to_string(t.nnodes);
  if (field == "node_rank") return std::to_string(t.node_rank);
  if (field == "master_addr") return t.master_addr;
  if (field == "master_port") return std::to_string(t.master_port);
  if (field == "nproc_per_node") return std::to_string(t.nproc_per_node);
  return "<no field " + field + ">";
}

Result<Topology> resolve(const PlatformSide& p, std::vector<std::string> args) {
  Environment env(p.env);
  testing::FakeFileSystem fs;
  for (const auto& [path, text] : p.files) fs.add_file(path, text);
  args.push_back("train.py");
  auto o = parse_options(run_option_specs(), args, env, ParseMode{true, true});
  if (!o) return o.error();
  if (auto s = apply_torchrun_options(*o); !s) return s.error();
  const FixedGpuCounter gpus(0);
  const FixedHostAddress self("10.0.0.9");
  return resolve_topology(*o, env, fs, gpus, self);
}

// The table. PlatformSide sides, per platform: kubeflow rank 1 master job-master-0 port 23456 nproc
// 2 (PET_NPROC_PER_NODE); sagemaker rank 1 master algo-1; batch (main node) rank 0 master its
// own 10.0.0.9; slurm rank 1 master gpu-1; local one node, rank 0, 127.0.0.1.
std::vector<Cell> table() {
  const std::string addr = "10.9.9.9";
  const std::vector<std::string> ep = {"--rdzv-endpoint", addr + ":4444"};
  std::vector<Cell> cells;
  for (const auto& [name, p] : sides()) {
    // --master-addr and --rdzv-endpoint replace the master address; nothing else.
    cells.push_back({name, {"--master-addr", addr}, "master_addr", addr, "--master-addr"});
    cells.push_back({name, ep, "master_addr", addr, "--rdzv-endpoint"});
    // --master-port replaces the port (Kubeflow's PET_MASTER_PORT included).
    cells.push_back({name, {"--master-port", "4321"}, "master_port", "4321", "--master-port"});
    // --nproc-per-node is this node's own (Kubeflow's PET_NPROC_PER_NODE included).
    cells.push_back({name, {"--nproc-per-node", "3"}, "nproc_per_node", "3", "--nproc-per-node"});
    if (name == "local") continue;
    const std::string n = std::to_string(p.nnodes), r = std::to_string(p.node_rank);
    const std::string other_rank = std::to_string(1 - p.node_rank);
    // --nnodes and --node-rank agreeing with the platform: the platform's, unchanged.
    cells.push_back({name, {"--nnodes", n}, "nnodes", n, p.nnodes_var});
    cells.push_back({name, {"--node-rank", r}, "node_rank", r, p.rank_var});
    // Disagreeing: 78, naming the option, the platform's variable and both values.
    cells.push_back(
        {name, {"--nnodes", "3"}, "nnodes", "78", "", {"--nnodes=\"3\"", p.nnodes_var, " = " + n}});
    cells.push_back({name,
                     {"--node-rank", other_rank},
                     "node_rank",
                     "78",
                     "",
                     {"--node-rank=\"" + other_rank + "\"", p.rank_var, " = " + r}});
  }
  // No platform: the options make the topology (explicit), within its rules.
  cells.push_back({"local", {"--nnodes", "1"}, "nnodes", "1", "--nnodes"});
  cells.push_back({"local", {"--nnodes", "2"}, "nnodes", "78", "", {"without --master-addr"}});
  cells.push_back({"local", {"--node-rank", "0"}, "node_rank", "0", "--node-rank"});
  cells.push_back(
      {"local", {"--node-rank", "1"}, "node_rank", "78", "", {"--node-rank=\"1\"", "nnodes is 1"}});
  return cells;
}

std::string describe(const Cell& c) {
  std::string s = c.platform + ":";
  for (const auto& a : c.args) s += " " + a;
  return s;
}

TEST(ExplicitOverPlatform, EveryCellOfTheTable) {
  for (const Cell& c : table()) {
    SCOPED_TRACE(describe(c));
    const PlatformSide& p = sides().at(c.platform);
    auto t = resolve(p, c.args);
    if (c.value == "78") {
      ASSERT_FALSE(t.ok()) << "resolved: " << c.field << " = " << field_of(*t, c.field);
      EXPECT_EQ(t.error().exit_code(), exit_code_of(ErrorKind::kConfig));
      EXPECT_EQ(t.error().message.find('\n'), std::string::npos) << "one line";
      for (const auto& s : c.named) EXPECT_THAT(t.error().message, HasSubstr(s));
      continue;
    }
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(field_of(*t, c.field), c.value);
    EXPECT_THAT(t->origin_of(c.field), HasSubstr(c.source));
    // The world the platform states stays: an option overrides its own field only.
    EXPECT_EQ(t->nnodes, p.nnodes);
    EXPECT_EQ(t->node_rank, p.node_rank);
    const bool topology_option =
        c.field == "master_addr" || c.field == "nnodes" || c.field == "node_rank";
    EXPECT_EQ(platform_name(t->platform),
              c.platform == "local" && topology_option ? "explicit" : p.name);
  }
}

// The issue's case (issue 53, item 1): Batch's main node of a 2-node job given --master-addr
// trains in a 2-node world, as node rank 0, with Batch's job id.
TEST(ExplicitOverPlatform, BatchMainNodeWithMasterAddrKeepsTheTwoNodeWorld) {
  auto t = resolve(sides().at("batch"), {"--master-addr", "127.0.0.1", "--nproc-per-node", "2"});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->platform, Platform::kBatch);
  EXPECT_EQ(t->world_size(), 4);
  EXPECT_EQ(t->node_rank, 0);
  EXPECT_FALSE(t->rank_by_rendezvous);
  EXPECT_EQ(t->master_addr, "127.0.0.1");
  EXPECT_EQ(t->job_id, "job-1");
  EXPECT_THAT(t->origin_of("nnodes"), HasSubstr("AWS_BATCH_JOB_NUM_NODES"));
}

// A Batch child with --master-addr needs no AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS: the
// option gives what that variable would.
TEST(ExplicitOverPlatform, BatchChildWithMasterAddrNeedsNoMainAddressVariable) {
  PlatformSide child = sides().at("batch");
  child.env["AWS_BATCH_JOB_NODE_INDEX"] = "1";
  EXPECT_FALSE(resolve(child, {}).ok());  // without it: refused (no main node address)
  auto t = resolve(child, {"--master-addr", "10.0.0.5"});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->node_rank, 1);
  EXPECT_EQ(t->master_addr, "10.0.0.5");
}

}  // namespace
}  // namespace tv
