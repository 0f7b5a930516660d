#include "launcher/supervision/root_cause_files.h"

#include <spdlog/spdlog.h>

#include "launcher/supervision/root_cause_judge.h"

namespace tv {
namespace {

// true when written now.
bool write_one(const std::string& path, const std::string& text, bool only_if_absent,
               std::size_t limit) {
  auto written = write_root_cause_file(path, text, only_if_absent, limit);
  if (!written)
    spdlog::warn("root cause {}", written.error().message);
  else if (*written)
    spdlog::info("root cause written to {}", path);
  return written && *written;
}

}  // namespace

std::optional<RootCauseTexts> root_cause_texts(
    const Ending& ending, const std::vector<FailureRecord>& causes,
    const std::function<std::string(int generation)>& evidence) {
  if (!ending.failure) return std::nullopt;
  const NodeFailure& root = *ending.failure;
  std::string text = root.summary + "\n";
  for (const auto& c : causes)
    if (c.generation == root.generation && c.node_rank == root.node_rank) {
      FailureRecord own = c;
      own.evidence = evidence(c.generation);
      text = detail_text(own);
    }
  if (ending.kind == Ending::Kind::kNodeFault) text = ending.fault + "\n";
  return RootCauseTexts{with_decision(text, root, false), with_decision(text, root, true)};
}

bool write_root_cause_files(const RootCausePaths& paths, const RootCauseTexts& texts) {
  const bool failure_file =
      write_one(paths.failure_file, texts.failure_file, true, kFailureFileLimit);
  if (!paths.termination_log.empty())
    write_one(paths.termination_log, texts.termination_log, false, kTerminationLogLimit);
  return failure_file;
}

}  // namespace tv
