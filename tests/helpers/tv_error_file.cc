// tv_error_file MESSAGE CODE [DELAY_MS [TIMESTAMP]]: after DELAY_MS (default 0), writes the JSON
// that torch.distributed.elastic's @record (errors/error_handler.py, torch 1.13) writes to
// $TORCHELASTIC_ERROR_FILE:
//   {"message": {"message": MESSAGE, "extraInfo": {"py_callstack": "...", "timestamp": "<secs>"}}}
// (TIMESTAMP overrides the unix seconds), prints MESSAGE to stderr and exits CODE.
// Exits 78 when the variable is unset and 73 when the file cannot be written.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string error_json(const std::string& message, const std::string& timestamp) {
  const std::string callstack =
      "Traceback (most recent call last):\n  File \"tv_error_file\", line 1, in <module>\n" +
      message + "\n";
  return "{\"message\": {\"message\": " + json_string(message) +
         ", \"extraInfo\": {\"py_callstack\": " + json_string(callstack) +
         ", \"timestamp\": " + json_string(timestamp) + "}}}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tv_error_file MESSAGE CODE [DELAY_MS [TIMESTAMP]]\n");
    return 64;
  }
  const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "tv_error_file: TORCHELASTIC_ERROR_FILE is not set\n");
    return 78;
  }
  const long delay_ms = argc > 3 ? std::atol(argv[3]) : 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  const std::string timestamp =
      argc > 4 ? argv[4] : std::to_string(static_cast<long long>(std::time(nullptr)));
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    std::perror("tv_error_file: open TORCHELASTIC_ERROR_FILE");
    return 73;
  }
  const std::string json = error_json(argv[1], timestamp);
  std::fputs(json.c_str(), f);
  if (std::fclose(f) != 0) return 73;
  std::fprintf(stderr, "%s\n", argv[1]);
  return std::atoi(argv[2]);
}
