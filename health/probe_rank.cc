#include "health/probe_rank.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "common/exit_codes.h"
#include "common/json_text.h"
#include "common/parse_number.h"
#include "health/cuda_api.h"
#include "health/nccl_api.h"

namespace tv {
namespace {

using Clock = std::chrono::steady_clock;

struct RankSpec {
  int rank = 0, nranks = 0, device = 0, timeout_s = 120;
  size_t bytes = 64u << 20;
  std::string lib;
  nccl::UniqueId id{};
};

struct ProbeError {
  std::string message;
};

// An integer variable, `fallback` when unset; -1 (refused below) when it is not a number in range.
long long env_int(const Environment& env, const char* name, long long fallback) {
  auto v = env.get(name);
  if (!v || v->empty()) return fallback;
  return parse_integer<long long>(*v, 0, std::int64_t{16} << 30).value_or(-1);
}

std::optional<RankSpec> read_spec(const Environment& env, std::string* why) {
  RankSpec s;
  const long long rank = env_int(env, "TV_PROBE_RANK", -1);
  const long long nranks = env_int(env, "TV_PROBE_NRANKS", 0);
  const long long device = env_int(env, "TV_PROBE_DEVICE", 0);
  const long long timeout_s = env_int(env, "TV_PROBE_TIMEOUT_S", 120);
  const long long bytes = env_int(env, "TV_PROBE_BYTES", 64 << 20);
  s.lib = env.get("TV_PROBE_NCCL_LIB").value_or("libnccl.so.2");
  const long long kMaxCount = 1 << 20;
  if (rank < 0 || nranks <= rank || nranks > kMaxCount || device < 0 || device > kMaxCount ||
      timeout_s < 0 || timeout_s > 86400 || bytes < 4) {
    *why =
        "TV_PROBE_RANK/TV_PROBE_NRANKS/TV_PROBE_DEVICE/TV_PROBE_TIMEOUT_S/TV_PROBE_BYTES are "
        "missing or out of range";
    return std::nullopt;
  }
  s.rank = static_cast<int>(rank);
  s.nranks = static_cast<int>(nranks);
  s.device = static_cast<int>(device);
  s.timeout_s = static_cast<int>(timeout_s);
  s.bytes = static_cast<size_t>(bytes);
  if (!nccl::from_hex(env.get("TV_PROBE_UNIQUE_ID").value_or(""), &s.id)) {
    *why = "TV_PROBE_UNIQUE_ID is not 256 hex digits (an ncclUniqueId)";
    return std::nullopt;
  }
  return s;
}

void check_cu(const cuda::Api& api, cuda::Result r, const char* what) {
  if (r != 0) throw ProbeError{std::string(what) + ": " + cuda::error_string(api, r)};
}

// Waits for a non-blocking communicator's pending operation; aborts it at the deadline.
void wait_comm(const nccl::Api& api, nccl::Comm comm, Clock::time_point deadline,
               const char* what) {
  const auto start = Clock::now();
  for (;;) {
    nccl::Result state = nccl::kSuccess;
    api.commGetAsyncError(comm, &state);
    if (state == nccl::kSuccess) return;
    if (state != nccl::kInProgress) {
      std::string last = api.getLastError ? api.getLastError(comm) : "";
      api.commAbort(comm);
      throw ProbeError{std::string(what) + " failed: " + nccl::error_string(api, state) +
                       (last.empty() ? "" : ": " + last)};
    }
    if (Clock::now() > deadline) {
      api.commAbort(comm);
      throw ProbeError{std::string(what) +
                       " did not finish before the deadline; communicator aborted"};
    }
    // Enqueueing finishes in microseconds: spin first, sleep only when it drags on (init).
    if (Clock::now() - start > std::chrono::milliseconds(50))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    else
      std::this_thread::yield();
  }
}

void wait_stream(const cuda::Api& cu, const nccl::Api& api, nccl::Comm comm, cuda::Stream s,
                 Clock::time_point deadline) {
  for (;;) {
    cuda::Result r = cu.cuStreamQuery(s);
    if (r == 0) return;
    if (r != cuda::kErrorNotReady) check_cu(cu, r, "cuStreamQuery");
    wait_comm(api, comm, deadline, "all-reduce");  // surfaces NCCL errors while waiting
    if (Clock::now() > deadline) {
      api.commAbort(comm);
      throw ProbeError{"all-reduce did not finish before the deadline; communicator aborted"};
    }
    std::this_thread::yield();
  }
}

struct Buffers {
  cuda::DevicePtr send = 0, recv = 0;
  cuda::Stream stream = nullptr;
  size_t count = 0;
};

Buffers setup_device(const cuda::Api& cu, const RankSpec& s, nlohmann::json& out) {
  if (!cu.cuDevicePrimaryCtxRetain || !cu.cuMemAlloc || !cu.cuMemsetD32 || !cu.cuStreamCreate ||
      !cu.cuStreamQuery || !cu.cuMemcpyDtoH)
    throw ProbeError{"the CUDA driver lacks the memory/stream entry points"};
  check_cu(cu, cu.cuInit(0), "cuInit");
  cuda::Device dev = 0;
  check_cu(cu, cu.cuDeviceGet(&dev, s.device), "cuDeviceGet");
  char name[256] = {};
  cu.cuDeviceGetName(name, sizeof(name) - 1, dev);
  out["device_name"] = name;
  cuda::Context ctx = nullptr;
  check_cu(cu, cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check_cu(cu, cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  Buffers b;
  b.count = s.bytes / sizeof(float);
  check_cu(cu, cu.cuMemAlloc(&b.send, b.count * sizeof(float)), "cuMemAlloc");
  check_cu(cu, cu.cuMemAlloc(&b.recv, b.count * sizeof(float)), "cuMemAlloc");
  const float value = static_cast<float>(s.rank + 1);
  unsigned bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  check_cu(cu, cu.cuMemsetD32(b.send, bits, b.count), "cuMemsetD32");
  check_cu(cu, cu.cuMemsetD32(b.recv, 0, b.count), "cuMemsetD32");
  check_cu(cu, cu.cuStreamCreate(&b.stream, 1 /* CU_STREAM_NON_BLOCKING */), "cuStreamCreate");
  return b;
}

nccl::Comm init_comm(const nccl::Api& api, const RankSpec& s, Clock::time_point deadline) {
  if (!api.commInitRankConfig || !api.commGetAsyncError || !api.commAbort || !api.allReduce)
    throw ProbeError{"this NCCL lacks ncclCommInitRankConfig (NCCL >= 2.14 is needed)"};
  nccl::Config config;
  config.blocking = 0;
  nccl::Comm comm = nullptr;
  nccl::Result r = api.commInitRankConfig(&comm, s.nranks, s.id, s.rank, &config);
  if (r != nccl::kSuccess && r != nccl::kInProgress) {
    if (comm) api.commAbort(comm);
    throw ProbeError{"ncclCommInitRankConfig failed: " + nccl::error_string(api, r)};
  }
  wait_comm(api, comm, deadline, "ncclCommInitRankConfig");
  return comm;
}

double run_allreduces(const cuda::Api& cu, const nccl::Api& api, nccl::Comm comm, const Buffers& b,
                      int iters, Clock::time_point deadline) {
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    nccl::Result r =
        api.allReduce(reinterpret_cast<const void*>(b.send), reinterpret_cast<void*>(b.recv),
                      b.count, nccl::kFloat32, nccl::kSum, comm, b.stream);
    if (r != nccl::kSuccess && r != nccl::kInProgress)
      throw ProbeError{"ncclAllReduce: " + nccl::error_string(api, r)};
    wait_comm(api, comm, deadline, "ncclAllReduce");
  }
  wait_stream(cu, api, comm, b.stream, deadline);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

size_t count_wrong(const cuda::Api& cu, const Buffers& b, int nranks) {
  std::vector<float> host(b.count);
  check_cu(cu, cu.cuMemcpyDtoH(host.data(), b.recv, b.count * sizeof(float)), "cuMemcpyDtoH");
  const float expected = static_cast<float>(nranks) * (nranks + 1) / 2.0f;
  size_t wrong = 0;
  for (float v : host) wrong += v != expected;
  return wrong;
}

void probe(const RankSpec& s, nlohmann::json& out) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(s.timeout_s);
  std::string why;
  cuda::Api cu = cuda::load(DlopenLoader{}, &why);
  if (!cu.lib) throw ProbeError{"no CUDA driver: " + why};
  nccl::Api api = nccl::load(DlopenLoader{}, s.lib, &why);
  if (!api.lib) throw ProbeError{"cannot load NCCL " + s.lib + ": " + why};
  int code = 0;
  api.getVersion(&code);
  out["nccl_version"] = nccl::version_string(code);
  out["nccl_path"] = api.lib->path();
  Buffers b = setup_device(cu, s, out);
  nccl::Comm comm = init_comm(api, s, deadline);
  out["init_s"] = std::chrono::duration<double>(Clock::now() - start).count();
  run_allreduces(cu, api, comm, b, 5, deadline);  // warm-up
  const int iters = 20;
  const double secs = run_allreduces(cu, api, comm, b, iters, deadline);
  const size_t wrong = count_wrong(cu, b, s.nranks);
  const double algbw = static_cast<double>(s.bytes) / (secs / iters) / 1e9;
  out["bytes"] = s.bytes;
  out["iters"] = iters;
  out["time_us"] = secs / iters * 1e6;
  out["algbw_GBps"] = algbw;
  out["busbw_GBps"] = algbw * 2.0 * (s.nranks - 1) / s.nranks;
  out["wrong_elements"] = wrong;
  if (api.commDestroy) api.commDestroy(comm);
  if (wrong) throw ProbeError{"all-reduce result wrong in " + std::to_string(wrong) + " elements"};
}

}  // namespace

int run_probe_rank(const Environment& env) {
  nlohmann::json out;
  std::string why;
  auto spec = read_spec(env, &why);
  if (!spec) {
    std::fprintf(stderr, "trainvisor __probe-rank: %s\n", why.c_str());
    std::printf("%s\n", json_text(nlohmann::json{{"ok", false}, {"error", why}}).c_str());
    return exit_code_of(ErrorKind::kUsage);
  }
  out["rank"] = spec->rank;
  out["nranks"] = spec->nranks;
  try {
    probe(*spec, out);
    out["ok"] = true;
  } catch (const ProbeError& e) {
    out["ok"] = false;
    out["error"] = e.message;
  }
  std::printf("%s\n", json_text(out).c_str());
  std::fflush(stdout);
  return out["ok"].get<bool>() ? 0 : 1;
}

}  // namespace tv
