// The root cause's record: a failed generation's first failure (chosen by RootCauseJudge,
// launcher/job/root_cause_judge.h), with the message and traceback from the error file
// torch's @record writes to TORCHELASTIC_ERROR_FILE, else its exit status and the last traceback
// on its stderr, else the last lines of its output. Printed as a table at the end and written where
// the orchestrator shows it (SageMaker's failure file, Kubernetes' termination log).
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/file_system.h"
#include "common/result.h"

namespace tv {

struct ErrorFileInfo {
  std::string message;
  std::string traceback;
  double timestamp = 0;  // unix seconds; 0 when absent
};

// Parses torch's error-file JSON ({"message": {"message": ..., "extraInfo": {"py_callstack":
// ..., "timestamp": ...}}} or {"message": "..."}). nullopt when missing or not that format.
std::optional<ErrorFileInfo> parse_error_file(const std::string& json_text);
// Reads the error file through `fs` (the real one reads only a regular file, at most 4 MiB:
// common/bounded_read.h). nullopt when it is absent, unreadable or not that format; *why (when
// given) says why a file that is there was refused: "<path>: <reason>" (a FIFO, a device, too
// large).
std::optional<ErrorFileInfo> read_error_file(const FileSystem& fs, const std::string& path,
                                             std::string* why = nullptr);

struct FailureRecord {
  int generation = 0;
  int node_rank = 0;
  int rank = 0;
  int local_rank = 0;
  int exit_code = 1;
  int signal = 0;
  bool hang = false;
  std::string hang_reason;    // the verdict's words ("stall: ...", "start-up: ..."); "": silence
  std::string out_of_memory;  // a SIGKILL the cgroup counted as an OOM kill (cgroup_memory.h)
  std::optional<ErrorFileInfo> error;
  // The last Python traceback on its stderr (traceback_watch.h), its exception line last; empty
  // when there was none. Kept apart from the tail: stdout read after it does not hide it.
  std::vector<std::string> traceback;
  std::vector<std::string> tail;  // last lines of output, both streams, in the order read
  // Lines after the summary: the stacks taken before it was stopped, the evidence files by path
  // (launcher/node/supervisor_stacks.cc).
  std::string evidence;
};

// `ns` since the epoch (FileSystem::modified_ns, a wall clock read as ns) as a system_clock time.
inline std::chrono::system_clock::time_point wall_time(std::int64_t ns) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(ns)));
}

// The mtime of the worker's error file (through `fs`) when it is a regular file, else nullopt.
std::optional<std::chrono::system_clock::time_point> error_file_written(const FileSystem& fs,
                                                                        const std::string& path);

// The line that names the root cause, in this order: the error file's message, else the exception
// line of the last traceback on stderr, else the last line of output; empty when there is none.
std::string root_cause_line(const FailureRecord& f);

// The worker's text (message, traceback, output) is escaped (common/escape.h): one summary line
// stays one line, and no ANSI code or carriage return reaches the failure file or the log.
// "rank 1 (node 0, local 1): exit 1: ValueError: boom"
std::string summary_line(const FailureRecord& f);
// Several lines: the summary, then the error file's traceback, else the one on stderr, else the
// output tail.
std::string detail_text(const FailureRecord& f);
// The end-of-job table, one row per generation's root cause.
std::string format_failure_table(const std::vector<FailureRecord>& causes);
// Its header line and one row ("0           3     1     1     exit 1: ValueError: boom"); `rank`
// below 0: "-" (a failure of no one worker). `cause` is escaped here.
inline constexpr const char* kFailureTableHeader = "generation  rank  node  exit  root cause\n";
std::string failure_table_row(int generation, int rank, int node_rank, int exit_code,
                              const std::string& cause);

// Writes `text` to `path` when its directory exists; with only_if_absent, never replaces an
// existing file (SageMaker keeps the first reason). Through write_whole_file
// (common/whole_file.h): a new file under an unpredictable temporary name, renamed or linked into
// place; a symbolic link is never followed; a character device (Kubernetes' /dev/termination-log)
// is written in place, /dev/stdout and /dev/stderr through trainvisor's own sinks (a pipe too); a
// FIFO or socket is refused. At most `limit` bytes, the last a newline (a text cut at the limit
// loses its last byte to it), with O_NONBLOCK: nothing here waits. true:
// written; false: skipped (no directory, or already there); an Error: "<path>: not written
// (<reason>)" (read-only file system, disk full, a FIFO, a symbolic link).
Result<bool> write_root_cause_file(const std::string& path, const std::string& text,
                                   bool only_if_absent, std::size_t limit);

}  // namespace tv
