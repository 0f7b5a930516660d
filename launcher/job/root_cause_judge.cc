#include "launcher/job/root_cause_judge.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>

#include "common/escape.h"
#include "launcher/job/resume_fallback.h"

namespace tv {
namespace {

constexpr std::size_t kMaxMessage = 512;

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool ends_with(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

// "ValueError: boom" or "torch.cuda.OutOfMemoryError: CUDA out of memory ..." (the last line of a
// Python traceback, torch's @record message): the type and the message; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> exception_line(std::string_view line) {
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front())))
    line.remove_prefix(1);
  std::size_t i = 0;
  while (i < line.size() && (is_ident(line[i]) || line[i] == '.')) ++i;
  const std::string_view type = line.substr(0, i);
  const std::size_t last_dot = type.rfind('.');
  const std::string_view name = type.substr(last_dot == std::string_view::npos ? 0 : last_dot + 1);
  if (name.empty() || !std::isupper(static_cast<unsigned char>(name.front())) ||
      !(ends_with(name, "Error") || ends_with(name, "Exception")))
    return std::nullopt;
  if (i == line.size()) return std::make_pair(std::string(type), std::string());
  if (line[i] != ':') return std::nullopt;
  std::string_view msg = line.substr(i + 1);
  if (!msg.empty() && msg.front() == ' ') msg.remove_prefix(1);
  return std::make_pair(std::string(type), std::string(msg));
}

// python3's own "can't open file '/x/train.py': [Errno 2] No such file or directory" (exit 2).
bool script_missing(std::string_view line) {
  return line.find("can't open file") != std::string_view::npos &&
         line.find("No such file or directory") != std::string_view::npos;
}

// python's own words for `-m MOD` that cannot be found (runpy, exit 1, no traceback):
// "/usr/bin/python3: No module named pkg.mod", or, when a parent package fails to import,
// "/usr/bin/python3: Error while finding module specification for 'pkg.mod'
// (ModuleNotFoundError: No module named 'pkg')". `run` refuses a missing top-level package before
// anything starts (127); a missing submodule ends here, a ModuleNotFoundError (cannot_start).
// The line must start with the interpreter (sys.executable: no space, its name python...), so a
// library's warning that mentions a missing module is not taken for it.
bool module_missing(std::string_view line) {
  const auto colon = line.find(": ");
  if (colon == std::string_view::npos) return false;
  const std::string_view exe = line.substr(0, colon), rest = line.substr(colon + 2);
  const auto slash = exe.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? exe : exe.substr(slash + 1);
  return exe.find(' ') == std::string_view::npos && name.starts_with("python") &&
         (rest.starts_with("No module named ") ||
          rest.starts_with("Error while finding module specification for "));
}

bool mentions_cuda_oom(std::string_view text) {
  return text.find("CUDA out of memory") != std::string_view::npos ||
         text.find("OutOfMemoryError") != std::string_view::npos ||
         text.find("CUDA error: out of memory") != std::string_view::npos;
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

bool path_start(std::string_view s, std::size_t i) {
  const bool boundary =
      i == 0 || std::string_view(" \t'\"(=:,[").find(s[i - 1]) != std::string_view::npos;
  if (!boundary) return false;
  if (s[i] == '/') return i + 1 < s.size() && s[i + 1] != ' ';
  return (s.substr(i, 2) == "./" || s.substr(i, 2) == "~/");
}

bool script_cannot_start(const FailureSignature& s) {
  static const std::array<std::string_view, 6> kStartTypes = {
      "SyntaxError", "IndentationError",    "TabError",
      "ImportError", "ModuleNotFoundError", "can't open file"};
  return !s.step && std::find(kStartTypes.begin(), kStartTypes.end(), s.type) != kStartTypes.end();
}

Verdict give_up(const char* rule, std::string why) {
  return {false, rule, "job: giving up, rule " + std::string(rule) + ": " + std::move(why)};
}

}  // namespace

std::string described(const NodeFailure& f) {
  return "generation " + std::to_string(f.generation) + " (" + f.signature.text() + ")";
}

// The message is the worker's text (an error file's, a traceback's last line): never raw in a
// log line or a failure file.
std::string FailureSignature::text() const {
  const std::string m = escape_control(message);
  std::string t = type.empty() ? (m.empty() ? "no exception recognized" : m)
                               : (m.empty() ? type : type + ": " + m);
  return t + (step ? " at step " + std::to_string(*step) : " before any progress");
}

std::optional<LocalFailure> earliest_local_failure(const std::vector<LocalFailure>& candidates) {
  if (candidates.empty()) return std::nullopt;
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i)
    if (candidates[i].when() < candidates[best].when()) best = i;
  return candidates[best];
}

std::string normalize_message(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && out.size() < kMaxMessage;) {
    if (path_start(s, i)) {
      while (i < s.size() && std::string_view(" \t'\"),:;]").find(s[i]) == std::string_view::npos)
        ++i;
      out += "<path>";
    } else if (s.substr(i, 2) == "0x" && i + 2 < s.size() &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2])) &&
               (i == 0 || !is_ident(s[i - 1]))) {
      i += 2;
      while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) ++i;
      out += "<addr>";
    } else if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) ||
                              (s[i] == '.' && i + 1 < s.size() &&
                               std::isdigit(static_cast<unsigned char>(s[i + 1])))))
        ++i;
      out += "<n>";
    } else {
      out += s[i++];
    }
  }
  return out;
}

FailureSignature failure_signature(const FailureRecord& rec, std::optional<std::int64_t> step) {
  FailureSignature sig;
  sig.step = step;
  // A hang is no exception, whatever its output said earlier: never "the same failure".
  if (rec.hang) {
    sig.message = "hang";
    return sig;
  }
  // Where the exception is named: torch's @record message, else its traceback's last line, else
  // the last traceback on stderr (a script without @record), else the last lines of output.
  std::vector<std::string> lines;
  if (rec.error) {
    lines.push_back(rec.error->message);
    lines.push_back(last_line(rec.error->traceback));
  }
  if (!rec.traceback.empty()) lines.push_back(rec.traceback.back());
  lines.insert(lines.end(), rec.tail.rbegin(), rec.tail.rend());
  for (const auto& l : lines) {
    sig.cuda_oom = sig.cuda_oom || mentions_cuda_oom(l);
    if (!sig.type.empty()) continue;
    if (auto e = exception_line(l)) {
      sig.type = e->first;
      sig.message = normalize_message(e->second);
    } else if (script_missing(l)) {
      sig.type = "can't open file";
      sig.message = normalize_message(l.substr(l.find("can't open file") + 15));
    } else if (module_missing(l)) {
      sig.type = "ModuleNotFoundError";
      sig.message = normalize_message(l.substr(l.find(": ") + 2));
    }
  }
  if (rec.error) sig.cuda_oom = sig.cuda_oom || mentions_cuda_oom(rec.error->traceback);
  if (sig.type.empty() && !lines.empty()) {
    const auto it =
        std::find_if(lines.begin(), lines.end(), [](const auto& l) { return !l.empty(); });
    if (it != lines.end()) sig.message = normalize_message(*it);
  }
  return sig;
}

void RootCauseJudge::begin(int generation) {
  generation_ = generation;
  root_cause_.reset();
}

RootCauseJudge::Offer RootCauseJudge::offer(const NodeFailure& f) {
  if (f.generation != generation_) return Offer::kStale;
  if (!root_cause_) {
    root_cause_ = f;
    return Offer::kFirst;
  }
  if (f.failed_at_ns > 0 && root_cause_->failed_at_ns > 0 &&
      f.failed_at_ns < root_cause_->failed_at_ns) {
    root_cause_ = f;
    return Offer::kEarlier;
  }
  return Offer::kLater;
}

Verdict RootCauseJudge::verdict(std::optional<std::int64_t> job_step) {
  if (!root_cause_->signature.step) root_cause_->signature.step = job_step;
  const Verdict v = judge(*root_cause_);
  if (!v.step_over.empty()) {
    ++fallbacks_used_;
    stepped_into_ = root_cause_->generation + 1;
    fallbacks_.push_back("generation " + std::to_string(root_cause_->generation + 1) +
                         " stepped over " + v.step_over_why);
  }
  history_.push_back(*root_cause_);
  return v;
}

Verdict RootCauseJudge::judge(const NodeFailure& now) const {
  const std::string here = described(now);
  const NodeFailure* last = !history_.empty() && history_.back().generation == now.generation - 1
                                ? &history_.back()
                                : nullptr;
  // Before "the same failure" gives up: the same failure from the same checkpoint is retried
  // from the one before it (resume_fallback.h), under either --retry-policy.
  if (auto p = poisoned_checkpoint(now, last, fallbacks_used_, fallback_limit_))
    return {true, "poisoned_checkpoint", "job: " + p->line + " (rule poisoned_checkpoint)",
            p->checkpoint, p->line};
  if (mode_ == RetryMode::kAlways)
    return {true, "always", "job: " + here + " failed; --retry-policy always: retried"};
  if (script_cannot_start(now.signature))
    return give_up("cannot_start", here + " failed before any progress: the script cannot start");
  const NodeFailure* before = last;
  if (!before)
    return {true, "first_failure", "job: " + here + " failed; retried (rule first_failure)"};
  const std::string both = here + " and " + described(*before);
  if (now.signature.cuda_oom && before->signature.cuda_oom &&
      now.signature.step == before->signature.step)
    return give_up("cuda_oom_same_step", "CUDA out of memory at the same step: " + both);
  // No exception to compare (a signal, an exit code without a traceback): never "the same
  // failure", and not a different one either, even when both read alike.
  if (now.signature.type.empty())
    return {true, "no_exception",
            "job: " + here + " failed with no exception recognized: not compared with " +
                described(*before) + "; retried (rule no_exception)"};
  // The first failure from the checkpoint before a poisoned one, with fallback left: that
  // checkpoint gets its own kPoisonRepeats generations before it is judged.
  if (now.signature == before->signature && now.generation == stepped_into_ &&
      fallbacks_used_ < fallback_limit_)
    return {true, "fallback_first_failure",
            "job: " + both + " failed the same way from different checkpoints; retried from " +
                escape_control(now.resumed_from) + " once more (rule fallback_first_failure)"};
  if (now.signature == before->signature)
    return give_up("same_failure", "the same failure on consecutive generations: " + both);
  return {true, "different_failure",
          "job: " + here + " differs from " + described(*before) +
              "; retried (rule different_failure)"};
}

std::string with_decision(const std::string& text, const NodeFailure& f, bool recent) {
  const std::size_t nl = text.find('\n');
  std::string out = text.substr(0, nl == std::string::npos ? text.size() : nl) + "\n";
  if (!f.culprit.empty()) out += "culprit: " + f.culprit + "\n";  // the job's, culprit.h
  if (!f.verdict.empty()) out += f.verdict + "\n";
  if (!f.fallbacks.empty()) {
    out += "checkpoints stepped over (--resume-fallback):\n";
    for (const auto& l : f.fallbacks) out += "  " + l + "\n";
  }
  if (recent && !f.recent.empty()) {
    out += "last generations' root causes:\n";
    for (const auto& r : f.recent) out += "  " + r + "\n";
  }
  if (nl != std::string::npos) out += text.substr(nl + 1);
  return out;
}

std::vector<std::string> RootCauseJudge::recent(std::size_t n) const {
  std::vector<std::string> out;
  const std::size_t from = history_.size() > n ? history_.size() - n : 0;
  for (std::size_t i = from; i < history_.size(); ++i)
    out.push_back("generation " + std::to_string(history_[i].generation) + ": " +
                  history_[i].summary);
  return out;
}

}  // namespace tv
