// `run`'s resume hook (SupervisorConfig::find_resume): the newest complete checkpoint at each
// (re)start, stepping over the checkpoints the job found poisoned (--resume-fallback: the
// RootCauseJudge names one in GenerationPlan::step_over, launcher/supervision/resume_fallback.h;
// the marks live in the job's ledger, so a new container steps over them too).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "checkpoint/resume.h"
#include "cli/observability.h"
#include "launcher/supervision/supervisor.h"

namespace tv {

// The ledger's marks become `req.step_over`; then the lookup generation 0 resumes from.
Selection first_resume_lookup(ResumeRequest& req, const Observability& obs);

// The hook: generation 0 takes `first`; a later generation looks again. When its plan names a
// checkpoint to step over and the lookup still finds that one newest (no newer checkpoint
// completed since: "soon after resuming"), it is marked in the ledger, logged with its reason,
// and the lookup runs again without it; a newer one is resumed as it is.
std::function<std::optional<ResumeTarget>(const GenerationPlan&)> resume_hook(
    ResumeRequest req, std::optional<std::string> tmpl, GoodputAccountant& goodput,
    Observability& obs, std::optional<Checkpoint> first);

}  // namespace tv
