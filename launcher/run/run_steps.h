// The steps of `trainvisor run`, each a function of the plan (launcher/plan/run_plan.h) and the
// machine, so that cli/run_command.cc only parses and wires them in order: enter --workdir (or
// SageMaker's code directory with `train`), plan_run on this machine's facts, this node's limits,
// the node rank from the rendezvous, the preflight, the MFU's GPU peak, the first resume lookup
// and the hook of the later ones, the banner's facts, the cluster, the checkpoint watch and the
// export after success. Each refusal is an Error with its kind (common/exit_codes.h).
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "checkpoint/watcher.h"
#include "common/environment.h"
#include "common/file_system.h"
#include "common/options.h"
#include "common/result.h"
#include "launcher/job/cluster.h"
#include "launcher/node/supervisor.h"
#include "launcher/observability/goodput.h"
#include "launcher/plan/run_plan.h"
#include "launcher/rendezvous/network_cluster.h"
#include "launcher/run/observability.h"
#include "launcher/run/start_banner.h"
#include "launcher/topology/gpu_count.h"
#include "launcher/topology/host_address.h"

namespace tv {

// --workdir: what the seeds' `cd /workspace/IsaacLab && ...` did, before anything else is read.
Status change_to_workdir(const Options& o);
// `train` with no such program: SageMaker's training script, run from its code directory.
Status resolve_sagemaker_train(Options& o, const Environment& env);
// trainvisor's current directory once in --workdir; "" when it cannot be read.
std::string current_directory();
// The machine plan_run reads: the files, GPUs and address given, PATH, this binary, a child of
// the workers' python for its torch, and the current directory.
PlanFacts real_plan_facts(const FileSystem& fs, const GpuCounter& gpus, const HostAddress& host,
                          const std::string& cwd);
// RLIMIT_NOFILE below what `workers` local workers need: 71 before anything starts.
Status check_open_files(int workers);
// A lost node's refusal while this node has a stop signal of its own is that stop (node_run.h).
Error stop_over_lost(Error e);
// No node rank from the options or a platform: the rendezvous gives it; `cluster` is the one
// that found it and runs the job.
Status assign_node_rank(RunPlan& p, boost::asio::io_context& io,
                        std::unique_ptr<NetworkCluster>& cluster);
// MFU's GPU peak, from a `__query gpu` child, only when MFU is asked for.
void resolve_gpu_peak(ObservabilityConfig& c, const Environment& env);
// --preflight: this node's checks, or every node's through the rendezvous (--preflight full).
Status run_preflight_if_asked(RunPlan& p, const Environment& env, boost::asio::io_context& io,
                              std::unique_ptr<NetworkCluster>& cluster);
// The first resume lookup (a signal during it ends the run) and the hook of every later one;
// returns the banner's resume item.
std::string hook_resume(RunPlan& p, GoodputAccountant& goodput, Observability& obs,
                        boost::asio::io_context& io);
BannerFacts banner_facts(RunPlan& p, const Environment& env, const std::string& resume);
// One node: LocalCluster; more: the rendezvous.
std::unique_ptr<Cluster> make_cluster(boost::asio::io_context& io, const RunPlan& p);
// The checkpoint watcher, its events posted to `io`: the goodput and the Supervisor hear them.
std::unique_ptr<CheckpointWatcher> watch_checkpoints(boost::asio::io_context& io, const RunPlan& p,
                                                     GoodputAccountant& goodput,
                                                     Supervisor& supervisor);
// The run succeeded: --export's copy decides the exit code (73 with its reason when it failed).
int export_after_success(const RunPlan& p, const FileSystem& fs, const std::string& cwd);

}  // namespace tv
