#include "checkpoint/resume.h"

#include <spdlog/spdlog.h>

#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/discovery.h"
#include "common/exit_codes.h"

namespace tv {

std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request, CheckpointFs& fs) {
  if (request.mode == "none" || request.dir.empty()) return std::nullopt;
  if (!validate_checkpoint_format(request.format)) {
    spdlog::warn("checkpoint: --checkpoint-format '{}' is not valid; not resuming", request.format);
    return std::nullopt;
  }
  try {
    SelectOptions options{request.mode == "best" ? "best" : "latest", request.settle};
    return select_checkpoint(discover(fs, request.dir, request.format), fs, options);
  } catch (const std::exception& e) {  // e.g. bad_alloc: the job goes on without resuming
    spdlog::error("checkpoint: searching {} failed: {}; not resuming", request.dir, e.what());
    return std::nullopt;
  }
}

std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request) {
  RealCheckpointFs fs;
  return find_resume_checkpoint(request, fs);
}

Status validate_checkpoint_format(const std::string& format) {
  if (format == "auto" || format == "skrl" || format == "dcp") return ok_status();
  if (format.starts_with("glob:") && format.size() > 5 && format[5] != '/') return ok_status();
  return Error{exit_code::kConfig,
               "--checkpoint-format: '" + format +
                   "' is not one of auto, skrl, dcp, glob:PATTERN (PATTERN non-empty and "
                   "relative to --checkpoint-dir)"};
}

}  // namespace tv
