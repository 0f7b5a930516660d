// tv_spam LINES [BYTES_PER_LINE]: writes LINES numbered lines to stdout as fast as it can, each
// "rank=$RANK line=N " padded with 'x' to BYTES_PER_LINE bytes (default 100, newline included;
// never shorter than the prefix + newline), then exits 0. Each line is one write(2) call, so a
// launcher that breaks or interleaves lines is caught by the test, not hidden by stdio buffering.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

bool write_all(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(STDOUT_FILENO, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tv_spam LINES [BYTES_PER_LINE]\n");
    return 64;
  }
  const long lines = std::atol(argv[1]);
  const size_t width = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 100;
  const char* rank_env = std::getenv("RANK");
  const std::string rank = rank_env != nullptr ? rank_env : "unset";
  for (long i = 0; i < lines; ++i) {
    std::string line = "rank=" + rank + " line=" + std::to_string(i) + " ";
    if (line.size() + 1 < width) line.append(width - line.size() - 1, 'x');
    line.push_back('\n');
    if (!write_all(line)) return 74;
  }
  return 0;
}
