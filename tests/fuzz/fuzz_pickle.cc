// libFuzzer: the safe pickle parser and the DCP .metadata reader on arbitrary bytes. Nothing may
// crash, hang or allocate without bound; every node reference of an accepted pickle must be in
// range, and every storage path the metadata reader accepts must stay inside the directory.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "checkpoint/dcp_metadata.h"
#include "checkpoint/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  tv::PickleLimits limits;
  limits.max_nodes = 100'000;
  auto v = tv::parse_pickle(in, limits);
  if (v.ok()) {
    if (!v->valid(v->root)) std::abort();
    for (const auto& n : v->nodes) {
      for (auto i : n.items)
        if (!v->valid(i)) std::abort();
      for (auto i : {n.callable, n.args, n.state})
        if (i != tv::kNoNode && !v->valid(i)) std::abort();
    }
  }
  auto files = tv::parse_dcp_metadata(in);
  if (files.ok())
    for (const auto& f : *files)
      if (f.relative_path.empty() || f.relative_path[0] == '/' ||
          ("/" + f.relative_path + "/").find("/../") != std::string::npos)
        std::abort();  // a name like "a..b" is fine; a ".." component is not
  return 0;
}
