#include "health/nccl_api.h"

#include <cstdio>

namespace tv::nccl {

Api load(const LibraryLoader& loader, const std::string& name, std::string* why) {
  Api api;
  auto lib = loader.open(name, why);
  if (!lib) return api;
  api.getVersion = lib->function<Result(int*)>("ncclGetVersion");
  api.getUniqueId = lib->function<Result(UniqueId*)>("ncclGetUniqueId");
  api.commInitRankConfig =
      lib->function<Result(Comm*, int, UniqueId, int, Config*)>("ncclCommInitRankConfig");
  api.commGetAsyncError = lib->function<Result(Comm, Result*)>("ncclCommGetAsyncError");
  api.commAbort = lib->function<Result(Comm)>("ncclCommAbort");
  api.commDestroy = lib->function<Result(Comm)>("ncclCommDestroy");
  api.allReduce =
      lib->function<Result(const void*, void*, size_t, int, int, Comm, void*)>("ncclAllReduce");
  api.getErrorString = lib->function<const char*(Result)>("ncclGetErrorString");
  api.getLastError = lib->function<const char*(Comm)>("ncclGetLastError");
  if (!api.getVersion || !api.getUniqueId) {
    if (why)
      *why = lib->path() + " does not export ncclGetVersion/ncclGetUniqueId: not an NCCL library";
    return Api{};
  }
  api.lib = std::move(lib);
  return api;
}

std::string version_string(int code) {
  // NCCL >= 2.9: major*10000 + minor*100 + patch; older: major*1000 + minor*100 + patch.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

std::string error_string(const Api& api, Result r) {
  std::string s = api.getErrorString ? api.getErrorString(r) : "NCCL error";
  return s + " (" + std::to_string(r) + ")";
}

std::string to_hex(const UniqueId& id) {
  std::string out;
  char buf[3];
  for (unsigned char c : id.internal) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

bool from_hex(const std::string& hex, UniqueId* id) {
  if (hex.size() != 2 * sizeof(id->internal)) return false;
  for (size_t i = 0; i < sizeof(id->internal); ++i) {
    unsigned v = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &v) != 1) return false;
    id->internal[i] = static_cast<char>(v);
  }
  return true;
}

}  // namespace tv::nccl
