// Root cause of a failed generation: the first worker trainvisor saw fail, with the message and
// traceback from the error file torch's @record writes to TORCHELASTIC_ERROR_FILE, else its exit
// status and the last lines of its output. Printed as a table at the end and written where the
// orchestrator shows it (SageMaker's failure file, Kubernetes' termination log).
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace tv {

struct ErrorFileInfo {
  std::string message;
  std::string traceback;
  double timestamp = 0;  // unix seconds; 0 when absent
};

// Parses torch's error-file JSON ({"message": {"message": ..., "extraInfo": {"py_callstack":
// ..., "timestamp": ...}}} or {"message": "..."}). nullopt when missing or not that format.
std::optional<ErrorFileInfo> parse_error_file(const std::string& json_text);
std::optional<ErrorFileInfo> read_error_file(const std::string& path);

struct FailureRecord {
  int generation = 0;
  int node_rank = 0;
  int rank = 0;
  int local_rank = 0;
  int exit_code = 1;
  int signal = 0;
  bool hang = false;
  std::optional<ErrorFileInfo> error;
  std::vector<std::string> tail;  // last lines of output, when there is no error file
};

// "rank 1 (node 0, local 1): exit 1: ValueError: boom"
std::string summary_line(const FailureRecord& f);
// Several lines: the summary, then the traceback or the output tail.
std::string detail_text(const FailureRecord& f);
// The end-of-job table, one row per generation's root cause.
std::string format_failure_table(const std::vector<FailureRecord>& causes);

// Writes `text` to `path` when its directory exists; with only_if_absent, never replaces an
// existing file (SageMaker keeps the first reason). Written atomically (temp file + rename), at
// most `limit` bytes. Returns false when skipped or failed.
bool write_root_cause_file(const std::string& path, const std::string& text, bool only_if_absent,
                           std::size_t limit);

}  // namespace tv
