// `trainvisor report --ledger FILE [--html OUT]`: where a job's GPU-hours went, from its ledger
// (docs/observability.md, "Where the hours went"); --ledger DIR: the one ledger in that directory
// (named on stderr; none or several: one error). The text form on stdout; with --html also one
// self-contained page written whole (common/whole_file.h). The ledger is input from outside: read
// as a regular file with the ledger's own cap (a FIFO, /dev/zero or a huge file is refused at
// once), parsed strictly (a corrupt or truncated one: one line naming the file and what is wrong,
// exit 78), and everything from it escaped in both forms.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/option_tables.h"
#include "common/bounded_read.h"
#include "common/exit_codes.h"
#include "common/file_system.h"
#include "common/whole_file.h"
#include "launcher/observability/job_report.h"
#include "launcher/observability/ledger_file.h"
#include "launcher/observability/ledger_find.h"
#include "launcher/observability/report_render.h"

namespace tv {

std::vector<OptionSpec> report_option_specs() {
  using T = OptionType;
  return {
      {.name = "ledger",
       .help = "the job's ledger: .trainvisor-ledger-*.json in its checkpoint dir, or that dir "
               "when it holds exactly one (docs/observability.md, \"Where the hours went\")",
       .metavar = "FILE|DIR"},
      {.name = "html",
       .help = "also write the report as one self-contained HTML page",
       .metavar = "OUT"},
      {.name = "help", .type = T::kFlag, .help = "this text", .short_name = "h"},
  };
}

namespace {

constexpr const char* kUsage = "usage: trainvisor report --ledger FILE|DIR [--html OUT]\n";

int fail(int code, const std::string& message) {
  spdlog::error("{}", message);
  return code;
}

// A directory: the one ledger in it, named on stderr.
Result<std::string> ledger_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return path;
  auto found = ledger_in_directory(path, RealFileSystem().list(path));
  if (found) spdlog::info("report: the ledger in {}: {}", path, *found);
  return found;
}

Result<Ledger> read_ledger(const std::string& given) {
  auto path = ledger_path(given);
  if (!path) return path.error();
  auto text = read_regular_file(*path, kLedgerFileCap);
  if (!text) return text.error();  // names the path
  auto ledger = parse_ledger(*text);
  if (!ledger) return Error{ledger.error().kind, *path + ": " + ledger.error().message};
  return ledger;
}

}  // namespace

int report_command(const Args& args, const Environment& env) {
  const auto specs = report_option_specs();
  auto o = parse_options(specs, args, env, ParseMode{.use_env = false});
  if (!o) return fail(o.error().exit_code(), o.error().message);
  if (o->flag("help")) return std::printf("%s\n%s", kUsage, format_help(specs).c_str()), 0;
  if (!o->positional.empty())
    return fail(exit_code_of(ErrorKind::kUsage), "unexpected argument '" + o->positional[0] + "'");
  if (!o->has("ledger"))
    return fail(exit_code_of(ErrorKind::kUsage), "--ledger FILE|DIR is required");
  auto ledger = read_ledger(o->get("ledger")->value);
  if (!ledger) return fail(ledger.error().exit_code(), ledger.error().message);
  const JobReport report = job_report(*ledger);
  if (o->has("html")) {
    auto written = write_whole_file(o->get("html")->value, report_html(report));
    if (!written) return fail(exit_code_of(ErrorKind::kConfig), written.error().message);
  }
  const std::string text = report_text(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? exit_code::kOk : exit_code_of(ErrorKind::kConfig);
}

}  // namespace tv
