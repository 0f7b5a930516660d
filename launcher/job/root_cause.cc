#include "launcher/job/root_cause.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/bounded_read.h"
#include "common/escape.h"
#include "common/exit_codes.h"
#include "common/json_field.h"
#include "common/json_parse.h"
#include "common/parse_number.h"
#include "common/whole_file.h"

namespace tv {
namespace {

double to_seconds(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return parse_finite(v.get_ref<const std::string&>(), 0, 1e12).value_or(0);
  return 0;
}

// trainvisor's own exit codes (docs/exit-codes.md). A worker that exits with one of them has it
// passed up as it is; the root cause says whose code it is, so nobody reads it as trainvisor's.
const char* own_meaning(int code) {
  switch (code) {
    case exit_code_of(ErrorKind::kUsage):
      return "usage error";
    case exit_code_of(ErrorKind::kPreflightFailed):
      return "preflight failed";
    case exit_code_of(ErrorKind::kLost):
      return "a node was lost, retry the job";
    case exit_code_of(ErrorKind::kConfig):
      return "configuration error";
    case exit_code_of(ErrorKind::kHang):
      return "hang";
    default:
      return nullptr;
  }
}

std::string how_it_ended(const FailureRecord& f) {
  if (f.hang && !f.hang_reason.empty()) return "hang (" + f.hang_reason + ")";
  if (f.hang) return "hang (no output or heartbeat)";
  if (f.signal) {
    const char* name = ::sigabbrev_np(f.signal);
    const std::string sig =
        "signal " + std::to_string(f.signal) + (name ? std::string(" (SIG") + name + ")" : "");
    return f.out_of_memory.empty() ? sig : f.out_of_memory + ", " + sig;
  }
  const std::string code = std::to_string(f.exit_code);
  if (const char* meaning = own_meaning(f.exit_code))
    return "exit " + code + " (the worker's own exit code, not trainvisor's " + code + ": " +
           meaning + ")";
  return "exit " + code;
}

}  // namespace

std::optional<ErrorFileInfo> parse_error_file(const std::string& json_text) {
  auto j = parse_json_or_discarded(json_text);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return std::nullopt;
  ErrorFileInfo info;
  const auto& m = j["message"];
  if (m.is_string()) {
    info.message = m.get<std::string>();
  } else if (m.is_object()) {
    info.message = json_field(m, "message", std::string());
    if (m.contains("extraInfo") && m["extraInfo"].is_object()) {
      const auto& extra = m["extraInfo"];
      info.traceback = json_field(extra, "py_callstack", std::string());
      if (extra.contains("timestamp")) info.timestamp = to_seconds(extra["timestamp"]);
    }
  } else {
    return std::nullopt;
  }
  return info;
}

std::optional<ErrorFileInfo> read_error_file(const FileSystem& fs, const std::string& path,
                                             std::string* why) {
  if (!fs.exists(path)) return std::nullopt;  // no error file: the usual case
  std::string reason;
  auto text = fs.read(path, kConfigFileCap, &reason);
  if (!text) {
    if (why) *why = path + ": " + reason;
    return std::nullopt;
  }
  return parse_error_file(*text);
}

std::optional<std::chrono::system_clock::time_point> error_file_written(const FileSystem& fs,
                                                                        const std::string& path) {
  if (!fs.regular_size(path)) return std::nullopt;
  const auto ns = fs.modified_ns(path);
  if (!ns) return std::nullopt;
  return wall_time(*ns);
}

std::string root_cause_line(const FailureRecord& f) {
  if (f.error && !f.error->message.empty()) return f.error->message;
  if (!f.traceback.empty()) return f.traceback.back();
  return f.tail.empty() ? std::string() : f.tail.back();
}

std::string summary_line(const FailureRecord& f) {
  std::ostringstream out;
  out << "rank " << f.rank << " (node " << f.node_rank << ", local " << f.local_rank
      << "): " << how_it_ended(f);
  if (const std::string why = root_cause_line(f); !why.empty()) out << ": " << escape_control(why);
  return out.str();
}

std::string detail_text(const FailureRecord& f) {
  std::ostringstream out;
  out << summary_line(f) << "\n" << escape_control_keep_lines(f.evidence);
  if (f.error && !f.error->traceback.empty()) {
    out << escape_control_keep_lines(f.error->traceback);
    if (f.error->traceback.back() != '\n') out << "\n";
  } else if (!f.traceback.empty()) {
    for (const auto& l : f.traceback) out << escape_control_keep_lines(l) << "\n";
  } else if (!f.tail.empty()) {
    out << "last lines of output:\n";
    for (const auto& l : f.tail) out << "  " << escape_control(l) << "\n";
  }
  return out.str();
}

std::string failure_table_row(int generation, int rank, int node_rank, int exit_code,
                              const std::string& cause) {
  char row[64];
  std::snprintf(row, sizeof row, "%-10d  %-4s  %-4d  %-4d  ", generation,
                rank < 0 ? "-" : std::to_string(rank).c_str(), node_rank, exit_code);
  return row + escape_control(cause) + "\n";
}

std::string format_failure_table(const std::vector<FailureRecord>& causes) {
  std::string out = kFailureTableHeader;
  for (const auto& f : causes) {
    const std::string why = root_cause_line(f);
    const std::string ended = how_it_ended(f);
    out += failure_table_row(f.generation, f.rank, f.node_rank, f.exit_code,
                             why.empty() || why == ended ? ended : ended + ": " + why);
  }
  return out;
}

namespace {

// At most `limit` bytes that end with a newline (a text file's last line, what `cat` and `read`
// expect; the limit keeps room for it).
std::string ended_text(const std::string& text, std::size_t limit) {
  if (limit == 0) return "";
  std::string out = text.substr(0, limit);
  if (!out.ends_with('\n')) {
    if (out.size() == limit) out.pop_back();
    out += '\n';
  }
  return out;
}

}  // namespace

Result<bool> write_root_cause_file(const std::string& path, const std::string& text,
                                   bool only_if_absent, std::size_t limit) {
  std::error_code ec;
  const std::filesystem::path target(path);
  if (!standard_stream_of(path) &&
      !std::filesystem::is_directory(target.parent_path().empty() ? "." : target.parent_path(), ec))
    return false;
  return write_whole_file(path, ended_text(text, limit),
                          WholeFileOptions{.only_if_absent = only_if_absent});
}

}  // namespace tv
