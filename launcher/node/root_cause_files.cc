#include "launcher/node/root_cause_files.h"

#include <spdlog/spdlog.h>

#include "launcher/job/root_cause_judge.h"

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

// "rank 3 (node 1, local 1): exit 1: boom" -> "exit 1: boom" (summary_line's prefix), for the
// table's last column.
std::string cause_of(const std::string& summary) {
  const std::size_t end = summary.find("): ");
  return summary.starts_with("rank ") && end != std::string::npos ? summary.substr(end + 3)
                                                                  : summary;
}

// A hang: where each rank was when its node took its stacks (the give-up relays every node's),
// but those of `skip_node` (this node's own root cause: its evidence lists them already).
std::string hang_stacks(const NodeFailure& root, int skip_node) {
  std::string lines;
  for (const auto& r : root.ranks) {
    if (r.node_rank == skip_node) continue;
    if (r.frame.empty() && !r.silent) continue;  // a last collective alone: no stack
    lines += "  rank " + std::to_string(r.rank) + " (node " + std::to_string(r.node_rank) + "): " +
             (r.silent ? std::string("wrote no stack within 3 s") : "main thread in " + r.frame) +
             "\n";
  }
  if (lines.empty()) return "";
  return "stacks on hang (attempt " + std::to_string(root.generation) + ", " +
         (skip_node < 0 ? "every node" : "the other nodes") + "):\n" + lines;
}

}  // namespace

std::string root_cause_table(const std::vector<NodeFailure>& judged,
                             const std::vector<FailureRecord>& causes) {
  if (judged.empty()) return causes.empty() ? "" : format_failure_table(causes);
  std::string out = kFailureTableHeader;
  for (const auto& f : judged)
    out += failure_table_row(f.generation, f.rank, f.node_rank, f.exit_code, cause_of(f.summary));
  for (const auto& c : causes)
    if (c.generation > judged.back().generation)
      out += failure_table_row(c.generation, c.rank, c.node_rank, c.exit_code,
                               cause_of(summary_line(c)));
  return out;
}

std::optional<RootCauseTexts> root_cause_texts(
    const Ending& ending, const std::vector<FailureRecord>& causes,
    const std::function<std::string(int generation)>& evidence) {
  if (!ending.failure) return std::nullopt;
  const NodeFailure& root = *ending.failure;
  std::string text = root.summary + "\n" + hang_stacks(root, -1);
  for (const auto& c : causes)
    if (c.generation == root.generation && c.node_rank == root.node_rank) {
      FailureRecord own = c;
      own.evidence = evidence(c.generation) + hang_stacks(root, c.node_rank);
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
