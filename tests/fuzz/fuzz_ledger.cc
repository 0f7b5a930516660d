// libFuzzer: the job's ledger as it may be found on a shared checkpoint dir. Parsing never throws;
// whatever it accepts writes back as text that parses to the same text (so a ledger trainvisor
// accepted is never set aside by the next container), and its account adds up and is finite; its
// report renders (`trainvisor report`) with no tag from the ledger's text.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "launcher/observability/job_report.h"
#include "launcher/observability/ledger.h"
#include "launcher/observability/report_render.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto l = tv::parse_ledger(text);
  if (!l) return 0;
  const std::string again = tv::ledger_text(*l);
  auto back = tv::parse_ledger(again);
  if (!back || tv::ledger_text(*back) != again) std::abort();
  const auto report = tv::job_report(*l);
  const std::string page = tv::report_html(report);
  if (page.find("<script") != std::string::npos || tv::report_text(report).empty()) std::abort();
  tv::ContainerRecord next;
  next.index = tv::next_index(*l);
  tv::put_record(*l, next);
  if (l->records.size() > tv::kLedgerRecords) std::abort();
  if (!std::isfinite(tv::job_wall(tv::job_totals(*l)))) std::abort();
  return 0;
}
