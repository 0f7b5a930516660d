// The RootCauseJudge's decisions on /metrics (launcher/job/root_cause_judge.h): one
// counter, `trainvisor_retry_decisions_total{rule="..."}`, each rule that let a generation start
// after a failure or that gave up. Pure; appended to render_metrics' text (docs/observability.md).
#pragma once

#include <map>
#include <string>

#include "launcher/observability/metric_set.h"

namespace tv {

// Empty while nothing has been judged (a family with no sample is left out, like every figure
// that is not known yet).
MetricSet retry_decision_set(const std::map<std::string, int>& by_rule);
std::string render_retry_decisions(const std::map<std::string, int>& by_rule);

}  // namespace tv
