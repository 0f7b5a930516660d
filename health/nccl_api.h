// The NCCL entry points the probe uses, as function types for dlsym (NCCL's C ABI: ncclResult_t
// and the enums are ints, ncclUniqueId is 128 bytes passed by value). Never linked.
#pragma once

#include <climits>
#include <cstddef>
#include <memory>
#include <string>

#include "health/dynamic_library.h"

namespace tv::nccl {

struct UniqueId {
  char internal[128];
};
using Comm = void*;
using Result = int;
inline constexpr Result kSuccess = 0;
inline constexpr Result kInProgress = 7;
inline constexpr int kFloat32 = 7;  // ncclFloat32
inline constexpr int kSum = 0;      // ncclSum

// ncclConfig_t as NCCL 2.18 laid it out; `version` tells newer NCCLs to read only these fields.
struct Config {
  size_t size = sizeof(Config);
  unsigned magic = 0xcafebeef;
  unsigned version = 21800;  // NCCL_VERSION(2, 18, 0)
  int blocking = INT_MIN;
  int cgaClusterSize = INT_MIN;
  int minCTAs = INT_MIN;
  int maxCTAs = INT_MIN;
  const char* netName = nullptr;
  int splitShare = INT_MIN;
};

struct Api {
  std::shared_ptr<DynamicLibrary> lib;
  Result (*getVersion)(int*) = nullptr;
  Result (*getUniqueId)(UniqueId*) = nullptr;
  Result (*commInitRankConfig)(Comm*, int, UniqueId, int, Config*) = nullptr;
  Result (*commGetAsyncError)(Comm, Result*) = nullptr;
  Result (*commAbort)(Comm) = nullptr;
  Result (*commDestroy)(Comm) = nullptr;
  Result (*allReduce)(const void*, void*, size_t, int, int, Comm, void*) = nullptr;
  const char* (*getErrorString)(Result) = nullptr;
  const char* (*getLastError)(Comm) = nullptr;
};

// Loads `name_or_path` (e.g. libnccl.so.2) and its symbols; lib == nullptr and *why on failure.
Api load(const LibraryLoader& loader, const std::string& name_or_path, std::string* why);
std::string version_string(int code);  // 22809 -> "2.28.9"
std::string error_string(const Api& api, Result r);
std::string to_hex(const UniqueId& id);
bool from_hex(const std::string& hex, UniqueId* id);

}  // namespace tv::nccl
