#include "launcher/workers/worker_start.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/exit_codes.h"

namespace tv {

WorkerStart::WorkerStart(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                         const RankDirs& dirs, const EvidenceFiles& evidence,
                         WorkerStartSetup setup, Spawner::OnExit on_exit)
    : io_(io),
      time_(time),
      spawner_(spawner),
      dirs_(dirs),
      evidence_(evidence),
      setup_(std::move(setup)),
      on_exit_(std::move(on_exit)),
      rank_env_(static_cast<size_t>(setup_.layout.nproc_per_node)) {}

void WorkerStart::place(const GenerationPlan& plan) {
  if (plan.nnodes <= 0 || plan.node_rank < 0) return;
  setup_.layout.nnodes = plan.nnodes;
  setup_.layout.node_rank = plan.node_rank;
}

// A refused rank directory (a link planted at attempt_<g>, another user's directory, a read-only
// log dir) is trainvisor's own configuration error, decided before any worker of the generation
// starts (docs/supervision.md).
// An error file left by an earlier run in the same --log-dir would be read as this worker's; a
// stale stacks file's header would name another pid.
WorkerStart::RankDirsWork WorkerStart::rank_dirs_work(int generation) const {
  std::vector<int> ranks;
  for (int l = 0; l < setup_.layout.nproc_per_node; ++l)
    ranks.push_back(global_rank(setup_.layout, l));
  return [dirs = &dirs_, work_dir = setup_.work_dir, attempt = setup_.first_attempt + generation,
          ranks]() -> Result<std::vector<UniqueFd>> {
    std::vector<UniqueFd> opened;
    for (int rank : ranks) {
      auto fd = dirs->open(work_dir, attempt, rank);
      if (!fd) return fd.error();
      dirs->remove_stale(fd->get(), "error.json");
      dirs->remove_stale(fd->get(), "stacks.txt");
      opened.push_back(std::move(*fd));
    }
    return opened;
  };
}

Status WorkerStart::take_rank_dirs(int generation, Result<std::vector<UniqueFd>> opened) {
  rank_dirs_.clear();
  if (!opened)
    return Error{ErrorKind::kConfig,
                 "generation " + std::to_string(generation) +
                     " not started: " + opened.error().message +
                     ": expected a directory of trainvisor's own (its user's, writable by no one "
                     "else)"};
  rank_dirs_ = std::move(*opened);
  return ok_status();
}

Result<StartedWorker> WorkerStart::start(int local_rank, const GenerationPlan& plan,
                                         const std::optional<ResumeTarget>& resume,
                                         StandbySet* standbys) {
  const int rank = global_rank(setup_.layout, local_rank);
  const std::string dir =
      rank_dir_path(setup_.work_dir, setup_.first_attempt + plan.generation, rank);
  const WorkerProcess::Identity id{local_rank,
                                   rank,
                                   plan.generation,
                                   dir + "/error.json",
                                   dir + "/heartbeat",
                                   dir + "/stacks.txt",
                                   setup_.keep_logs ? dir : "",
                                   setup_.json_worker_lines};
  const UniqueFd dir_fd = std::move(rank_dirs_.at(static_cast<size_t>(local_rank)));
  auto w = std::make_shared<WorkerProcess>(io_, time_, spawner_, id, dir_fd.get());

  WorkerAttempt attempt;
  attempt.local_rank = local_rank;
  attempt.generation = plan.generation;
  attempt.master_port = plan.master_port;
  attempt.error_file = id.error_file;
  attempt.heartbeat_file = id.heartbeat_file;
  if (resume) attempt.resume_checkpoint = resume->path;
  evidence_.add_env(attempt, dir);
  std::vector<std::string> argv = setup_.argv;
  if (resume) argv.insert(argv.end(), resume->args.begin(), resume->args.end());
  Environment env = build_worker_env(setup_.base_env, setup_.layout, attempt);
  rank_env_[static_cast<size_t>(local_rank)] = env;
  int out_r = -1, err_r = -1;
  if (standbys && plan.generation > 0)
    if (auto pid = standbys->take(local_rank, id.rank, env, argv, &out_r, &err_r)) {
      w->adopt_pipes(out_r, err_r);
      return StartedWorker{w, *pid};
    }
  int out_w = -1, err_w = -1;
  if (!w->open_pipes(&out_w, &err_w))  // trainvisor's own descriptors: its 71, not 126
    return Error{ErrorKind::kOsError,
                 std::string("cannot create output pipes: ") + std::strerror(errno)};
  SpawnRequest req{setup_.executable, argv, std::move(env), /*stdin_fd=*/-1, out_w, err_w};
  auto pid = spawner_.spawn(req, on_exit_);
  ::close(out_w);
  ::close(err_w);
  if (!pid) return pid.error();
  return StartedWorker{w, *pid};
}

}  // namespace tv
