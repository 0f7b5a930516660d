#include "cli/run_options.h"

#include "cli/torchrun_options.h"
#include "launcher/topology/topology_options.h"

namespace tv {

namespace {

constexpr double kDay = 86400;
constexpr double kWeek = 7 * kDay;

}  // namespace

std::vector<OptionSpec> run_option_specs() {
  using T = OptionType;
  auto specs = topology_option_specs();
  const std::vector<OptionSpec> rest = {
      {.name = "max-restarts",
       .type = T::kInt,
       .help = "whole-group restarts before giving up",
       .default_value = "3",
       .max = 1000,
       .from_pet = true},
      {.name = "retry-policy",
       .type = T::kChoice,
       .help = "smart: give up before --max-restarts on a failure that will fail again (a script "
               "that cannot start, the same failure at the same step twice, CUDA out of memory at "
               "the same step twice: docs/supervision.md); always: retry every failure",
       .default_value = "smart",
       .words = words_of(kRetryPolicyWords)},
      {.name = "grace-period",
       .type = T::kSeconds,
       .help = "seconds from SIGTERM to SIGKILL (default: under the platform's stop window: "
               "Kubernetes, Batch, Slurm 25, SageMaker 110, docker/podman 8)",
       .max = kDay},
      {.name = "hang-timeout",
       .type = T::kSeconds,
       .help = "seconds of silence (no output, no heartbeat) that count as a hang; 0 = off; auto: "
               "no new step (--progress-regex, heartbeat) for max(2 x the recent p99 step time, "
               "--stall-floor), and a start-up deadline (docs/supervision.md, \"Hangs\")",
       .default_value = "0",
       .max = kWeek,
       .words = {"auto"}},
      {.name = "startup-timeout",
       .type = T::kSeconds,
       .help = "with --hang-timeout auto: seconds from a generation's start to its first step "
               "(default: 3 x the longest start-up seen in this job, its ledger included, at "
               "least 600)",
       .min = 1,
       .max = kWeek},
      {.name = "stall-floor",
       .type = T::kSeconds,
       .help = "with --hang-timeout auto: the least seconds without a new step that are a stall",
       .default_value = "60",
       .min = 0.1,
       .max = kWeek},
      {.name = "hang-stacks",
       .type = T::kChoice,
       .help = "on a hang, and on `trainvisor stacks`: every rank's Python stacks into the log "
               "dir first (a faulthandler hook in Python workers), and NCCL's flight recorder "
               "settings where unset",
       .default_value = "on",
       .words = words_of(kHangStacksWords)},
      {.name = "monitor-interval",
       .help = "accepted for torchrun compatibility; trainvisor reacts to events"},
      {.name = "rdzv-port",
       .type = T::kInt,
       .help = "node agents' coordination port (default master port + 1)",
       .min = 1,
       .max = 65535},
      {.name = "rdzv-timeout",
       .type = T::kSeconds,
       .help = "seconds to wait for all nodes",
       .default_value = "900",
       .max = kWeek},
      {.name = "rdzv-last-call",
       .type = T::kSeconds,
       .help = "elastic --nnodes MIN:MAX: seconds generation 0 waits for more nodes once MIN "
               "joined, and a running generation for more late nodes before it re-forms "
               "(torchrun's --rdzv-conf last_call_timeout)",
       .default_value = "30",
       .max = kDay},
      {.name = "rdzv-token",
       .help = "key that authenticates the node agents (default: from the job id)",
       .metavar = "KEY"},
      {.name = "node-fingerprint",
       .type = T::kChoice,
       .help = "node 0 refuses (78) a job whose nodes differ in driver, CUDA, NCCL, aws-ofi-nccl, "
               "torch, GPU model or NCCL_*/FI_*/CUDA_*/TORCH_* settings; off: no check",
       .default_value = "check",
       .words = words_of(kNodeFingerprintWords)},
      {.name = "peer-timeout",
       .type = T::kSeconds,
       .help = "seconds of silence after which a node is lost",
       .default_value = "30",
       .max = kDay},
      {.name = "preflight",
       .type = T::kChoice,
       .help = "health checks before the first start (docs/health.md)",
       .default_value = "auto",
       .words = words_of(kPreflightWords)},
      {.name = "gpu-health",
       .type = T::kChoice,
       .help = "watch the GPUs while training (NVML in a child: critical Xid, uncorrectable ECC, "
               "row remapping, a lost GPU, slowdown); a fatal fault exits 74, the node fault "
               "(docs/health.md); auto: on where NVML loads and sees a GPU",
       .default_value = "auto",
       .words = words_of(kGpuHealthWords)},
      {.name = "gpu-health-interval",
       .type = T::kSeconds,
       .help = "seconds between the GPU health watch's counter reads (Xid events arrive at once)",
       .default_value = "15",
       .min = 0.05,
       .max = 3600},
      {.name = "require-transport",
       .type = T::kChoice,
       .help = "the inter-node transport the preflight requires",
       .default_value = "auto",
       .words = words_of(kTransportWords)},
      {.name = "min-busbw",
       .type = T::kNumber,
       .help = "preflight floor for NCCL bus bandwidth, GB/s",
       .default_value = "0",
       .max = 100000},
      {.name = "nccl-lib",
       .help = "libnccl the preflight probe loads (default: the workers')",
       .metavar = "PATH"},
      {.name = "checkpoint-dir",
       .help = "watched and resumed from (default /opt/ml/checkpoints when it exists)",
       .metavar = "DIR"},
      {.name = "checkpoint-format",
       .help = kCheckpointFormats,
       .default_value = "auto",
       .metavar = "FORMAT"},
      {.name = "checkpoint-experiment",
       .help = "when --checkpoint-dir holds runs of several experiments: resume only this one's "
               "(default: from the worker's --experiment_name or --task; docs/checkpoints.md)",
       .metavar = "NAME"},
      {.name = "resume",
       .type = T::kChoice,
       .help = "which checkpoint a (re)start resumes from",
       .default_value = "latest",
       .words = words_of(kResumeWords)},
      {.name = "resume-arg",
       .help = "appended at each (re)start when there is a checkpoint: {} {file} {dir} {run} "
               "{run_dir} {step} (docs/checkpoints.md)",
       .metavar = "TEMPLATE"},
      {.name = "resume-fallback",
       .type = T::kInt,
       .help = "checkpoints the job may step over when the generations that resumed from one fail "
               "the same way twice in a row (marked poisoned in the job's ledger); 0 = off "
               "(docs/checkpoints.md)",
       .default_value = "1",
       .max = 100},
      {.name = "save-signal",
       .help = "on a stop (SIGTERM/INT/HUP) send this signal to the workers first and hold their "
               "SIGTERM, inside the grace period, until a complete checkpoint newer than the stop "
               "appears (USR1, SIGUSR2, 10 ...; docs/checkpoints.md)",
       .metavar = "SIG"},
      {.name = "link-logs",
       .help = "the framework's log dir; becomes a symlink to <checkpoint-dir>/<basename(PATH)>",
       .metavar = "PATH"},
      {.name = "log-dir", .help = "per-rank, per-generation log files", .metavar = "DIR"},
      {.name = "workdir",
       .help = "change to DIR first: the command and every relative path are found from there "
               "(AWS Batch and SageMaker have no working-directory setting; render writes it)",
       .metavar = "DIR"},
      {.name = "log-format",
       .type = T::kChoice,
       .help = "trainvisor's own log lines and the workers' forwarded lines (json: one object a "
               "line, with rank and stream)",
       .default_value = "text",
       .words = words_of(kLogFormatWords)},
      {.name = "metrics-port",
       .type = T::kInt,
       .help = "serve Prometheus /metrics and /healthz on this port; 0 = off",
       .default_value = "0",
       .max = 65535},
      {.name = "metrics-address",
       .type = T::kAddress,
       .help = "address the metrics port listens on (default 127.0.0.1; 0.0.0.0 in a Kubernetes "
               "pod)"},
      {.name = "otlp-endpoint",
       .help = "push the /metrics figures over OTLP/HTTP to URL/v1/metrics (trainvisor's own, over "
               "OTEL_EXPORTER_OTLP_ENDPOINT: the workers keep theirs)",
       .metavar = "URL"},
      {.name = "progress-regex",
       .help = "step in the workers' output: RE with (?<step>\\d+) [(?<total>\\d+)], or auto",
       .metavar = "RE"},
      {.name = "mtbf-hours",
       .type = T::kNumber,
       .help = "MTBF of one node, for the checkpoint interval advice",
       .max = 1e6},
      {.name = "flops-per-step",
       .type = T::kNumber,
       .help = "model FLOPs of one training step of the whole job, for MFU against the GPUs' "
               "dense BF16 peak",
       .min = 1,
       .max = 1e30,
       .metavar = "FLOPS"},
      {.name = "ledger-interval",
       .type = T::kSeconds,
       .help = "seconds between writes of the job's ledger in the checkpoint dir (node 0; "
               "also at start and exit); 0 = no ledger",
       .default_value = "30",
       .max = 3600,
       .metavar = "SECONDS"},
      {.name = "metrics-log-interval",
       .type = T::kSeconds,
       .help = "seconds between node 0's one-line metrics records on stderr (`trainvisor "
               "metrics: goodput=... restarts=...`, also at exit; SageMaker's MetricDefinitions "
               "read them); 0 = none",
       .default_value = "0",
       .max = 86400,
       .metavar = "SECONDS"},
      {.name = "summary-file",
       .help = "the goodput summary as JSON at the end of the run",
       .metavar = "PATH"},
      {.name = "failure-file",
       .help = "root cause for SageMaker (written once)",
       .default_value = "/opt/ml/output/failure",
       .metavar = "PATH"},
      {.name = "termination-log",
       .help = "root cause for Kubernetes",
       .default_value = "/dev/termination-log",
       .metavar = "PATH"},
      {.name = "export",
       .help = "at success, copy DIR's entries (or FILE, or each match of GLOB) into the export "
               "directory, atomically; a failed copy exits 73 (docs/export.md)",
       .metavar = "DIR_OR_GLOB"},
      {.name = "export-dir",
       .help = "where --export copies to (default $SM_MODEL_DIR; /opt/ml/model on SageMaker)",
       .metavar = "DIR"},
      {.name = "run-id", .help = "TORCHELASTIC_RUN_ID (default: from the job id)", .metavar = "ID"},
      {.name = "role", .help = "ROLE_NAME of the workers", .default_value = "default"},
      {.name = "warm-standby",
       .type = T::kChoice,
       .help = "a warm interpreter per rank (torch imported) takes over at a restart; auto = on "
               "for Python commands",
       .default_value = "auto",
       .words = words_of(kWarmStandbyWords)},
      {.name = "warm-import", .help = "what standbys import besides torch", .metavar = "MOD,MOD"},
      {.name = "no-python",
       .type = T::kFlag,
       .help = "run the command as it is (no python3 -u in front)"},
      {.name = "module",
       .type = T::kFlag,
       .help = "the command is a python module (python3 -u -m MOD)",
       .short_name = "m"},
  };
  specs.insert(specs.end(), rest.begin(), rest.end());
  const auto torchrun = torchrun_option_specs();
  specs.insert(specs.end(), torchrun.begin(), torchrun.end());
  return specs;
}

}  // namespace tv
