// Lightning's last.ckpt / last-v<N>.ckpt carry no step in their name; the step is the
// `global_step` of the checkpoint dict, read from the zip's data.pkl with the safe pickle parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint_fs.h"

namespace tv {

// -1 when it cannot be read (e.g. the file is still being written).
std::int64_t lightning_global_step(CheckpointFs& fs, const std::string& path);
// The integer `key` of the dict a torch.save zip holds (timm's "epoch"), or -1.
std::int64_t torch_int_field(CheckpointFs& fs, const std::string& path, std::string_view key);

}  // namespace tv
