// `trainvisor report`'s two forms of one JobReport (launcher/observability/job_report.h): text for
// a terminal and one self-contained HTML page (inline CSS and SVG, no script, nothing fetched: its
// Content-Security-Policy allows nothing from anywhere). Both print the same figures, from
// report_figures; on the page each is an element with `data-figure="<id>"`. Everything from the
// ledger (the job id, root-cause lines, paths) is escaped: escape_control in the text, escape_html
// on the page. Pure: text out.
#pragma once

#include <string>
#include <vector>

#include "launcher/observability/job_report.h"

namespace tv {

struct ReportFigure {
  std::string id;     // the page's data-figure
  std::string label;  // the text form's, and the page's
  std::string value;  // as both print it: "1234.5 s", "0.812", "unknown (...)"
};

std::vector<ReportFigure> report_figures(const JobReport& r);
std::string report_text(const JobReport& r);
std::string report_html(const JobReport& r);

// "12.345 s"; the figures' one format for seconds.
std::string report_seconds(double s);
// How a container ended: "ended, exit 0", "killed (last heartbeat)", "ended, exit 75: lost node
// (...)" (a failure of its own ending: ReportContainer::end_failure). Not escaped (no ledger text).
std::string report_container_end(const ReportContainer& c);

}  // namespace tv
