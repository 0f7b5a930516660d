#include "common/worker_line.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tv {
namespace {

using nlohmann::json;

json parsed(const std::string& text) {
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  return json::parse(text);
}

TEST(WorkerLine, CarriesRankStreamTimeAndTheLine) {
  const auto t = std::chrono::system_clock::from_time_t(1700000000) + std::chrono::milliseconds(42);
  const json j = parsed(worker_line_json(7, WorkerStream::kStderr, "loss 0.5", t));
  EXPECT_EQ(j["rank"], 7);
  EXPECT_EQ(j["stream"], "stderr");
  EXPECT_EQ(j["logger"], "worker");
  EXPECT_EQ(j["line"], "loss 0.5");
  const std::string time = j["time"];
  EXPECT_EQ(time.size(), std::string("2023-11-14T22:13:20.042+0000").size()) << time;
  EXPECT_EQ(time.substr(19, 4), ".042") << time;
  EXPECT_EQ(parsed(worker_line_json(0, WorkerStream::kStdout, "", t))["stream"], "stdout");
}

TEST(WorkerLine, APieceThatContinuesACutLineSaysSo) {
  const auto t = std::chrono::system_clock::now();
  EXPECT_FALSE(parsed(worker_line_json(0, WorkerStream::kStdout, "a", t)).contains("continued"));
  const json j = parsed(worker_line_json(0, WorkerStream::kStdout, "b", t, true));
  EXPECT_EQ(j["continued"], true);
  EXPECT_EQ(j["line"], "b");
}

TEST(WorkerLine, ControlCharactersAreEscapedAndInvalidUtf8IsReplaced) {
  const auto now = std::chrono::system_clock::now();
  const std::string raw = std::string("50%\r75%\t\x01 ") + "\xff\xfe end \"q\" \\";
  const std::string text = worker_line_json(1, WorkerStream::kStdout, raw, now);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("\\r"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << text;
  const json j = parsed(text);
  EXPECT_EQ(j["line"], "50%\r75%\t\x01 \xEF\xBF\xBD\xEF\xBF\xBD end \"q\" \\");
}

}  // namespace
}  // namespace tv
