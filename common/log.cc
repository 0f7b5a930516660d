#include "common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <nlohmann/json.hpp>

namespace tv {
namespace {

// %j: the message as a JSON string literal (quotes and escapes included).
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string text(msg.payload.data(), msg.payload.size());
    std::string quoted = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(quoted.data(), quoted.data() + quoted.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

void init_logging(LogFormat format) {
  auto logger = spdlog::default_logger();
  if (logger->name() != "trainvisor") {
    logger = std::make_shared<spdlog::logger>("trainvisor",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    spdlog::set_default_logger(logger);
  }
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (format == LogFormat::kJson) {
    formatter->add_flag<JsonMessageFlag>('j').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","logger":"trainvisor","msg":%j})");
  } else {
    formatter->set_pattern("[trainvisor %H:%M:%S.%e %L] %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::info);
}

}  // namespace tv
