// The Supervisor's resume lookup at each (re)start: the hook's lookup runs off the loop
// (ResumeWait), so that a slow or hung checkpoint directory never silences this node's
// heartbeats or its coordinator; the generation's workers start with its answer.
#include <spdlog/spdlog.h>

#include "launcher/node/supervisor.h"

namespace tv {

void Supervisor::look_up_resume(const GenerationPlan& plan) {
  SupervisorConfig::ResumeLookup lookup = cfg_.find_resume(plan);
  preparing_ = plan.generation;
  lookup_.start("generation " + std::to_string(plan.generation),
                [lookup = std::move(lookup), this, plan]() -> std::function<void()> {
                  // Off the loop: only the lookup runs here; `this` is the answer's (on the loop).
                  SupervisorConfig::ResumeAnswer answer = lookup();
                  return [this, plan, answer = std::move(answer)] { resume_found(plan, answer()); };
                });
}

void Supervisor::resume_found(const GenerationPlan& plan, std::optional<ResumeTarget> target) {
  preparing_.reset();
  // A SIGTERM/INT/HUP during the lookup ended it early (Init::stop_requested) and is posted to
  // on_signal, next on this loop: start nothing, so the run ends 128+N with no worker to stop.
  if (signals_.stop_requested() || node_run_.ending()) return;
  resume_ = std::move(target);
  start_workers(plan);
}

// True when `generation`'s lookup or rank directories' opening was under way (now dropped: its
// answer starts nothing).
bool Supervisor::drop_start_of(int generation) {
  if (preparing_ != generation) return false;
  preparing_.reset();
  lookup_.drop();
  dirs_call_.drop();
  return true;
}

}  // namespace tv
