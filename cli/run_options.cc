#include "cli/run_options.h"

#include "checkpoint/resume.h"
#include "launcher/topology/topology_options.h"

namespace tv {

std::vector<OptionSpec> run_option_specs() {
  auto specs = topology_option_specs();
  const std::vector<OptionSpec> rest = {
      {"max-restarts", true, "3", "whole-group restarts before giving up", true},
      {"grace-period", true, std::nullopt,
       "seconds from SIGTERM to SIGKILL (default: under the platform's stop window: Kubernetes, "
       "Batch, "
       "Slurm 25, SageMaker 110, docker/podman 8); 0 to 86400"},
      {"hang-timeout", true, "0",
       "seconds of silence (no output, no heartbeat) that count as a hang, up to 604800; 0 = off"},
      {"monitor-interval", true, std::nullopt,
       "accepted for torchrun compatibility; trainvisor reacts to events"},
      {"rdzv-port", true, std::nullopt, "node agents' coordination port (default master port + 1)"},
      {"rdzv-timeout", true, "900", "seconds to wait for all nodes, 0 to 604800"},
      {"rdzv-token", true, std::nullopt,
       "key that authenticates the node agents (default: from the job id)"},
      {"peer-timeout", true, "30", "seconds of silence after which a node is lost, 0 to 86400"},
      {"preflight", true, "auto", "auto|none|basic|full"},
      {"require-transport", true, "auto", "auto|efa|net|any"},
      {"min-busbw", true, "0", "preflight floor for NCCL bus bandwidth, GB/s, 0 to 100000"},
      {"nccl-lib", true, std::nullopt, "libnccl the preflight probe loads (default: the workers')"},
      {"checkpoint-dir", true, std::nullopt,
       "watched and resumed from (default /opt/ml/checkpoints when it exists)"},
      {"checkpoint-format", true, "auto", kCheckpointFormats},
      {"resume", true, "latest", "latest|best|none"},
      {"resume-arg", true, std::nullopt,
       "appended at each (re)start when there is a checkpoint: {} {file} {dir} {run} {run_dir} "
       "{step} (docs/checkpoints.md)"},
      {"link-logs", true, std::nullopt,
       "PATH: the framework's log dir; becomes a symlink to <checkpoint-dir>/<basename(PATH)>"},
      {"log-dir", true, std::nullopt, "per-rank, per-attempt log files"},
      {"log-format", true, "text", "text|json (trainvisor's own log lines)"},
      {"metrics-port", true, "0", "serve Prometheus /metrics and /healthz on this port; 0 = off"},
      {"metrics-address", true, std::nullopt,
       "address the metrics port listens on (default 127.0.0.1; 0.0.0.0 in a Kubernetes pod)"},
      {"progress-regex", true, std::nullopt,
       "step in the workers' output: RE with (?<step>\\d+) [(?<total>\\d+)], or auto"},
      {"mtbf-hours", true, std::nullopt, "MTBF of one node, for the checkpoint interval advice"},
      {"summary-file", true, std::nullopt, "the goodput summary as JSON at the end of the run"},
      {"failure-file", true, "/opt/ml/output/failure", "root cause for SageMaker (written once)"},
      {"termination-log", true, "/dev/termination-log", "root cause for Kubernetes"},
      {"run-id", true, std::nullopt, "TORCHELASTIC_RUN_ID (default: from the job id)"},
      {"role", true, "default", "ROLE_NAME of the workers"},
      {"warm-standby", true, "auto",
       "on|off|auto: a warm interpreter per rank (torch imported) takes over at a restart; auto = "
       "on for Python commands"},
      {"warm-import", true, std::nullopt, "MOD,MOD: what standbys import besides torch"},
      {"no-python", false, std::nullopt, "run the command as it is (no python3 -u in front)"},
      {"module", false, std::nullopt, "the command is a python module (python3 -u -m MOD)", false,
       "m"},
  };
  specs.insert(specs.end(), rest.begin(), rest.end());
  return specs;
}

}  // namespace tv
