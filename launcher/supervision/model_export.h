// `--export DIR_OR_GLOB`: after a successful run, what the job names is copied into the model
// directory (SageMaker's SM_MODEL_DIR, /opt/ml/model, which SageMaker uploads as model.tar.gz),
// as the seeds' entrypoint does by hand with `cp -r logs/* /opt/ml/model/` (docs/export.md).
//
// Atomic per entry: everything is copied into a staging directory inside the target first (same
// file system), then each top-level entry is renamed into place, so a reader of the target never
// sees a half-copied file, and a failed copy leaves the target as it was. Symbolic links inside
// the source are never followed (they are skipped and counted); the source the job names may
// itself be a link (the seeds' `logs` is one). Only regular files and directories are copied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

struct ExportReport {
  int files = 0;
  std::uintmax_t bytes = 0;
  std::vector<std::string> moved;    // top-level names now in the target
  std::vector<std::string> skipped;  // links and special files, as source paths
};

// `what`: a directory (its entries are exported), a file, or a glob(3) pattern (each match by its
// base name). Errors (exit_code::kExportFailed): nothing matched, a source vanished, the target
// cannot be made or written; the message names the path and the reason, and says what the target
// holds afterwards.
Result<ExportReport> export_model(const std::string& what, const std::string& target);

}  // namespace tv
