// Hand-written ledger records for the report's tests (job_report_test.cc, report_render_test.cc).
#pragma once

#include <optional>
#include <string>

#include "launcher/observability/ledger.h"

namespace tv::testing {

// A container that runs from `start` to `end` (Unix seconds), all of it productive.
inline ContainerRecord container(int index, double start, double end, bool ended) {
  ContainerRecord c;
  c.index = index;
  c.started_unix = start;
  c.heartbeat_unix = end;
  c.ended = ended;
  c.productive = end - start;
  c.progress_evidence = true;
  return c;
}

inline GenerationRecord generation(int number, double start, std::optional<double> end,
                                   const std::string& outcome) {
  GenerationRecord g;
  g.number = number;
  g.started_unix = start;
  g.ended_unix = end;
  g.outcome = outcome;
  return g;
}

}  // namespace tv::testing
