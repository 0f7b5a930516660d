// Lightning's last.ckpt / last-v<N>.ckpt carry no step in their name; the step is the
// `global_step` of the checkpoint dict, read from the zip's data.pkl with the safe pickle parser.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_fs.h"

namespace tv {

// -1 when it cannot be read (e.g. the file is still being written).
std::int64_t lightning_global_step(CheckpointFs& fs, const std::string& path);

}  // namespace tv
