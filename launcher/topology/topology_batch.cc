// AWS Batch multi-node parallel jobs. Rank 0 must be the main node, so
// node_rank = (AWS_BATCH_JOB_NODE_INDEX - AWS_BATCH_JOB_MAIN_NODE_INDEX) mod nnodes. Batch gives
// the children the main node's address; the main node uses its own (HostAddress).
#include <arpa/inet.h>

#include "launcher/topology/topology_sources.h"

namespace tv::topo {
namespace {

bool is_ipv4(const std::string& s) {
  in_addr a{};
  return inet_pton(AF_INET, s.c_str(), &a) == 1;
}

Status main_node_master(const Environment& env, const HostAddress& self, Topology& t) {
  if (t.nnodes == 1) {
    t.origin["master_addr"] = "default (one node)";
    return ok_status();
  }
  auto addr = self.ipv4();
  if (!addr)
    return config_error("this node is the AWS Batch main node (AWS_BATCH_JOB_NODE_INDEX=\"" +
                        env.get("AWS_BATCH_JOB_NODE_INDEX").value_or("") +
                        "\") and its own address is unknown: " + addr.error().message +
                        ": expected an up, non-loopback IPv4 interface, or --master-addr");
  t.master_addr = *addr;
  t.origin["master_addr"] = "own address, main node: " + self.describe();
  return ok_status();
}

Status child_master(const Environment& env, Topology& t) {
  const std::string var = "AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS";
  auto v = env.get(var);
  if (!v || v->empty())
    return config_error(var + " is not set on child node AWS_BATCH_JOB_NODE_INDEX=\"" +
                        env.get("AWS_BATCH_JOB_NODE_INDEX").value_or("") +
                        "\": expected the main node's IPv4 address, which AWS Batch sets on "
                        "child nodes");
  if (!is_ipv4(*v)) return bad_var(var, *v, "an IPv4 address such as 10.0.1.23");
  t.master_addr = *v;
  t.origin["master_addr"] = from_env(var);
  return ok_status();
}

void batch_job(const Environment& env, Topology& t) {
  auto id = env.get("AWS_BATCH_JOB_ID");
  if (!id || id->empty()) return;
  t.job_id = id->substr(0, id->find('#'));  // "<job>#<node index>" on each node
  t.origin["job_id"] = "env AWS_BATCH_JOB_ID (without #node-index)";
}

}  // namespace

bool batch_detected(const Environment& env) { return env.has("AWS_BATCH_JOB_NUM_NODES"); }

Result<Topology> batch_source(const Environment& env, const HostAddress& self, bool master_given) {
  Topology t;
  t.platform = Platform::kBatch;
  auto n = env_int_required(env, "AWS_BATCH_JOB_NUM_NODES", 1, kMaxNodes, "",
                            "the node count of a multi-node parallel job");
  if (!n) return n.error();
  const std::string range = "AWS_BATCH_JOB_NUM_NODES is " + std::to_string(*n);
  auto index = env_int_required(env, "AWS_BATCH_JOB_NODE_INDEX", 0, *n - 1, range, "this node");
  if (!index) return index.error();
  auto main = env_int_required(env, "AWS_BATCH_JOB_MAIN_NODE_INDEX", 0, *n - 1, range,
                               "the main node, which becomes rank 0");
  if (!main) return main.error();
  t.nnodes = static_cast<int>(*n);
  t.node_rank = static_cast<int>((*index - *main + *n) % *n);
  t.origin["nnodes"] = from_env("AWS_BATCH_JOB_NUM_NODES");
  t.origin["node_rank"] =
      "env AWS_BATCH_JOB_NODE_INDEX - AWS_BATCH_JOB_MAIN_NODE_INDEX (mod nnodes)";
  const bool is_main = *index == *main;
  if (master_given) {
    t.origin["master_addr"] = "--master-addr";  // apply_rank_and_master (topology.cc) sets it
  } else {
    auto st = is_main && !env.has("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS")
                  ? main_node_master(env, self, t)
                  : child_master(env, t);
    if (!st) return st.error();
  }
  batch_job(env, t);
  return t;
}

}  // namespace tv::topo
