// `trainvisor render --config F --target T [--output FILE]`: reads the job description, prints
// (or writes) the platform's job spec. The logic is in render/ (tv_render); this only does I/O.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "cli/commands.h"
#include "cli/option_tables.h"
#include "common/bounded_read.h"
#include "common/exit_codes.h"
#include "common/file_system.h"
#include "common/options.h"
#include "common/whole_file.h"
#include "render/render.h"

namespace tv {
namespace {}  // namespace

std::vector<OptionSpec> render_option_specs() {
  using T = OptionType;
  return {
      {.name = "config", .help = "the job description (JSON, docs/render.md)", .metavar = "FILE"},
      {.name = "target",
       .type = T::kChoice,
       .help = "the platform to render for",
       .words = {"kubeflow", "sagemaker", "batch", "slurm"}},
      {.name = "output", .help = "write here (atomically) instead of stdout", .metavar = "PATH"},
      {.name = "name-suffix",
       .help = "sagemaker: appended to TrainingJobName as -S (letters, digits, '-'), so that a "
               "second submission does not collide; default the UTC time (YYYYMMDD-HHMMSS); "
               "none: the name as it is",
       .metavar = "S|none"},
      {.name = "help", .type = T::kFlag, .help = "this text"}};
}

namespace {

int fail(const Error& e) {
  spdlog::error("render: {}", e.message);
  return e.exit_code();
}

// The whole file or nothing, never through a planted link (common/whole_file.h).
Status write_atomically(const std::string& path, const std::string& text) {
  auto written = write_whole_file(path, text);
  if (!written) return Error{ErrorKind::kConfig, "--output " + written.error().message};
  return ok_status();
}

// A second CreateTrainingJob with the same name fails: each rendering gets its own by default.
std::string name_suffix(const Options& o) {
  if (auto v = o.get("name-suffix")) return v->value == "none" ? "" : v->value;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &utc);
  return buf;
}

Result<Rendered> render_from(const Options& o) {
  const auto config = o.get("config");
  const auto target = o.get("target");
  if (!config || !target)
    return Error{ErrorKind::kUsage,
                 "usage: trainvisor render --config FILE --target kubeflow|sagemaker|batch|slurm"};
  std::string why;
  const auto text = RealFileSystem().read(config->value, kConfigFileCap, &why);
  if (!text)
    return Error{ErrorKind::kConfig, "--config " + config->value + ": cannot read: " + why};
  auto job = parse_job_config(*text, config->value);
  if (!job) return job.error();
  return render_job(*job, target->value, RenderOptions{.name_suffix = name_suffix(o)});
}

}  // namespace

int render_command(const Args& args, const Environment& env) {
  auto opts = parse_options(render_option_specs(), args, env,
                            ParseMode{.stop_at_command = false, .use_env = false});
  if (!opts) return fail(opts.error());
  if (opts->has("help")) {
    std::printf(
        "usage: trainvisor render --config FILE --target kubeflow|sagemaker|batch|slurm "
        "[--output FILE] [--name-suffix S|none]\n\n%s",
        format_help(render_option_specs()).c_str());
    return exit_code::kOk;
  }
  if (!opts->positional.empty())
    return fail(Error{ErrorKind::kUsage, "unexpected argument '" + opts->positional[0] + "'"});
  auto out = render_from(*opts);
  if (!out) return fail(out.error());
  for (const auto& note : out->notes) spdlog::warn("render: {}", note);
  if (opts->has("name-suffix") && opts->value_or("target", "") != "sagemaker")
    spdlog::warn(
        "render: --name-suffix is not used by {}: only a SageMaker training job's name "
        "must be new on each submission",
        opts->value_or("target", ""));
  if (auto path = opts->get("output")) {
    if (auto s = write_atomically(path->value, out->text); !s) return fail(s.error());
    return exit_code::kOk;
  }
  std::fwrite(out->text.data(), 1, out->text.size(), stdout);
  return std::fflush(stdout) == 0 ? exit_code::kOk : exit_code_of(ErrorKind::kConfig);
}

}  // namespace tv
