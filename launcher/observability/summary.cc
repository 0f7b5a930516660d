#include "launcher/observability/summary.h"

#include <spdlog/fmt/fmt.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/exit_codes.h"
#include "common/json_text.h"
#include "common/whole_file.h"

namespace tv {
namespace {

double share(double part, double wall) { return wall > 0 ? 100.0 * part / wall : 0.0; }

std::string scope(const MetricsIdentity& id) {
  if (id.nnodes == 1) return "one node";
  if (id.node_rank == 0) return fmt::format("node 0 of {}: job-level figures", id.nnodes);
  return fmt::format("node {} of {}: this node only; node 0 has the job's figures", id.node_rank,
                     id.nnodes);
}

std::string advice_lines(const GoodputSnapshot& s) {
  std::string out;
  if (s.checkpoint_cost)
    out += fmt::format("  {:<26}{:>10.1f} s\n", "checkpoint cost C", *s.checkpoint_cost);
  else
    out += fmt::format("  {:<26}{:>10}\n", "checkpoint cost C", "unknown (no checkpoint seen)");
  if (s.mtbf)
    out += fmt::format("  {:<26}{:>10.0f} s ({})\n", "MTBF of the job", *s.mtbf, s.mtbf_source);
  else
    out += fmt::format("  {:<26}{:>10}\n", "MTBF of the job",
                       "unknown (no failure; set --mtbf-hours)");
  if (s.advised_interval)
    out += fmt::format("  {:<26}{:>10.0f} s (Young/Daly: sqrt(2 x C x MTBF))\n", "advised interval",
                       *s.advised_interval);
  if (s.checkpoint_interval)
    out += fmt::format("  {:<26}{:>10.0f} s\n", "observed interval", *s.checkpoint_interval);
  return out;
}

std::string badput_lines(const std::array<double, kBadputCount>& badput, double wall) {
  std::string out;
  for (std::size_t i = 0; i < kBadputCount; ++i)
    out += fmt::format("  {:<26}{:>10.1f} s {:>6.1f} %\n",
                       std::string("badput: ") + badput_name(static_cast<Badput>(i)), badput[i],
                       share(badput[i], wall));
  return out;
}

// Without evidence of progress the figure counts every running second: an upper bound.
std::string goodput_line(const char* what, double goodput, const char* note) {
  if (!note) return fmt::format("  {:<26}{:>10.3f}\n", what, goodput);
  return fmt::format("  {:<26}{:>10} (upper bound: {})\n", what, fmt::format("<= {:.3f}", goodput),
                     note);
}

const char* goodput_note(const GoodputSnapshot& s) {
  if (s.progress_evidence) return nullptr;
  return s.checkpoints > 0 ? kNoProgressLinesNote : kNoProgressNote;
}

}  // namespace

std::string format_summary_table(const GoodputSnapshot& s, const MetricsIdentity& id) {
  std::string out = fmt::format("goodput summary ({})\n", scope(id));
  out += fmt::format("  {:<26}{:>10.1f} s\n", "wall time", s.wall);
  out += fmt::format("  {:<26}{:>10.1f} s {:>6.1f} %\n", "productive", s.productive,
                     share(s.productive, s.wall));
  out += badput_lines(s.badput, s.wall);
  out += goodput_line("goodput", s.goodput, goodput_note(s));
  if (s.mfu)
    out += fmt::format("  {:<26}{:>10.3f} ({}, peak {:.1f} TFLOP/s per GPU)\n", "MFU", *s.mfu,
                       s.gpu_name, s.peak_flops_per_gpu.value_or(0) / 1e12);
  out += fmt::format("  {:<26}{:>10}\n", "restarts", s.restarts);
  out += fmt::format("  {:<26}{:>10}{}\n", "lost steps", s.lost_steps,
                     s.lost_progress_known ? "" : " (some lost work not measurable)");
  if (s.step) out += fmt::format("  {:<26}{:>10}\n", "last step", *s.step);
  return out + advice_lines(s);
}

nlohmann::json summary_json(const GoodputSnapshot& s, const MetricsIdentity& id) {
  nlohmann::json j;
  j["node_rank"] = id.node_rank;
  j["nnodes"] = id.nnodes;
  j["job_level"] = id.node_rank == 0;
  j["wall_seconds"] = s.wall;
  j["productive_seconds"] = s.productive;
  j["goodput"] = s.goodput;
  j["goodput_upper_bound"] = !s.progress_evidence;
  const char* note = goodput_note(s);
  j["goodput_note"] = note ? nlohmann::json(note) : nlohmann::json();
  j["mfu"] = s.mfu ? nlohmann::json(*s.mfu) : nlohmann::json();
  j["gpu_name"] = s.gpu_name.empty() ? nlohmann::json() : nlohmann::json(s.gpu_name);
  j["gpu_peak_flops"] =
      s.peak_flops_per_gpu ? nlohmann::json(*s.peak_flops_per_gpu) : nlohmann::json();
  j["seconds_per_step"] =
      s.seconds_per_step ? nlohmann::json(*s.seconds_per_step) : nlohmann::json();
  for (std::size_t i = 0; i < kPhaseCount; ++i)
    j["phase_seconds"][phase_name(static_cast<Phase>(i))] = s.phase_seconds[i];
  for (std::size_t i = 0; i < kBadputCount; ++i) {
    const char* name = badput_name(static_cast<Badput>(i));
    j["badput"][name] = {{"seconds", s.badput[i]},
                         {"share", s.wall > 0 ? s.badput[i] / s.wall : 0.0}};
  }
  j["restarts"] = s.restarts;
  j["failures"] = s.failures;
  j["lost_steps"] = s.lost_steps;
  j["lost_progress_known"] = s.lost_progress_known;
  j["step"] = s.step ? nlohmann::json(*s.step) : nlohmann::json();
  j["checkpoints"] = s.checkpoints;
  j["checkpoint_cost_seconds"] =
      s.checkpoint_cost ? nlohmann::json(*s.checkpoint_cost) : nlohmann::json();
  j["mtbf_seconds"] = s.mtbf ? nlohmann::json(*s.mtbf) : nlohmann::json();
  j["mtbf_source"] = s.mtbf_source;
  j["advised_interval_seconds"] =
      s.advised_interval ? nlohmann::json(*s.advised_interval) : nlohmann::json();
  j["exit_code"] = s.exit_code ? nlohmann::json(*s.exit_code) : nlohmann::json();
  return j;
}

std::string format_metrics_line(const GoodputSnapshot& s, const std::optional<JobTotals>& job) {
  std::string out = fmt::format(
      "trainvisor metrics: goodput={:.3f} goodput_upper_bound={} productive_s={:.1f} wall_s={:.1f} "
      "restarts={}",
      s.goodput, s.progress_evidence ? 0 : 1, s.productive, s.wall, s.restarts);
  if (s.step) out += fmt::format(" step={}", *s.step);
  if (job) out += fmt::format(" job_goodput={:.3f}", job_goodput(*job));
  return out;
}

std::string format_job_summary(const JobTotals& t) {
  const double wall = job_wall(t);
  std::string out = fmt::format("job summary (its ledger: {} container{} so far)\n", t.containers,
                                t.containers == 1 ? "" : "s");
  out += fmt::format("  {:<26}{:>10.1f} s\n", "job wall time", wall);
  out += fmt::format("  {:<26}{:>10.1f} s {:>6.1f} %\n", "productive", t.productive,
                     share(t.productive, wall));
  out += badput_lines(t.badput, wall);
  out += fmt::format("  {:<26}{:>10.1f} s {:>6.1f} %\n", "badput: outside", t.outside,
                     share(t.outside, wall));
  out +=
      goodput_line("job goodput", job_goodput(t), t.progress_evidence ? nullptr : kNoProgressNote);
  out += fmt::format("  {:<26}{:>10}{}\n", "job lost steps", t.lost_steps,
                     t.lost_progress_known ? "" : " (some lost work not measurable)");
  return out;
}

nlohmann::json job_summary_json(const JobTotals& t) {
  nlohmann::json j;
  j["containers"] = t.containers;
  j["wall_seconds"] = job_wall(t);
  j["productive_seconds"] = t.productive;
  j["goodput"] = job_goodput(t);
  j["goodput_upper_bound"] = !t.progress_evidence;
  for (std::size_t i = 0; i < kBadputCount; ++i)
    j["badput_seconds"][badput_name(static_cast<Badput>(i))] = t.badput[i];
  j["badput_seconds"]["outside"] = t.outside;
  j["lost_steps"] = t.lost_steps;
  j["lost_progress_known"] = t.lost_progress_known;
  j["restarts"] = t.restarts;
  j["first_started_unix"] = t.first_started_unix;
  return j;
}

Status write_summary_file(const std::string& path, const nlohmann::json& j) {
  auto written = write_whole_file(path, json_text(j, 2) + "\n");
  if (!written) return Error{ErrorKind::kConfig, "--summary-file " + written.error().message};
  return ok_status();
}

}  // namespace tv
