#include "common/open_files.h"

namespace tv {

OpenFileLimit open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return {};
  return {static_cast<std::uint64_t>(r.rlim_cur), static_cast<std::uint64_t>(r.rlim_max)};
}

OpenFileRaise raise_open_file_limit() {
  OpenFileRaise out;
  out.before = open_file_limit();
  out.after = out.before;
  if (out.before.soft >= out.before.hard) return out;
  rlimit r{static_cast<rlim_t>(out.before.hard), static_cast<rlim_t>(out.before.hard)};
  if (::setrlimit(RLIMIT_NOFILE, &r) == 0) out.after = open_file_limit();
  return out;
}

}  // namespace tv
