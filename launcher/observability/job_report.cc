#include "launcher/observability/job_report.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "common/exit_codes.h"

namespace tv {
namespace {

bool failed(const std::string& outcome) { return outcome == "failed" || outcome == "hung"; }
bool failed(const GenerationRecord& g) { return failed(g.outcome); }

// A container's ending that is a failure of its own: a code that is not 0 when its last generation
// did not fail already (that failure is the code's: counted once).
std::string end_failure(const ContainerRecord& c) {
  if (!c.ended || !c.exit_code || *c.exit_code == 0) return "";
  if (!c.generations.empty() && failed(c.generations.back())) return "";
  return fmt::format("exit {}: {}", *c.exit_code, exit_reason(*c.exit_code));
}

ReportGeneration report_generation(const GenerationRecord& g, double t0, double container_end) {
  ReportGeneration r;
  r.number = g.number;
  r.start = g.started_unix - t0;
  r.end = std::max(r.start, g.ended_unix.value_or(container_end + t0) - t0);
  r.outcome = g.outcome;
  r.summary = g.summary;
  for (const auto& p : g.evidence) {
    auto e = std::find_if(g.exceptions.begin(), g.exceptions.end(),
                          [&p](const ExceptionLine& x) { return x.path == p; });
    r.evidence.push_back({p, e == g.exceptions.end() ? "" : e->line});
  }
  return r;
}

ReportContainer report_container(const ContainerRecord& c, double t0) {
  ReportContainer r;
  r.index = c.index;
  r.start = c.started_unix - t0;
  r.end = std::max(r.start, c.heartbeat_unix - t0);
  r.ended = c.ended;
  r.exit_code = c.exit_code;
  r.end_failure = end_failure(c);
  r.restarts = c.restarts;
  r.productive = c.productive;
  r.failure_file = c.failure_file;
  for (const auto& g : c.generations) r.generations.push_back(report_generation(g, t0, r.end));
  if (!r.end_failure.empty() && !r.generations.empty()) {  // the ending is its last generation's
    ReportGeneration& last = r.generations.back();
    last.outcome = "failed";
    if (last.summary.empty()) last.summary = r.end_failure;
  }
  return r;
}

// Failures of one container: its failed generations (its restarts when it kept none), its ending
// when it is a failure of its own, and its end when it was killed and another container came
// after it.
int failures_of(const ContainerRecord& c, bool has_next) {
  int n =
      c.generations.empty()
          ? c.restarts
          : static_cast<int>(std::count_if(c.generations.begin(), c.generations.end(),
                                           [](const GenerationRecord& g) { return failed(g); }));
  if (!end_failure(c).empty()) ++n;
  if (!c.ended && has_next) ++n;
  return n;
}

const char* signal_name(int sig) {
  switch (sig) {
    case 1:
      return "SIGHUP";
    case 2:
      return "SIGINT";
    case 6:
      return "SIGABRT";
    case 7:
      return "SIGBUS";
    case 8:
      return "SIGFPE";
    case 9:
      return "SIGKILL";
    case 11:
      return "SIGSEGV";
    case 13:
      return "SIGPIPE";
    case 15:
      return "SIGTERM";
    default:
      return nullptr;
  }
}

void add_checkpoints(const ContainerRecord& c, long& count, double& cost_sum, long& cost_n,
                     double& interval_sum, long& interval_n) {
  if (!c.checkpoints || c.checkpoints->count <= 0) return;
  const long n = c.checkpoints->count;
  count += n;
  if (c.checkpoints->cost_seconds && *c.checkpoints->cost_seconds >= 0) {
    cost_sum += *c.checkpoints->cost_seconds * static_cast<double>(n);
    cost_n += n;
  }
  if (c.checkpoints->interval_seconds && *c.checkpoints->interval_seconds > 0) {
    interval_sum += *c.checkpoints->interval_seconds * static_cast<double>(n);
    interval_n += n;
  }
}

CheckpointAdvice advice_of(const Ledger& l, double wall) {
  CheckpointAdvice a;
  a.failures = l.folded.restarts;
  double cost_sum = 0, interval_sum = 0;
  long cost_n = 0, interval_n = 0;
  for (std::size_t i = 0; i < l.records.size(); ++i) {
    a.failures += failures_of(l.records[i], i + 1 < l.records.size());
    add_checkpoints(l.records[i], a.checkpoints, cost_sum, cost_n, interval_sum, interval_n);
  }
  if (cost_n > 0) a.cost = cost_sum / static_cast<double>(cost_n);
  if (interval_n > 0) a.interval = interval_sum / static_cast<double>(interval_n);
  if (a.failures > 0 && wall > 0) a.mtbf = wall / a.failures;
  if (!a.cost || *a.cost <= 0 || !a.mtbf) return a;
  a.young = young_interval(*a.cost, *a.mtbf);
  a.daly = daly_interval(*a.cost, *a.mtbf);
  a.waste_advised = checkpoint_waste(wall, *a.young, *a.cost, a.failures);
  if (a.interval) {
    a.waste_observed = checkpoint_waste(wall, *a.interval, *a.cost, a.failures);
    a.saved = std::max(0.0, *a.waste_observed - *a.waste_advised);
  }
  return a;
}

}  // namespace

std::string exit_reason(int code) {
  if (code == exit_code::kOk) return "success";
  switch (kind_of_exit_code(code)) {
    case ErrorKind::kLost:
      return "lost node (a peer node was lost or the rendezvous timed out)";
    case ErrorKind::kNodeFault:
      return "node fault (a GPU of this node failed)";
    case ErrorKind::kHang:
      return "hang (restarts exhausted)";
    case ErrorKind::kCannotExecute:
      return "the command is not executable";
    case ErrorKind::kNotFound:
      return "the command was not found";
    case ErrorKind::kUsage:
      return "usage error";
    case ErrorKind::kPreflightFailed:
      return "preflight failed";
    case ErrorKind::kOsError:
      return "out of threads or open files";
    case ErrorKind::kCannotCreate:
      return "the export failed";
    case ErrorKind::kConfig:
      return "configuration or topology error";
    case ErrorKind::kStoppedBySignal:
      if (code < exit_code_of(ErrorKind::kStoppedBySignal, 65)) {
        const int sig = code - exit_code_of(ErrorKind::kStoppedBySignal, 0);
        const char* name = signal_name(sig);
        return name ? fmt::format("signal {} ({})", sig, name) : fmt::format("signal {}", sig);
      }
      break;
    case ErrorKind::kFailed:
    case ErrorKind::kWorkerFailed:
      break;
  }
  return "a worker's failure (restarts exhausted, or one that would fail again)";
}

std::string iso8601_utc(double unix_seconds, int decimals) {
  decimals = std::clamp(decimals, 0, 3);
  const double scale = std::pow(10.0, decimals);
  const auto ticks = static_cast<long long>(std::floor(unix_seconds * scale + 0.5));
  const auto whole = static_cast<std::time_t>(ticks / static_cast<long long>(scale));
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  if (decimals == 0) return std::string(date) + "Z";
  return fmt::format("{}.{:0{}}Z", date, ticks % static_cast<long long>(scale), decimals);
}

double young_interval(double c, double m) { return std::sqrt(2.0 * c * m); }

double daly_interval(double c, double m) {
  if (c >= 2.0 * m) return m;
  const double r = c / (2.0 * m);
  return std::sqrt(2.0 * c * m) * (1.0 + std::sqrt(r) / 3.0 + r / 9.0) - c;
}

double checkpoint_waste(double wall, double t, double c, int failures) {
  return wall * c / t + failures * t / 2.0;
}

JobReport job_report(const Ledger& l) {
  JobReport r;
  const JobTotals t = job_totals(l);
  r.job_id = l.job_id;
  r.first_started_unix = t.first_started_unix;
  r.containers = t.containers;
  r.folded = l.folded.containers;
  r.wall = job_wall(t);
  r.productive = t.productive;
  r.goodput = job_goodput(t);
  r.badput = t.badput;
  r.outside = t.outside;
  r.restarts = t.restarts;
  r.lost_steps = t.lost_steps;
  r.upper_bound = !t.progress_evidence;
  r.lost_progress_known = t.lost_progress_known;
  r.poisoned = l.poisoned;
  const double t0 = t.first_started_unix;
  for (const auto& c : l.records) {
    if (!r.timeline.empty() && c.started_unix - t0 > r.timeline.back().end)
      r.gaps.push_back({c.index, r.timeline.back().end, c.started_unix - t0});
    r.timeline.push_back(report_container(c, t0));
    if (c.gpus) r.gpus = c.gpus;
  }
  r.advice = advice_of(l, r.wall);
  return r;
}

}  // namespace tv
