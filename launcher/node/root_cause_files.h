// What this node tells the orchestrator at the end of its run (docs/supervision.md, "Root
// cause"): the failure file (SageMaker shows its first 1024 characters; never replaced: the first
// reason stays) and the termination log (Kubernetes reads at most 4096 bytes; the last
// generations' causes too). Which text: the job's root cause as NodeRun's ending holds it, with
// this node's own record (its traceback, its evidence) only when the root cause is this node's
// (a collateral failure here is not the reason another node's failure gets), a node fault's own
// text, and the judge's decision lines (with_decision); a hang's give-up carries where every
// node's ranks were when their stacks were taken (NodeFailure::ranks, JobStateMachine), listed
// after the root cause's own (another node's: all of them), so the frame the job waited for is
// in every node's files. root_cause_texts decides, pure;
// write_root_cause_files writes (write_root_cause_file: never a link, nothing that blocks).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launcher/job/root_cause.h"
#include "launcher/node/node_run.h"

namespace tv {

inline constexpr std::size_t kTerminationLogLimit = 4096;  // Kubernetes reads at most 4096 bytes
inline constexpr std::size_t kFailureFileLimit = 1024;  // SageMaker shows the first 1024 characters

struct RootCauseTexts {
  std::string failure_file;
  std::string termination_log;
};

// The texts for `ending`, nullopt when it has no failure (a success, a stop). `causes`: this
// node's root cause per failed generation; `evidence(g)`: generation g's evidence lines as the
// files are now (peers' dumps came later), asked only for this node's own root cause.
std::optional<RootCauseTexts> root_cause_texts(
    const Ending& ending, const std::vector<FailureRecord>& causes,
    const std::function<std::string(int generation)>& evidence);

// The end-of-run table of root causes ("" when none): where this node judges the job (node 0, a
// one-node job) `judged`, every judged generation's root cause whichever node it came from, then
// this node's own root cause of a generation not judged (the job was lost meanwhile); elsewhere
// this node's own (`causes`).
std::string root_cause_table(const std::vector<NodeFailure>& judged,
                             const std::vector<FailureRecord>& causes);

struct RootCausePaths {
  std::string failure_file;
  std::string termination_log;  // empty: none
};

// Writes them, each failure logged as one warning; true when the failure file was written now.
bool write_root_cause_files(const RootCausePaths& paths, const RootCauseTexts& texts);

}  // namespace tv
