// `trainvisor topology [--json] [topology options]`: the topology `run` would use, and where each
// value came from. Exit 0, 78 for a topology error, 64 for a usage error.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/option_tables.h"
#include "cli/run_options.h"
#include "common/exit_codes.h"
#include "common/json_text.h"
#include "launcher/topology/topology.h"
#include "launcher/topology/topology_options.h"

namespace tv {

std::vector<OptionSpec> topology_command_option_specs() {
  auto s = topology_option_specs();
  s.push_back({.name = "json",
               .type = OptionType::kFlag,
               .help = "print one JSON object instead of the table"});
  s.push_back({.name = "help", .type = OptionType::kFlag, .help = "this text", .short_name = "h"});
  return s;
}

namespace {

int fail(const Error& e) {
  spdlog::error("{}", e.message);
  return e.exit_code();
}

}  // namespace

int topology_command(const Args& args, const Environment& env) {
  // Only --json and --help come from argv alone: TRAINVISOR_JSON must not change the output.
  auto opts = parse_options(topology_command_option_specs(), args, env,
                            ParseMode{.stop_at_command = false, .use_env = true});
  if (!opts) return fail(opts.error());
  if (opts->get("help") && !opts->get("help")->origin.starts_with("TRAINVISOR_")) {
    std::printf(
        "usage: trainvisor topology [--json] [OPTIONS]\n\n"
        "Prints the topology that `trainvisor run` would use, and where each value came "
        "from.\nEvery option can also be set as TRAINVISOR_<OPTION>.\n\noptions:\n%s",
        format_help(topology_command_option_specs(), true).c_str());
    return exit_code::kOk;
  }
  if (!opts->positional.empty())
    return fail(Error{ErrorKind::kUsage,
                      "topology: unexpected argument '" + opts->positional[0] + "' (see --help)"});
  const RealFileSystem fs;
  const RealGpuCounter gpus(env);
  const RealHostAddress self;
  auto t = resolve_topology(*opts, env, fs, gpus, self);
  if (!t) return fail(t.error());
  const auto json_opt = opts->get("json");
  if (json_opt && json_opt->origin == "--json")
    std::cout << json_text(topology_to_json(*t)) << "\n";
  else
    std::cout << format_topology(*t);
  std::cout.flush();
  return exit_code::kOk;
}

}  // namespace tv
