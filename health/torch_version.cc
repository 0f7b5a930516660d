#include "health/torch_version.h"

#include <string_view>
#include <vector>

#include "common/parse_number.h"
#include "health/subprocess.h"

namespace tv {
namespace {

// find_spec of a top-level package locates it without executing it; version.py is read as text.
// A module (argv[1]) is looked up by its top-level name only: find_spec of a dotted name imports
// its parent packages, which runs their code. A relative name or an error other than "not found"
// (a bad name) says "found": only a definite absence refuses the run.
constexpr const char* kScript = R"PY(
import importlib.util as u, os, re, sys
if len(sys.argv) > 1:
    try:
        top = sys.argv[1].split('.')[0]
        found = not top or u.find_spec(top) is not None
    except Exception:
        found = True
    print('module=' + ('found' if found else 'missing'))
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

WorkersPython ask_workers_python(const std::string& python, const Environment& env,
                                 const std::string& module, std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {python, "-c", kScript};
  if (!module.empty()) argv.push_back(module);
  auto out = capture_output(argv, env, timeout);
  if (!out) return {};
  return parse_python_answer(*out);
}

WorkersPython parse_python_answer(const std::string& output) {
  WorkersPython answer;
  std::string torch_lines;
  std::size_t at = 0;
  while (at < output.size()) {
    auto end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    std::string_view line(output.data() + at, end - at);
    at = end + 1;
    if (line.starts_with("module=")) {
      const auto word = line.substr(7, line.find_first_of("\r ", 7) - 7);
      if (word == "found" || word == "missing") answer.module_found = word == "found";
    } else {
      torch_lines.append(line).push_back('\n');
    }
  }
  answer.torch = parse_torch_answer(torch_lines);
  return answer;
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
