// The job description's sections (render/job_config.h): env, secrets, volumes and the per-platform
// objects. Internal to render/; every error names its field (exit 78).
#pragma once

#include <string>

#include "render/job_config.h"
#include "render/json_fields.h"

namespace tv::job_sections {

Status read_sections(render_fields::Fields& f, JobConfig& c);

// An absolute path that is safe in a mount list (`src:dst,src:dst`) and on a shell line.
bool plain_path(const std::string& path);

}  // namespace tv::job_sections
