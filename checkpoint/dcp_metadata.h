// PyTorch Distributed Checkpoint `.metadata`: a pickled
// torch.distributed.checkpoint.metadata.Metadata whose `storage_data` maps every saved item
// (MetadataIndex) to where its bytes are (filesystem._StorageInfo: relative_path, offset,
// length). Parsed with the safe pickle subset parser: nothing is executed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tv {

struct DcpStorageFile {
  std::string relative_path;   // as written by FileSystemWriter (e.g. "__0_0.distcp")
  std::uint64_t min_size = 0;  // the largest offset + length that refers to it
  std::uint64_t items = 0;
};

// Largest .metadata read (bigger ones are reported, not parsed).
inline constexpr std::uint64_t kMaxDcpMetadataBytes = 256ull << 20;

// The storage files a .metadata refers to, sorted by name. Errors name what is wrong.
// A relative path that is absolute or climbs out of the directory ("..") is an error.
Result<std::vector<DcpStorageFile>> parse_dcp_metadata(std::string_view bytes);

}  // namespace tv
