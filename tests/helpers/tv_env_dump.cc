// tv_env_dump FILE: writes its whole environment as one JSON object {"NAME": "VALUE", ...} to
// FILE_<RANK> ($RANK, or "norank" when unset), atomically (temp file + rename), then exits 0.
// Exits 73 when the file cannot be written.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

std::string json_string(const char* s, size_t n) {
  std::string out = "\"";
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
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

std::string environment_json() {
  std::string out = "{";
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    if (out.size() > 1) out += ",\n ";
    out += json_string(*e, static_cast<size_t>(eq - *e)) + ": " +
           json_string(eq + 1, std::strlen(eq + 1));
  }
  return out + "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tv_env_dump FILE\n");
    return 64;
  }
  const char* rank = std::getenv("RANK");
  const std::string path = std::string(argv[1]) + "_" + (rank != nullptr ? rank : "norank");
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    std::perror(("tv_env_dump: open " + tmp).c_str());
    return 73;
  }
  const std::string json = environment_json();
  const bool ok = std::fputs(json.c_str(), f) >= 0;
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::perror(("tv_env_dump: write " + path).c_str());
    return 73;
  }
  return 0;
}
