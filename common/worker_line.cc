#include "common/worker_line.h"

#include <ctime>
#include <nlohmann/json.hpp>

namespace tv {
namespace {

// "YYYY-mm-ddTHH:MM:SS" and "+zzzz" of one second, kept for the lines of that second (localtime_r
// takes the time zone's lock: once a second, not once a line).
struct SecondText {
  std::time_t second = -1;
  char date[32] = {};
  char zone[8] = {};
};

const SecondText& second_text(std::time_t t) {
  thread_local SecondText cache;
  if (cache.second != t) {
    std::tm tm{};
    ::localtime_r(&t, &tm);
    std::strftime(cache.date, sizeof cache.date, "%Y-%m-%dT%H:%M:%S", &tm);
    std::strftime(cache.zone, sizeof cache.zone, "%z", &tm);
    cache.second = t;
  }
  return cache;
}

void append_time(std::string& out, std::chrono::system_clock::time_point time) {
  const auto since = time.time_since_epoch();
  const auto seconds = std::chrono::floor<std::chrono::seconds>(since);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since - seconds).count();
  const SecondText& s = second_text(static_cast<std::time_t>(seconds.count()));
  const char millis[] = {'.', static_cast<char>('0' + ms / 100),
                         static_cast<char>('0' + ms / 10 % 10), static_cast<char>('0' + ms % 10)};
  out += s.date;
  out.append(millis, sizeof millis);
  out += s.zone;
}

// Printable ASCII without '"' or '\\': JSON's string is the text itself between quotes. Most
// lines are; the others go through nlohmann_json's escaping.
bool needs_no_escape(std::string_view line) {
  for (const char c : line)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

void append_string(std::string& out, std::string_view line) {
  if (needs_no_escape(line)) {
    out += '"';
    out += line;
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(line))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string worker_line_json(int rank, WorkerStream stream, std::string_view line,
                             std::chrono::system_clock::time_point time, bool continued) {
  std::string out;
  out.reserve(line.size() + 112);
  out += R"({"time":")";
  append_time(out, time);
  out += R"(","logger":"worker","rank":)";
  out += std::to_string(rank);
  out += stream == WorkerStream::kStdout ? R"(,"stream":"stdout",)" : R"(,"stream":"stderr",)";
  if (continued) out += R"("continued":true,)";
  out += R"("line":)";
  append_string(out, line);
  out += '}';
  return out;
}

}  // namespace tv
