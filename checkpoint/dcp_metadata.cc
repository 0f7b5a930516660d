#include "checkpoint/dcp_metadata.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "checkpoint/pickle.h"
#include "common/exit_codes.h"

namespace tv {
namespace {

Error bad(std::string why) { return Error{ErrorKind::kFailed, ".metadata: " + std::move(why)}; }

bool safe_relative(std::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  std::size_t begin = 0;
  while (begin <= p.size()) {
    auto end = p.find('/', begin);
    if (end == std::string_view::npos) end = p.size();
    const auto part = p.substr(begin, end - begin);
    if (part == ".." || part.empty()) return false;
    begin = end + 1;
  }
  return p.find('\0') == std::string_view::npos;
}

}  // namespace

Result<std::vector<DcpStorageFile>> parse_dcp_metadata(std::string_view bytes) {
  auto parsed = parse_pickle(bytes);
  if (!parsed) return bad(parsed.error().message);
  const PickleValue& v = *parsed;
  const std::string cls = v.class_name(v.root);
  if (!cls.ends_with(".Metadata"))
    return bad("not a DCP Metadata object (" + (cls.empty() ? "no class" : cls) + ")");
  const std::uint32_t storage = v.field(v.root, "storage_data");
  if (!v.valid(storage)) return bad("no storage_data");
  const PyNode& map = v.at(storage);
  if (map.kind == PyKind::kNone) return std::vector<DcpStorageFile>{};
  if (map.kind != PyKind::kDict) return bad("storage_data is not a dict");
  std::map<std::string, DcpStorageFile, std::less<>> files;
  for (std::size_t i = 1; i < map.items.size(); i += 2) {
    const std::uint32_t info = map.items[i];
    const std::uint32_t path = v.field(info, "relative_path");
    const std::uint32_t offset = v.field(info, "offset");
    const std::uint32_t length = v.field(info, "length");
    if (!v.is_str(path) || !v.is_int(offset) || !v.is_int(length))
      return bad("storage entry " + std::to_string(i / 2) + " lacks relative_path/offset/length");
    const std::string& rel = v.at(path).text;
    const std::int64_t off = v.at(offset).integer, len = v.at(length).integer;
    if (!safe_relative(rel)) return bad("storage path '" + rel + "' leaves the directory");
    if (off < 0 || len < 0 || off > INT64_MAX - len)
      return bad("storage entry for " + rel + " has offset " + std::to_string(off) + ", length " +
                 std::to_string(len));
    auto& f = files[rel];
    f.relative_path = rel;
    f.min_size = std::max<std::uint64_t>(f.min_size, static_cast<std::uint64_t>(off + len));
    ++f.items;
  }
  std::vector<DcpStorageFile> out;
  out.reserve(files.size());
  for (auto& [name, f] : files) out.push_back(std::move(f));
  return out;
}

}  // namespace tv
