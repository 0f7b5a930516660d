#include "common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "common/escape.h"
#include "common/log_writer.h"
#include "common/output_sink.h"

namespace tv {
namespace {

// The extra members of the record being formatted on this thread (log_info_with_fields): the
// default logger is synchronous, so its formatter runs on the thread that logs.
thread_local const nlohmann::json* t_fields = nullptr;

// %J (a letter spdlog does not use): `,"key":value` for each extra member, nothing when there is
// none.
class JsonFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    if (!t_fields || !t_fields->is_object()) return;
    for (const auto& [key, value] : t_fields->items()) {
      if (key == "time" || key == "level" || key == "logger" || key == "msg") continue;
      // Appended piece by piece (GCC 12's -O3 -Wrestrict misreads `"," + std::string&&`).
      const auto dump = [](const nlohmann::json& j) {
        return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      };
      const std::string k = dump(nlohmann::json(key)), v = dump(value);
      dest.push_back(',');
      dest.append(k.data(), k.data() + k.size());
      dest.push_back(':');
      dest.append(v.data(), v.data() + v.size());
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonFieldsFlag>();
  }
};

// %j: the message as a JSON string literal (quotes and escapes included).
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string text(msg.payload.data(), msg.payload.size());
    std::string quoted =
        nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(quoted.data(), quoted.data() + quoted.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

// %Q: the message with its control characters escaped; a message of several lines continues on
// lines indented by two spaces, so no text inside a message (a host name, a worker's error) can
// start a line that reads as one of trainvisor's own log lines.
class EscapedMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string text = escape_control_keep_lines({msg.payload.data(), msg.payload.size()});
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
      out += c;
      if (c == '\n') out += "  ";
    }
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<EscapedMessageFlag>();
  }
};

// Log lines go through the stderr OutputSink, the one writer of fd 2, so they never interleave
// with forwarded worker lines.
class StderrLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    stderr_sink().push(std::string_view(buf.data(), buf.size()));
  }
  void flush_() override { stderr_sink().flush(std::chrono::seconds(2)); }
};

}  // namespace

void flush_logs() {
  // The per-rank log files first (a slow disk costs at most 2 s), then the console.
  if (!log_writer().flush(std::chrono::seconds(2)))
    spdlog::warn(
        "log files: {} bytes of the workers' output not written: the log disk took more "
        "than 2 s",
        log_writer().pending_bytes());
  stdout_sink().flush(std::chrono::seconds(5));
  stderr_sink().flush(std::chrono::seconds(5));
}

void log_info_with_fields(const std::string& text, const nlohmann::json& fields) {
  t_fields = &fields;
  spdlog::info("{}", text);
  t_fields = nullptr;
}

void init_logging(LogFormat format) {
  auto logger = spdlog::default_logger();
  if (logger->name() != "trainvisor") {
    logger = std::make_shared<spdlog::logger>("trainvisor", std::make_shared<StderrLineSink>());
    spdlog::set_default_logger(logger);
  }
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (format == LogFormat::kJson) {
    formatter->add_flag<JsonMessageFlag>('j');
    formatter->add_flag<JsonFieldsFlag>('J').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","logger":"trainvisor","msg":%j%J})");
  } else {
    formatter->add_flag<EscapedMessageFlag>('Q').set_pattern("[trainvisor %H:%M:%S.%e %L] %Q");
  }
  logger->set_formatter(std::move(formatter));
}

}  // namespace tv
