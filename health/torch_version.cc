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
            text = f.read()
    except OSError:
        continue
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    if m:
        print(m.group(1))
        c = re.search(r"^cuda\s*(?::[^=\n]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        print('cuda=' + (c.group(1) if c else ''))
        try:
            names = os.listdir(os.path.dirname(d))
        except OSError:
            names = []
        n = sorted(x[x.index('-') + 1:-len('.dist-info')] for x in names
                   if re.match(r'nvidia_nccl_cu\d+-[^-]+\.dist-info$', x))
        print('nccl=' + (n[-1] if n else ''))
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
  return TorchVersion{*major, *minor, text, "", ""};
}

std::optional<TorchVersion> detect_torch_version(const std::string& python, const Environment& env,
                                                 std::chrono::milliseconds timeout) {
  auto out = capture_output({python, "-c", kScript}, env, timeout);
  if (!out) return std::nullopt;
  return parse_torch_answer(*out);
}

std::optional<TorchVersion> parse_torch_answer(const std::string& output) {
  std::optional<TorchVersion> v;
  std::size_t at = 0;
  while (at < output.size()) {
    auto end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(at, end - at);
    at = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!v) {
      v = parse_torch_version(line);
      if (!v) return std::nullopt;
    } else if (line.rfind("cuda=", 0) == 0) {
      v->cuda = line.substr(5);
    } else if (line.rfind("nccl=", 0) == 0) {
      v->nccl = line.substr(5);
    }
  }
  return v;
}

}  // namespace tv
