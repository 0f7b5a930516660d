#include "cli/resume_hook.h"

#include <spdlog/spdlog.h>

#include <ctime>

#include "common/escape.h"
#include "launcher/supervision/resume_fallback.h"

namespace tv {

Selection first_resume_lookup(ResumeRequest& req, const Observability& obs) {
  for (const PoisonMark& m : obs.poisoned()) {
    spdlog::warn(
        "checkpoint: stepping over {} at every start: the job's ledger marks it poisoned "
        "({})",
        escape_control(m.path), m.reason);
    req.step_over.push_back({m.path, m.mtime_ns});
  }
  return lookup_resume_checkpoint(req);
}

namespace {

// `c` is the one the plan asks to step over: mark it, and look again without it.
std::optional<Checkpoint> step_over(ResumeRequest& req, Observability& obs, const Checkpoint& c,
                                    int generation) {
  const std::string reason = "the generations that resumed from it failed the same way " +
                             std::to_string(kPoisonRepeats) +
                             " times in a row (rule poisoned_checkpoint)";
  spdlog::warn(
      "generation {}: stepping over {} (step {}): {}; resuming from the newest complete "
      "checkpoint before it",
      generation, escape_control(c.path), c.step, reason);
  PoisonMark m;
  m.path = c.path;
  m.mtime_ns = c.mtime_ns;
  if (c.step >= 0) m.step = c.step;
  m.reason = reason;
  m.marked_unix = static_cast<double>(std::time(nullptr));
  obs.mark_poisoned(std::move(m));
  req.step_over.push_back({c.path, c.mtime_ns});
  return find_resume_checkpoint(req);
}

}  // namespace

std::function<std::optional<ResumeTarget>(const GenerationPlan&)> resume_hook(
    ResumeRequest req, std::optional<std::string> tmpl, GoodputAccountant& goodput,
    Observability& obs, std::optional<Checkpoint> first) {
  std::optional<std::optional<Checkpoint>> at_start{std::move(first)};
  return [req = std::move(req), tmpl = std::move(tmpl), &goodput, &obs,
          at_start = std::move(at_start)](
             const GenerationPlan& plan) mutable -> std::optional<ResumeTarget> {
    // A later generation's lookup delays its start (seconds over a large tree): said first.
    if (!at_start)
      spdlog::info("checkpoint: looking under {} for the checkpoint to resume from",
                   escape_control(req.dir));
    std::optional<Checkpoint> c = at_start ? std::move(*at_start) : find_resume_checkpoint(req);
    at_start.reset();
    if (!plan.step_over.empty() && c && c->path == plan.step_over)
      c = step_over(req, obs, *c, plan.generation);
    else if (!plan.step_over.empty())
      spdlog::info("generation {}: {} not stepped over: {}", plan.generation,
                   escape_control(plan.step_over),
                   c ? "the newest complete checkpoint is now " + escape_control(c->path) +
                           " (one completed after it)"
                     : std::string("the lookup no longer finds it"));
    goodput.resume_selected(c ? std::optional<std::int64_t>(c->step) : std::nullopt);
    if (!c) return std::nullopt;
    ResumeTarget t{c->path, {}};
    if (tmpl) t.args = expand_resume_arg(*tmpl, *c);
    return t;
  };
}

}  // namespace tv
