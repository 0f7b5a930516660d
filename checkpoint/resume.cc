#include "checkpoint/resume.h"

#include <spdlog/spdlog.h>

#include <string_view>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/discovery.h"
#include "common/did_you_mean.h"
#include "common/escape.h"
#include "common/exit_codes.h"

namespace tv {

namespace {

bool from_cut_family(const Tree& tree, const Selection& s) {
  if (!s.checkpoint) return false;
  for (const std::uint32_t d : tree.cut_families)
    if (s.checkpoint->path.starts_with(tree.dirs[d].path + "/")) return true;
  return false;
}

}  // namespace

Selection lookup_checkpoint(const ResumeRequest& request, CheckpointFs& fs) {
  if (request.dir.empty()) return {};
  if (!validate_checkpoint_format(request.format)) {
    spdlog::warn("checkpoint: --checkpoint-format '{}' is not valid; not resuming", request.format);
    return {};
  }
  Selection s;
  try {
    SelectOptions options{request.mode, request.settle};
    options.experiment = {request.experiment, request.task};
    options.step_over = request.step_over;
    // First over the newest of every large family of numbered directories; again over all of
    // them when the answer does not come from one of the cut families' directories (their newest
    // were all incomplete, or another run won: an older member might then be the answer).
    const Tree cut = walk_tree(fs, request.dir, true);
    s = select_checkpoint(fs, cut, request.format, options);
    if (!cut.cut_families.empty() && !from_cut_family(cut, s))
      s = select_checkpoint(fs, walk_tree(fs, request.dir), request.format, options);
  } catch (const std::exception& e) {  // e.g. bad_alloc: the job goes on without resuming
    spdlog::error("checkpoint: searching {} failed: {}; not resuming", request.dir, e.what());
    return {};
  }
  const std::string dir = escape_control(request.dir);
  if (fs.stopping()) {
    spdlog::info("checkpoint: the resume lookup under {} was stopped (a signal): not resuming",
                 dir);
    return {};
  }
  if (s.none == Selection::None::kEmpty) s.why_none = "no checkpoint yet under " + dir;
  if (s.none == Selection::None::kIncomplete) s.why_none = "no complete checkpoint under " + dir;
  if (s.none == Selection::None::kUnrecognized) s.why_none = dir + ": " + s.why_none;
  return s;
}

namespace {

// run's lookups say why they do not resume, at every start; `checkpoint latest` prints why_none
// itself, once.
Selection said_why_not(Selection s) {
  if (s.none == Selection::None::kUnrecognized || s.none == Selection::None::kAmbiguous ||
      s.none == Selection::None::kOtherExperiments)
    spdlog::warn("checkpoint: not resuming: {}", s.why_none);
  return s;
}

}  // namespace

std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request, CheckpointFs& fs) {
  return said_why_not(lookup_checkpoint(request, fs)).checkpoint;
}

Selection lookup_resume_checkpoint(const ResumeRequest& request) {
  RealCheckpointFs fs;
  fs.set_stop(request.stop);
  return said_why_not(lookup_checkpoint(request, fs));
}

std::optional<Checkpoint> find_resume_checkpoint(const ResumeRequest& request) {
  return lookup_resume_checkpoint(request).checkpoint;
}

namespace {

// The format words of kCheckpointFormats ("dcp (torchtitan)": both), for did_you_mean.
std::vector<std::string> format_words() {
  std::vector<std::string> words;
  std::string word;
  for (const char* c = kCheckpointFormats; *c; ++c) {
    if (std::string_view(" ,()").find(*c) == std::string_view::npos) {
      word += *c;
      continue;
    }
    if (!word.empty() && !word.starts_with("glob:")) words.push_back(word);
    word.clear();
  }
  return words;
}

}  // namespace

Status validate_checkpoint_format(const std::string& format, const std::string& option) {
  if (format.starts_with("glob:")) {
    std::string why;
    if (valid_glob_spec(format.substr(5), &why)) return ok_status();
    return Error{ErrorKind::kConfig, option + ": '" + format + "': " + why};
  }
  if (layouts_of_format(format) != 0) return ok_status();
  return Error{ErrorKind::kConfig, option + ": '" + escape_control(format) + "'" +
                                       did_you_mean(format, format_words()) + ": expected one of " +
                                       std::string(kCheckpointFormats)};
}

namespace {

std::string dir_of(const Checkpoint& c) { return c.directory ? c.path : parent_of(c.path); }

// Expands one template; `c` null: only checks the placeholders. false: unknown placeholder.
bool expand(const std::string& tmpl, const Checkpoint* c, std::string& out, bool& any,
            std::string& bad) {
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl.compare(i, 2, "{{") == 0 || tmpl.compare(i, 2, "}}") == 0) {
      out += tmpl[i++];
      continue;
    }
    if (tmpl[i] != '{') {
      out += tmpl[i];
      continue;
    }
    const auto close = tmpl.find('}', i);
    const std::string name =
        close == std::string::npos ? tmpl.substr(i) : tmpl.substr(i + 1, close - i - 1);
    std::string value;
    if (name.empty() || name == "path")
      value = c ? c->path : "";
    else if (name == "file")
      value = c ? base_of(c->path) : "";
    else if (name == "dir")
      value = c ? dir_of(*c) : "";
    else if (name == "run")
      value = c ? c->run : "";
    else if (name == "run_dir")
      value = c ? c->run_dir : "";
    else if (name == "step")
      value = c && c->step >= 0 ? std::to_string(c->step) : "";
    else {
      bad = close == std::string::npos ? tmpl.substr(i) : "{" + name + "}";
      return false;
    }
    out += value;
    any = true;
    i = close;
  }
  return true;
}

std::vector<std::string> words(const std::string& tmpl) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < tmpl.size()) {
    while (i < tmpl.size() && tmpl[i] == ' ') ++i;
    const std::size_t end = std::min(tmpl.find(' ', i), tmpl.size());
    if (end > i) out.push_back(tmpl.substr(i, end - i));
    i = end;
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_resume_arg(const std::string& tmpl, const Checkpoint& c) {
  std::vector<std::string> out;
  bool any = false;
  for (const auto& w : words(tmpl)) {
    std::string expanded, bad;
    if (!expand(w, &c, expanded, any, bad)) expanded = w;
    out.push_back(std::move(expanded));
  }
  if (!any) out.push_back(c.path);
  return out;
}

Status validate_resume_arg(const std::string& tmpl) {
  std::string out, bad;
  bool any = false;
  if (expand(tmpl, nullptr, out, any, bad)) return ok_status();
  return Error{ErrorKind::kConfig, "--resume-arg: unknown placeholder " + bad + " in '" + tmpl +
                                       "' (use {}, {path}, {file}, {dir}, {run}, {run_dir}, "
                                       "{step}; {{ and }} for braces)"};
}

}  // namespace tv
