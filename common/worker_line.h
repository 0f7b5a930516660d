// A worker's forwarded output line as one JSON object (`--log-format json`, docs/observability.md,
// "JSON lines"): {"time", "logger": "worker", "rank", "stream": "stdout"|"stderr", ["continued":
// true,] "line"}. The line's control characters are escaped by nlohmann_json and bytes that are not
// UTF-8 become U+FFFD (the replace error handler): any byte a worker writes gives one valid JSON
// line.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace tv {

enum class WorkerStream { kStdout, kStderr };

// `time` is written as trainvisor's own JSON log lines write theirs (local time, milliseconds,
// the zone's offset: "2026-12-02T03:04:05.678+0000").
// `continued`: the line is the continuation of a longer line cut at the split size (the member
// "continued": true, after "stream").
std::string worker_line_json(int rank, WorkerStream stream, std::string_view line,
                             std::chrono::system_clock::time_point time, bool continued = false);

}  // namespace tv
