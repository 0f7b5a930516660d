#include "launcher/observability/report_render.h"

#include <spdlog/fmt/fmt.h>

#include "common/escape.h"

namespace tv {
namespace {

std::string seconds_or(const std::optional<double>& v, const char* why) {
  return v ? report_seconds(*v) : fmt::format("unknown ({})", why);
}

void add_badput(std::vector<ReportFigure>& f, const JobReport& r) {
  for (std::size_t i = 0; i < kBadputCount; ++i) {
    const std::string name = badput_name(static_cast<Badput>(i));
    f.push_back({"badput_" + name, "badput: " + name, report_seconds(r.badput[i])});
  }
  f.push_back({"badput_outside", "badput: outside", report_seconds(r.outside)});
}

void add_advice(std::vector<ReportFigure>& f, const JobReport& r) {
  const CheckpointAdvice& a = r.advice;
  f.push_back({"failures", "failures", std::to_string(a.failures)});
  f.push_back({"mtbf", "MTBF (wall / failures)", seconds_or(a.mtbf, "no failure")});
  f.push_back({"checkpoints", "checkpoints", std::to_string(a.checkpoints)});
  f.push_back({"checkpoint_cost", "checkpoint cost C", seconds_or(a.cost, "no write measured")});
  f.push_back({"checkpoint_interval", "checkpoint interval (observed)",
               seconds_or(a.interval, "fewer than 2 checkpoints")});
  f.push_back({"young", "advised interval (Young)", seconds_or(a.young, "needs C and MTBF")});
  f.push_back({"daly", "advised interval (Daly)", seconds_or(a.daly, "needs C and MTBF")});
  f.push_back({"waste_observed", "waste at the observed interval",
               seconds_or(a.waste_observed, "needs the observed interval")});
  f.push_back({"waste_advised", "waste at Young's interval",
               seconds_or(a.waste_advised, "needs C and MTBF")});
  f.push_back({"saved", "saved at Young's interval",
               seconds_or(a.saved, "needs the observed interval, C and MTBF")});
  if (a.saved && r.gpus)
    f.push_back({"saved_gpu_hours", "saved, GPU-hours",
                 fmt::format("{:.3f} ({} GPUs)", *a.saved * *r.gpus / 3600.0, *r.gpus)});
}

std::string evidence_line(const ReportEvidence& e) {
  std::string line = "      evidence " + escape_control(e.path);
  if (!e.exception.empty()) line += ": " + escape_control(e.exception);
  return line + "\n";
}

std::string generation_line(const ReportGeneration& g) {
  std::string line =
      fmt::format("    generation {} {} to {}: {}", g.number, report_seconds(g.start),
                  report_seconds(g.end), escape_control(g.outcome));
  if (!g.summary.empty()) line += " (" + escape_control(g.summary) + ")";
  line += "\n";
  for (const auto& e : g.evidence) line += evidence_line(e);
  return line;
}

std::string container_lines(const ReportContainer& c, double t0) {
  std::string out =
      fmt::format("  container {} {} to {} ({} to {}): {}, {} restart(s)\n", c.index,
                  report_seconds(c.start), report_seconds(c.end), iso8601_utc(t0 + c.start),
                  iso8601_utc(t0 + c.end), report_container_end(c), c.restarts);
  for (const auto& g : c.generations) out += generation_line(g);
  if (!c.failure_file.empty()) out += "    failure file " + escape_control(c.failure_file) + "\n";
  return out;
}

}  // namespace

std::string report_seconds(double s) { return fmt::format("{:.3f} s", s); }

std::string report_container_end(const ReportContainer& c) {
  std::string end = c.ended ? "ended" : "killed (last heartbeat)";
  if (!c.end_failure.empty()) return end + ", " + c.end_failure;
  if (c.exit_code) end += ", exit " + std::to_string(*c.exit_code);
  return end;
}

std::vector<ReportFigure> report_figures(const JobReport& r) {
  std::vector<ReportFigure> f;
  f.push_back({"job", "job", r.job_id});
  f.push_back({"containers", "containers", std::to_string(r.containers)});
  f.push_back({"wall", "wall time", report_seconds(r.wall)});
  if (r.gpus)
    f.push_back({"gpu_hours", "GPU-hours",
                 fmt::format("{:.3f} ({} GPUs)", r.wall * *r.gpus / 3600.0, *r.gpus)});
  f.push_back({"productive", "productive", report_seconds(r.productive)});
  f.push_back({"goodput", "goodput",
               fmt::format("{:.3f}{}", r.goodput, r.upper_bound ? " (upper bound)" : "")});
  add_badput(f, r);
  f.push_back({"restarts", "restarts", std::to_string(r.restarts)});
  f.push_back(
      {"lost_steps", "lost steps",
       std::to_string(r.lost_steps) + (r.lost_progress_known ? "" : " (not all measured)")});
  add_advice(f, r);
  return f;
}

std::string report_text(const JobReport& r) {
  std::string out = "where the hours went\n";
  for (const auto& f : report_figures(r))
    out += fmt::format("  {:<34}{}\n", f.label, escape_control(f.value));
  out +=
      "timeline (seconds from the job's first start, " + iso8601_utc(r.first_started_unix) + ")\n";
  if (r.folded > 0)
    out += fmt::format("  {} earlier container(s) folded into the ledger's totals\n", r.folded);
  std::size_t gap = 0;
  for (const auto& c : r.timeline) {
    for (; gap < r.gaps.size() && r.gaps[gap].before == c.index; ++gap)
      out += fmt::format("  between containers {} to {}: {}\n", report_seconds(r.gaps[gap].start),
                         report_seconds(r.gaps[gap].end),
                         report_seconds(r.gaps[gap].end - r.gaps[gap].start));
    out += container_lines(c, r.first_started_unix);
  }
  for (const auto& m : r.poisoned)
    out += "poisoned checkpoint " + escape_control(m.path) + ": " + escape_control(m.reason) + "\n";
  return out;
}

}  // namespace tv
