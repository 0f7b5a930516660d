// trainvisor's own log lines (stderr), as text or as one JSON object per line.
// Worker output does not go through here: see common/output_sink.h.
#pragma once

#include <spdlog/spdlog.h>

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace tv {

enum class LogFormat { kText, kJson };

// Sets up the default spdlog logger on stderr. Call once from main before any thread exists
// (it starts none); later calls change only the format, never the logger, so a thread that is
// logging meanwhile is safe.
void init_logging(LogFormat format);

// Logs `text` at info. With LogFormat::kJson the record also carries the members of `fields` (an
// object) after "msg", so a machine reads them without parsing the text; a member named time,
// level, logger or msg is left out. The text form is `text` alone.
void log_info_with_fields(const std::string& text, const nlohmann::json& fields);

// Waits (a few seconds at most) until queued log and worker lines are written. Call before exit.
void flush_logs();

}  // namespace tv
