// `trainvisor checkpoint latest --dir D [--format F] [--resume latest|best] [--json]
// [--resume-arg T]`: the newest complete checkpoint's path (and with T a second line, what T
// becomes as shell words) (exit 0), none (exit 1), bad --format (78), usage (64).
// `trainvisor checkpoint watch --dir D [--format F] [--poll-interval S] [--polling]`: the
// watcher alone, one JSON line per new complete checkpoint (diagnostics, benchmarks, a sidecar),
// until SIGTERM/INT, its way to end: exit 0; SIGHUP: 129. A signal before the watch starts (while
// the options are read) ends it with 128+N like any command at start-up.
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_fs.h"
#include "checkpoint/resume.h"
#include "checkpoint/watcher.h"
#include "cli/commands.h"
#include "cli/option_tables.h"
#include "common/escape.h"
#include "common/exit_codes.h"
#include "common/init.h"
#include "common/json_text.h"
#include "common/options.h"
#include "common/shell_word.h"

namespace tv {
namespace {

const char* const kUsage =
    "usage: trainvisor checkpoint latest --dir D [--format F] [--resume latest|best]\n"
    "                                    [--settle S] [--json] [--resume-arg TEMPLATE]\n"
    "       trainvisor checkpoint watch --dir D [--format F] [--poll-interval S] [--polling]\n"
    "       trainvisor checkpoint link-logs --dir D LOG_DIR   (what run --link-logs does)\n";

// `checkpoint latest --resume`: which checkpoint it prints (run's --resume adds none).
constexpr Choice<Pick> kPickWords[] = {{"latest", Pick::kLatest}, {"best", Pick::kBest}};

}  // namespace

std::vector<OptionSpec> checkpoint_option_specs() {
  using T = OptionType;
  return {
      {.name = "dir", .help = "checkpoint directory", .metavar = "DIR"},
      {.name = "format", .help = kCheckpointFormats, .default_value = "auto", .metavar = "FORMAT"},
      {.name = "resume-arg",
       .help = "latest: also print what --resume-arg TEMPLATE becomes",
       .metavar = "TEMPLATE"},
      {.name = "resume",
       .type = T::kChoice,
       .help = "latest: which checkpoint",
       .default_value = "latest",
       .words = words_of(kPickWords)},
      {.name = "settle",
       .type = T::kSeconds,
       .help = "seconds a .pt must be unchanged to count as complete",
       .default_value = "2",
       .max = 3600},
      {.name = "json", .type = T::kFlag, .help = "print a JSON object"},
      {.name = "poll-interval",
       .type = T::kSeconds,
       .help = "watch: seconds between rescans",
       .default_value = "2",
       .min = 0.001,
       .max = 3600},
      {.name = "polling", .type = T::kFlag, .help = "watch: do not use inotify"},
      {.name = "help", .type = T::kFlag, .help = "this text"},
  };
}

namespace {

int fail(const Error& e) {
  spdlog::error("{}", e.message);
  return e.exit_code();
}

nlohmann::json to_json(const Checkpoint& c) {
  return {{"path", c.path},
          {"format", c.format},
          {"step", c.step},
          {"bytes", c.bytes},
          {"run", c.run},
          {"run_dir", c.run_dir},
          {"directory", c.directory},
          {"mtime", static_cast<double>(c.mtime_ns) / 1e9}};
}

std::string shell_line(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& w :
       words) {  // piece by piece: GCC 12 -O3 misreads `" " + string&&` (-Wrestrict)
    if (!line.empty()) line += ' ';
    line += shell_word(w);
  }
  return line;
}

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

int latest(const Options& o, const std::string& dir, const std::string& format) {
  auto mode = choice_of(o, "resume", kPickWords);
  if (!mode) return fail(mode.error());
  auto settle = o.get_double("settle");
  if (!settle) return fail(settle.error());
  const auto tmpl = o.get("resume-arg");
  if (tmpl)
    if (auto v = validate_resume_arg(tmpl->value); !v) return fail(v.error());
  RealCheckpointFs fs;
  const Selection found = lookup_checkpoint({dir, format, *mode, millis(*settle)}, fs);
  const auto& c = found.checkpoint;
  if (!c) {
    spdlog::error("{}", found.why_none);
    return exit_code_of(ErrorKind::kFailed);
  }
  nlohmann::json j = to_json(*c);
  const auto args = tmpl ? expand_resume_arg(tmpl->value, *c) : std::vector<std::string>{};
  if (tmpl) j["resume_args"] = args;
  if (o.flag("json")) return std::printf("%s\n", json_text(j).c_str()), exit_code::kOk;
  if (has_control(c->path))  // a newline would make one path read as two: never raw
    return spdlog::error(
               "the newest checkpoint's path holds a control character: {}; use --json for it",
               escape_control(c->path)),
           exit_code_of(ErrorKind::kFailed);
  std::printf("%s\n", c->path.c_str());
  // With --resume-arg, a second line: what TEMPLATE becomes, as shell words (`eval set -- LINE`).
  if (tmpl) std::printf("%s\n", shell_line(args).c_str());
  return exit_code::kOk;
}

int watch(const Options& o, const std::string& dir, const std::string& format) {
  auto interval = o.get_double("poll-interval");
  if (!interval) return fail(interval.error());
  Init::instance().set_phase("checkpoint watch");
  CheckpointWatcher w(
      dir, format,
      [](const CheckpointEvent& e) {
        nlohmann::json j = to_json(e.checkpoint);
        j["write_seconds"] = e.write_seconds;
        j["since_previous_seconds"] = e.since_previous_seconds;
        j["reported"] =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        std::printf("%s\n", json_text(j).c_str());
        std::fflush(stdout);
      },
      millis(*interval), o.flag("polling"));
  // One line once the first scan is over: the watch is on, and what was there is not news.
  w.on_first_scan([&dir](std::size_t complete, double seconds) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      return spdlog::info(
          "checkpoint watch: {} does not exist yet: watching for it to appear; each new "
          "checkpoint follows on stdout",
          escape_control(dir));
    spdlog::info(
        "checkpoint watch: first scan of {} done in {:.2f} s: {} complete checkpoint(s) there "
        "already (not reported); each new one follows on stdout",
        escape_control(dir), seconds, complete);
  });
  // Ends on TERM/INT/HUP, taken by Init like every other command's signals; the watcher starts
  // once they come here. TERM and INT are how a watch is meant to end (a sidecar's pod stopping,
  // Ctrl-C): a clean stop, exit 0.
  const int sig = Init::instance().wait_for_stop_signal([&w] { w.start(); });
  w.stop();
  return sig == SIGTERM || sig == SIGINT ? exit_code::kOk
                                         : exit_code_of(ErrorKind::kStoppedBySignal, sig);
}

}  // namespace

int checkpoint_command(const Args& args, const Environment& env) {
  auto o = parse_options(checkpoint_option_specs(), args, env, ParseMode{});
  if (!o) return fail(o.error());
  if (o->flag("help"))
    return std::printf("%s\n%s", kUsage, format_help(checkpoint_option_specs()).c_str()), 0;
  const auto& words = o->positional;
  const bool link = words.size() == 2 && words[0] == "link-logs";
  if (!link && (words.size() != 1 || (words[0] != "latest" && words[0] != "watch")))
    return std::fprintf(stderr, "%s", kUsage), exit_code_of(ErrorKind::kUsage);
  if (!o->has("dir")) return fail(Error{ErrorKind::kUsage, "--dir is required (see --help)"});
  const std::string dir = o->get("dir")->value;
  if (link) {
    auto linked = link_logs(words[1], dir);
    return linked ? exit_code::kOk : fail(linked.error());
  }
  const std::string format = o->text("format");
  if (auto v = validate_checkpoint_format(format, "--format"); !v) return fail(v.error());
  return words[0] == "latest" ? latest(*o, dir, format) : watch(*o, dir, format);
}

}  // namespace tv
