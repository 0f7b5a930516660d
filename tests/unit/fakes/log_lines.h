// LogLines: what spdlog logs while it lives (the default logger replaced by a ring buffer of 64
// formatted lines, the old one put back at its end), for tests whose subject decides by a log line.
#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace tv::testing {

class LogLines {
 public:
  LogLines() : old_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink_));
  }
  ~LogLines() { spdlog::set_default_logger(old_); }
  LogLines(const LogLines&) = delete;
  LogLines& operator=(const LogLines&) = delete;
  std::string text() const {
    std::string t;
    for (const auto& l : sink_->last_formatted()) t += l;
    return t;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_ =
      std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  std::shared_ptr<spdlog::logger> old_;
};

}  // namespace tv::testing
