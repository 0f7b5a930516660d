// What the node fingerprint costs (docs/coordination.md, "Node fingerprint"; docs/benchmarks.md):
// gathering this node's (file reads and the environment: launcher/plan/node_fingerprint.h; the
// torch child it reuses ran anyway), a join carrying one encoded and decoded, and node 0's
// comparison of N nodes' fingerprints, identical or with one node different.
// Usage: build/bench/bench_fingerprint (Google Benchmark's flags apply)
#include <benchmark/benchmark.h>

#include "common/file_system.h"
#include "launcher/plan/node_fingerprint.h"

namespace {

using namespace tv;

Environment typical_env() {
  Environment env = Environment::from_process();
  for (const char* v : {"NCCL_DEBUG=INFO", "NCCL_PROTO=Simple", "NCCL_ALGO=Ring", "FI_PROVIDER=efa",
                        "FI_EFA_USE_DEVICE_RDMA=1", "NCCL_SOCKET_IFNAME=eth0",
                        "CUDA_DEVICE_MAX_CONNECTIONS=1", "TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
                        "NCCL_NVLS_ENABLE=0", "FI_EFA_FORK_SAFE=1", "NCCL_TUNER_PLUGIN=none"}) {
    const std::string kv = v;
    env.set(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
  }
  return env;
}

rdzv::Fingerprint typical() {
  const TorchVersion torch{2, 11, "2.11.0+cu128", "12.8", "2.26.2"};
  return node_fingerprint(typical_env(), torch, RealFileSystem(), "1.0.0");
}

void BM_GatherThisNode(benchmark::State& state) {
  const Environment env = typical_env();
  const TorchVersion torch{2, 11, "2.11.0+cu128", "12.8", "2.26.2"};
  const RealFileSystem fs;
  for (auto _ : state) benchmark::DoNotOptimize(node_fingerprint(env, torch, fs, "1.0.0"));
}
BENCHMARK(BM_GatherThisNode)->Unit(benchmark::kMicrosecond);

void BM_JoinEncodeDecode(benchmark::State& state) {
  const rdzv::Fingerprint fp = typical();
  for (auto _ : state) {
    const std::string wire = nlohmann::json{{"fingerprint", rdzv::fingerprint_json(fp)}}.dump();
    benchmark::DoNotOptimize(rdzv::fingerprint_from(nlohmann::json::parse(wire)));
  }
  state.counters["bytes"] = static_cast<double>(
      nlohmann::json{{"fingerprint", rdzv::fingerprint_json(fp)}}.dump().size());
}
BENCHMARK(BM_JoinEncodeDecode)->Unit(benchmark::kMicrosecond);

void compare(benchmark::State& state, bool one_differs) {
  const rdzv::Fingerprint fp = typical();
  std::vector<rdzv::NodePrint> nodes;
  for (int r = 0; r < state.range(0); ++r) nodes.push_back({r, "host-" + std::to_string(r), fp});
  if (one_differs) {
    nodes.back().print->facts["torch"] = "2.10.0";
    nodes.back().print->vars["NCCL_PROTO"] = "LL128";
    nodes.back().print->vars_hash = "other";
  }
  for (auto _ : state) benchmark::DoNotOptimize(rdzv::fingerprint_mismatch(nodes));
}
void BM_CompareIdentical(benchmark::State& state) { compare(state, false); }
void BM_CompareOneDiffers(benchmark::State& state) { compare(state, true); }
BENCHMARK(BM_CompareIdentical)->Arg(2)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CompareOneDiffers)->Arg(2)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
