#include "checkpoint/lightning_step.h"

#include "checkpoint/pickle.h"
#include "checkpoint/zip_verify.h"

namespace tv {

std::int64_t lightning_global_step(CheckpointFs& fs, const std::string& path) {
  auto pkl = read_stored_entry(fs, path, "/data.pkl", 64ull << 20);
  if (!pkl) return -1;
  auto value = parse_pickle(*pkl);
  if (!value) return -1;
  const std::uint32_t step = value->field(value->root, "global_step");
  return value->is_int(step) ? value->at(step).integer : -1;
}

}  // namespace tv
