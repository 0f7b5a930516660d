#include "checkpoint/lightning_step.h"

#include "checkpoint/pickle.h"
#include "checkpoint/zip_verify.h"

namespace tv {

std::int64_t torch_int_field(CheckpointFs& fs, const std::string& path, std::string_view key) {
  auto pkl = read_stored_entry(fs, path, "/data.pkl", 64ull << 20);
  if (!pkl) return -1;
  auto value = parse_pickle(*pkl);
  if (!value) return -1;
  const std::uint32_t field = value->field(value->root, key);
  return value->is_int(field) ? value->at(field).integer : -1;
}

std::int64_t lightning_global_step(CheckpointFs& fs, const std::string& path) {
  return torch_int_field(fs, path, "global_step");
}

}  // namespace tv
