#include "launcher/run/resume_hook.h"

#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <ctime>
#include <memory>

#include "common/escape.h"
#include "launcher/job/resume_fallback.h"
#include "launcher/node/resume_wait.h"

namespace tv {

Selection first_resume_lookup(ResumeRequest& req, const Observability& obs,
                              boost::asio::io_context& io) {
  for (const PoisonMark& m : obs.poisoned()) {
    spdlog::warn(
        "checkpoint: stepping over {} at every start: the job's ledger marks it poisoned "
        "({})",
        escape_control(m.path), m.reason);
    req.step_over.push_back({m.path, m.mtime_ns});
  }
  std::optional<Selection> found;
  {
    const auto busy = boost::asio::make_work_guard(io);
    ResumeWait wait(io, real_loop_time(), real_off_loop(), req.dir);
    wait.start("the first generation", [req, &found]() -> std::function<void()> {
      auto s = std::make_shared<Selection>(lookup_resume_checkpoint(req));
      return [&found, s] { found = std::move(*s); };  // runs only while `wait` is alive
    });
    while (!found && io.run_one() > 0) {
    }
  }
  return found ? std::move(*found) : lookup_resume_checkpoint(req);  // an io_context stopped
}

namespace {

// What the hook keeps from one start to the next (the hook and each answer share it).
struct HookState {
  ResumeRequest req;
  std::optional<std::string> tmpl;
  GoodputAccountant& goodput;
  Observability& obs;
  std::optional<std::optional<Checkpoint>> at_start;  // generation 0's, from the first lookup
};

// What one lookup found: the checkpoint, and the one it stepped over to get there.
struct Found {
  std::optional<Checkpoint> checkpoint;
  std::optional<Checkpoint> stepped_over;
};

// Off the loop: the lookup, and again without `step_over` when that one is still the newest.
Found look(ResumeRequest req, const std::string& step_over) {
  Found f{find_resume_checkpoint(req), std::nullopt};
  if (step_over.empty() || !f.checkpoint || f.checkpoint->path != step_over) return f;
  f.stepped_over = std::move(f.checkpoint);
  req.step_over.push_back({f.stepped_over->path, f.stepped_over->mtime_ns});
  f.checkpoint = find_resume_checkpoint(req);
  return f;
}

// On the loop: `c`, stepped over, is marked in the ledger and logged; every later lookup of this
// container steps over it too.
void mark_stepped_over(HookState& st, const Checkpoint& c, int generation) {
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
  st.obs.mark_poisoned(std::move(m));
  st.req.step_over.push_back({c.path, c.mtime_ns});
}

// On the loop: what the lookup found becomes the generation's target.
std::optional<ResumeTarget> answer(HookState& st, const GenerationPlan& plan, Found f) {
  const std::optional<Checkpoint>& c = f.checkpoint;
  if (f.stepped_over)
    mark_stepped_over(st, *f.stepped_over, plan.generation);
  else if (!plan.step_over.empty())
    spdlog::info("generation {}: {} not stepped over: {}", plan.generation,
                 escape_control(plan.step_over),
                 c ? "the newest complete checkpoint is now " + escape_control(c->path) +
                         " (one completed after it)"
                   : std::string("the lookup no longer finds it"));
  st.goodput.resume_selected(c ? std::optional<std::int64_t>(c->step) : std::nullopt);
  if (!c) return std::nullopt;
  ResumeTarget t{c->path, {}};
  if (st.tmpl) t.args = expand_resume_arg(*st.tmpl, *c);
  return t;
}

}  // namespace

std::function<SupervisorConfig::ResumeLookup(const GenerationPlan&)> resume_hook(
    ResumeRequest req, std::optional<std::string> tmpl, GoodputAccountant& goodput,
    Observability& obs, std::optional<Checkpoint> first) {
  auto st = std::make_shared<HookState>(
      HookState{std::move(req), std::move(tmpl), goodput, obs, std::move(first)});
  return [st](const GenerationPlan& plan) -> SupervisorConfig::ResumeLookup {
    std::optional<std::optional<Checkpoint>> at_start = std::move(st->at_start);
    st->at_start.reset();
    // The container's first lookup stands for generation 0 only: a node whose first start is a
    // later generation (a spare given a lost node's rank, an elastic node taken in) looks again,
    // as every other node does then (saves were written since its container started).
    if (plan.generation != 0) at_start.reset();
    // A later generation's lookup delays its start (seconds over a large tree): said first.
    if (!at_start)
      spdlog::info("checkpoint: looking under {} for the checkpoint to resume from",
                   escape_control(st->req.dir));
    // The lookup owns copies: it may outlive this run (a hung directory, abandoned at a stop).
    return [st, plan, req = st->req, at_start]() -> SupervisorConfig::ResumeAnswer {
      Found f = at_start ? Found{*at_start, std::nullopt} : look(req, plan.step_over);
      if (at_start && !plan.step_over.empty() && f.checkpoint &&
          f.checkpoint->path == plan.step_over)
        f = look(req, plan.step_over);
      return [st, plan, f] { return answer(*st, plan, f); };
    };
  };
}

}  // namespace tv
