// `--export DIR_OR_GLOB`: after a successful run, what the job names is copied into the model
// directory (SageMaker's SM_MODEL_DIR, /opt/ml/model, which SageMaker uploads as model.tar.gz),
// as the seeds' entrypoint does by hand with `cp -r logs/* /opt/ml/model/` (docs/export.md).
//
// Atomic per entry: everything is copied into a staging directory inside the target first (same
// file system), then each top-level entry is renamed into place, so a reader of the target never
// sees a half-copied file, and a failed copy leaves the target as it was. Symbolic links inside
// the source are never followed (they are skipped and counted), nor are a glob's matches; only
// the path the job names may itself be a link (the seeds' `logs` is one). Only regular files and
// directories are copied.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/file_system.h"
#include "common/result.h"

namespace tv {

struct ExportReport {
  int files = 0;
  std::uintmax_t bytes = 0;
  std::vector<std::string> moved;     // top-level names now in the target
  std::vector<std::string> skipped;   // links and special files, as source paths
  std::vector<std::string> own;       // trainvisor's own files (the job's ledger), never exported
  std::vector<std::string> left_out;  // "PATH (why)": what `exclude` named (incomplete checkpoints)
};

// Why the source entry at `path` (as the export walks it: the path named, then "/" and the
// names below it) stays out of the model directory, or nullopt to copy it. `run` passes the
// incomplete checkpoints under the source (checkpoint/incomplete.h).
using ExportExclude = std::function<std::optional<std::string>(const std::string& path)>;

// trainvisor's own bookkeeping beside the checkpoints (`.trainvisor-ledger-*.json`, its
// `.corrupt` and temporary files): a model directory never gets them (docs/export.md).
bool is_trainvisor_file(const std::string& name);

// Why exporting `what` into `target` would copy the target into itself: the path named (or a
// glob's match, as it exists now) is the target or holds it, or a match is already an entry of
// it. The message names both paths; nullopt when they are apart. Both are read through `files`
// (their links resolved, a glob's matches), a relative one against `cwd` (run's current
// directory; "" leaves it as given). `run` refuses the overlap (78) before anything starts
// (plan_run, on PlanFacts); export_model checks it again at the end.
std::optional<std::string> export_overlap(const std::string& what, const std::string& target,
                                          const FileSystem& files, const std::string& cwd);

// `what`: a directory (its entries are exported), a file, or a glob(3) pattern (each match by its
// base name, expanded through `files`; `cwd` as export_overlap's, the process's current
// directory). Errors (exit_code_of(ErrorKind::kCannotCreate)): nothing matched, a source vanished,
// the target cannot be made or written; the message names the path and the reason, and says what
// the target holds afterwards.
Result<ExportReport> export_model(const std::string& what, const std::string& target,
                                  const FileSystem& files, const std::string& cwd,
                                  const ExportExclude& exclude = {});

}  // namespace tv
