#include "launcher/supervision/root_cause.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/file_system.h"

namespace tv {
namespace {

double to_seconds(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return std::stod(v.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return 0;
}

std::string how_it_ended(const FailureRecord& f) {
  if (f.hang) return "hang (no output or heartbeat)";
  if (f.signal) {
    const char* name = ::sigabbrev_np(f.signal);
    return "signal " + std::to_string(f.signal) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exit " + std::to_string(f.exit_code);
}

}  // namespace

std::optional<ErrorFileInfo> parse_error_file(const std::string& json_text) {
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return std::nullopt;
  ErrorFileInfo info;
  const auto& m = j["message"];
  if (m.is_string()) {
    info.message = m.get<std::string>();
  } else if (m.is_object()) {
    info.message = m.value("message", std::string());
    if (m.contains("extraInfo") && m["extraInfo"].is_object()) {
      const auto& extra = m["extraInfo"];
      info.traceback = extra.value("py_callstack", std::string());
      if (extra.contains("timestamp")) info.timestamp = to_seconds(extra["timestamp"]);
    }
  } else {
    return std::nullopt;
  }
  return info;
}

std::optional<ErrorFileInfo> read_error_file(const std::string& path) {
  auto text = RealFileSystem().read(path, nullptr);
  if (!text) return std::nullopt;
  return parse_error_file(*text);
}

std::string summary_line(const FailureRecord& f) {
  std::ostringstream out;
  out << "rank " << f.rank << " (node " << f.node_rank << ", local " << f.local_rank
      << "): " << how_it_ended(f);
  if (f.error && !f.error->message.empty()) {
    out << ": " << f.error->message;
  } else if (!f.tail.empty()) {
    out << ": " << f.tail.back();
  }
  return out.str();
}

std::string detail_text(const FailureRecord& f) {
  std::ostringstream out;
  out << summary_line(f) << "\n";
  if (f.error && !f.error->traceback.empty()) {
    out << f.error->traceback;
    if (f.error->traceback.back() != '\n') out << "\n";
  } else if (!f.tail.empty()) {
    out << "last lines of output:\n";
    for (const auto& l : f.tail) out << "  " << l << "\n";
  }
  return out.str();
}

std::string format_failure_table(const std::vector<FailureRecord>& causes) {
  std::ostringstream out;
  out << "attempt  rank  node  exit  root cause\n";
  for (const auto& f : causes) {
    char row[64];
    std::snprintf(row, sizeof row, "%-7d  %-4d  %-4d  %-4d  ", f.generation, f.rank, f.node_rank,
                  f.exit_code);
    std::string why = f.error && !f.error->message.empty() ? f.error->message
                      : !f.tail.empty()                    ? f.tail.back()
                                                           : how_it_ended(f);
    out << row << how_it_ended(f) << (why == how_it_ended(f) ? "" : ": " + why) << "\n";
  }
  return out.str();
}

bool write_root_cause_file(const std::string& path, const std::string& text, bool only_if_absent,
                           std::size_t limit) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (!fs::is_directory(target.parent_path().empty() ? "." : target.parent_path(), ec)) return false;
  if (only_if_absent && fs::exists(target, ec)) return false;
  const std::string body = text.substr(0, limit);
  // /dev/termination-log is a bind-mounted file: write in place. Regular paths: temp + rename.
  const bool in_place = fs::exists(target, ec) && !fs::is_regular_file(target, ec);
  const std::string tmp = in_place ? path : path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
  ok = ::close(fd) == 0 && ok;
  if (in_place) return ok;
  // only_if_absent: link(2) fails with EEXIST instead of replacing a reason written meanwhile.
  const bool placed = ok && (only_if_absent ? ::link(tmp.c_str(), path.c_str()) == 0
                                            : ::rename(tmp.c_str(), path.c_str()) == 0);
  ::unlink(tmp.c_str());
  return placed;
}

}  // namespace tv
