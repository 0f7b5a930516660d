// Every command's option table: one row per option (common/options.h: OptionSpec), from which
// its parsing, validation, `--help` and docs/options.md come. docs/options.md is the output of
// `trainvisor __options-doc` (cli/options_doc_command.cc); the CTest check `options_doc` fails
// when they differ. `run`'s table is cli/run_options.cc.
#pragma once

#include <string>
#include <vector>

#include "cli/run_options.h"
#include "common/options.h"

namespace tv {

std::vector<OptionSpec> preflight_option_specs();         // cli/preflight_command.cc
std::vector<OptionSpec> checkpoint_option_specs();        // cli/checkpoint_command.cc
std::vector<OptionSpec> render_option_specs();            // cli/render_command.cc
std::vector<OptionSpec> topology_command_option_specs();  // cli/topology_command.cc
std::vector<OptionSpec> stacks_option_specs();            // cli/stacks_command.cc
std::vector<OptionSpec> report_option_specs();            // cli/report_command.cc

// docs/options.md: every table as Markdown.
std::string options_doc();

}  // namespace tv
