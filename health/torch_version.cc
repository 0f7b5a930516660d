#include "health/torch_version.h"

#include "common/parse_number.h"
#include "health/subprocess.h"

namespace tv {
namespace {

// find_spec of a top-level package locates it without executing it; version.py is read as text.
constexpr const char* kScript = R"PY(
import importlib.util as u, os, re
try:
    s = u.find_spec('torch')
except Exception:
    s = None
for d in (s.submodule_search_locations or []) if s else []:
    try:
        with open(os.path.join(d, 'version.py')) as f:
            m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
    except OSError:
        continue
    if m:
        print(m.group(1))
        break
)PY";

}  // namespace

std::optional<TorchVersion> parse_torch_version(const std::string& text) {
  const auto dot = text.find('.');
  if (dot == std::string::npos) return std::nullopt;
  auto end = text.find_first_not_of("0123456789", dot + 1);
  if (end == std::string::npos) end = text.size();
  const auto major = parse_integer<int>(text.substr(0, dot), 0, 1000);
  const auto minor = parse_integer<int>(text.substr(dot + 1, end - dot - 1), 0, 1000);
  if (!major || !minor) return std::nullopt;
  return TorchVersion{*major, *minor, text};
}

std::optional<TorchVersion> detect_torch_version(const std::string& python, const Environment& env,
                                                 std::chrono::milliseconds timeout) {
  auto out = capture_output({python, "-c", kScript}, env, timeout);
  if (!out) return std::nullopt;
  while (!out->empty() && (out->back() == '\n' || out->back() == '\r' || out->back() == ' '))
    out->pop_back();
  return parse_torch_version(*out);
}

}  // namespace tv
