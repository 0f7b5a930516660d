// `run`'s resume hook (SupervisorConfig::find_resume): the newest complete checkpoint at each
// (re)start, stepping over the checkpoints the job found poisoned (--resume-fallback: the
// RootCauseJudge names one in GenerationPlan::step_over, launcher/job/resume_fallback.h;
// the marks live in the job's ledger, so a new container steps over them too). Every lookup runs
// off the thread of the event loop (launcher/node/resume_wait.h): the checkpoint directory
// may be slow or hung, and the loop answers heartbeats and signals meanwhile.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <optional>
#include <string>

#include "checkpoint/resume.h"
#include "launcher/node/supervisor.h"
#include "launcher/run/observability.h"

namespace tv {

// The ledger's marks become `req.step_over`; then the lookup generation 0 resumes from, run off
// this thread while `io` runs (a rendezvous joined early keeps answering), with the deadline's
// warning (ResumeWait). A stop signal meanwhile is Init's (the run ends 128+N at once).
Selection first_resume_lookup(ResumeRequest& req, const Observability& obs,
                              boost::asio::io_context& io);

// The hook: generation 0 takes `first`; a later generation looks again. When its plan names a
// checkpoint to step over and the lookup still finds that one newest (no newer checkpoint
// completed since: "soon after resuming"), the lookup runs again without it, and back on the
// loop it is marked in the ledger and logged with its reason; a newer one is resumed as it is.
std::function<SupervisorConfig::ResumeLookup(const GenerationPlan&)> resume_hook(
    ResumeRequest req, std::optional<std::string> tmpl, GoodputAccountant& goodput,
    Observability& obs, std::optional<Checkpoint> first);

}  // namespace tv
