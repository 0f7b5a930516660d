// The goodput summary printed at the end of every run (stderr) and written with --summary-file
// (JSON): wall time, productive time, each badput cause with its share, restarts, lost steps,
// checkpoint cost, MTBF and the advised checkpoint interval. Pure (the file write is in
// write_summary_file, through common/whole_file.h: never a half-written file, never through a
// planted link, /dev/stdout written in place).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"
#include "launcher/observability/goodput.h"
#include "launcher/observability/ledger.h"
#include "launcher/observability/metrics.h"

namespace tv {

std::string format_summary_table(const GoodputSnapshot& s, const MetricsIdentity& id);
nlohmann::json summary_json(const GoodputSnapshot& s, const MetricsIdentity& id);
// The job's account across containers (node 0 with a ledger): the table printed after the
// container's, and the "job" object of the JSON.
std::string format_job_summary(const JobTotals& t);
nlohmann::json job_summary_json(const JobTotals& t);

// The one-line metrics record node 0 logs every --metrics-log-interval seconds and once at the end
// of the run: `trainvisor metrics: goodput=0.930 goodput_upper_bound=0 productive_s=120.0
// wall_s=129.0 restarts=1 step=1200 job_goodput=0.910` (step once a progress step was seen,
// job_goodput with the job's ledger). Names and order are stable: SageMaker's MetricDefinitions
// (render/sagemaker.cc) read them, one regex per value, over each log line.
std::string format_metrics_line(const GoodputSnapshot& s, const std::optional<JobTotals>& job);

// What a goodput without evidence of progress says beside it.
inline constexpr const char* kNoProgressNote = "no progress signal: set --progress-regex";
// ... when checkpoints show that steps were made, but no line of this node's says when (only
// rank 0 prints progress in rsl_rl and skrl: node 1 of such a job).
inline constexpr const char* kNoProgressLinesNote =
    "no progress lines on this node, only checkpoints: set --progress-regex, or read node 0's "
    "figure where rank 0 alone prints them";
// Errors name --summary-file, the path and the reason (the run's exit code is not changed by it).
Status write_summary_file(const std::string& path, const nlohmann::json& j);

}  // namespace tv
