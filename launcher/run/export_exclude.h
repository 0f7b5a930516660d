// What `--export` leaves out of the model directory besides trainvisor's own files: the
// checkpoints under the source that are not complete (checkpoint/incomplete.h), such as the save
// that the job's SIGTERM cut (docs/export.md, "What is left out").
#pragma once

#include <string>

#include "launcher/node/model_export.h"

namespace tv {

// The incomplete checkpoints of `format` under what `--export` names (a directory; a file's or a
// glob's directory: the part of the pattern before its first wildcard), found once, now.
ExportExclude incomplete_checkpoints_under(const std::string& what, const std::string& format);

}  // namespace tv
