// The health preflight: GPU, EFA/libfabric and NCCL checks run before the first start of the
// workers (`run --preflight`) or alone (`trainvisor preflight`).
//
// Each check returns a CheckResult (name, outcome, message for a person, details for machines);
// one place (decide_passed in preflight.cc) decides whether the report passes: it passes when no
// check failed. Warnings and skips never fail a report.
//
// The NCCL probe starts one `trainvisor __probe-rank` process per local GPU. Alone (no `group`) it
// hands them an ncclUniqueId made by a child of this process (health/isolated_query.h: no vendor
// library is ever loaded here); in a multi-node probe (`group`, see
// docs/health.md) the id is node 0's and the ranks are this node's share of the global ranks. It
// blocks until every check finished or timed out; its children (the GPU and libfabric queries,
// the id host, the probe ranks) are started and reaped by Init (common/init.h) and killed at
// their deadlines. Not thread-safe: call it from one thread.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/file_system.h"

namespace tv {

// One node's share of a multi-node NCCL probe: every node's ranks join one communicator.
struct ProbeGroup {
  std::string unique_id_hex;  // node 0's ncclUniqueId ("" when node 0 could not make one)
  int first_rank = 0;         // node_rank * nproc_per_node
  int nranks = 0;             // nnodes * nproc_per_node
};

// How much the preflight checks: none, basic (this node's GPUs, devices, libraries), full (and the
// NCCL probe); auto is decided by resolve_preflight_level.
enum class PreflightLevel { kAuto, kNone, kBasic, kFull };
const char* level_word(PreflightLevel level);  // "auto", "none", "basic", "full": for the logs

// --require-transport: what the inter-node transport must be (health/transport.h says what each
// accepts); auto is decided by decide_require_transport, into one of the others.
enum class TransportRule { kAuto, kEfa, kNet, kAny };
const char* transport_word(TransportRule rule);  // "auto", "efa", "net", "any": for the logs

struct PreflightConfig {
  PreflightLevel level = PreflightLevel::kBasic;  // basic | full
  int expected_gpus = -1;                         // -1: don't check
  int nnodes = 1;
  TransportRule require_transport = TransportRule::kAuto;  // resolved by decide_require_transport
  // This node's instance type and where it came from (Topology::instance_type): "" unknown.
  std::string instance_type, instance_type_origin;
  double min_busbw = 0;                 // GB/s, nccl-tests' bus bandwidth; 0: no floor
  std::optional<std::string> nccl_lib;  // --nccl-lib: the libnccl to probe instead of the workers'
  bool single_node_net = false;         // NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 for the probe
  std::vector<std::string>
      worker_command;  // the workers' argv (to find torch's libnccl when it is python)
  Environment env;
  std::string log_dir;              // where per-rank NCCL logs go ("" = a temp dir)
  std::string fi_provider = "efa";  // the libfabric provider the libfabric check asks for
  std::optional<ProbeGroup> group;  // multi-node probe; unset: this node alone, its own id
};

enum class Outcome { kPass, kWarn, kFail, kSkip };

struct CheckResult {
  std::string name;
  Outcome outcome;
  std::string message;
  nlohmann::json details;
};

struct PreflightReport {
  std::vector<CheckResult> checks;
  bool passed = false;
  double seconds = 0;
};

PreflightReport run_preflight(const PreflightConfig&);
// Node 0 of a multi-node probe: locates the NCCL the probe will load (as run_preflight does) and
// has a child call ncclGetUniqueId; that child hosts NCCL's bootstrap root, so keep the returned
// host alive until every node's ranks initialized.
class NcclIdHost;
std::unique_ptr<NcclIdHost> make_probe_unique_id(const PreflightConfig&);
// One line for the other nodes: "node N: <check>: <message>" of the first failed check (the cause
// that applies first; the list of usual causes is left to node N's own report), or
// "node N: passed (<the probe's message>)".
std::string preflight_summary(const PreflightReport&, int node_rank);
std::string format_report(const PreflightReport&);  // the human table
nlohmann::json report_to_json(const PreflightReport&);

// Extra worker environment implied by the transport requirement (e.g. NCCL_NET when efa is
// required and NCCL_NET is unset).
std::map<std::string, std::string> transport_worker_env(TransportRule resolved,
                                                        const Environment& env);
// The facts `--require-transport auto` is decided from, the same for `run` and `preflight`.
struct TransportFacts {
  int nnodes = 1;
  bool efa_devices = false;          // EFA devices in sysfs (efa_devices_present)
  std::string instance_type;         // this node's EC2 type ("ml.p4d.24xlarge"); "" unknown
  std::string instance_type_origin;  // "file .../resourceconfig.json (current_instance_type)"
};
struct TransportDecision {
  TransportRule resolved = TransportRule::kAny;  // never kAuto
  std::string reason;         // the fact that decided it, in words ("" when not auto)
  bool efa_expected = false;  // more than one node, and EFA devices or a type known to have EFA
};
// The one rule: `auto` means efa on a job of more than one node whose EFA devices are visible or
// whose instance type is known to have EFA (common/instance_facts.h: SageMaker gives an
// EFA-capable ml. instance its interfaces, a rendered pod asks for them), else any; the other
// values are returned unchanged. Pure.
TransportDecision decide_require_transport(TransportRule requested, const TransportFacts&);
bool efa_devices_present();  // sysfs: /sys/class/infiniband/* with driver efa
// The one rule for `auto`, used by `run --preflight auto` and by `preflight` without --level
// (SPEC: "auto: full when more than one node and EFA devices are present, else basic"): "full"
// (the NCCL probe too) when the job spans nodes over EFA, so the probe measures the path the
// job will use, "basic" otherwise; none|basic|full are returned unchanged.
PreflightLevel resolve_preflight_level(PreflightLevel requested, int nnodes,
                                       bool efa_devices_present);

// NVIDIA GPUs on this node's PCI bus, driver or not: the functions under `dir` whose `vendor` is
// 0x10de and whose `class` is a VGA (0x0300xx) or 3D (0x0302xx) controller (NVSwitches and audio
// functions are not GPUs).
int nvidia_gpu_functions(const FileSystem& fs, const std::string& dir = "/sys/bus/pci/devices");
// The one rule for how many GPUs the preflight expects, used by `run` and by `preflight` alike:
// `workers` (-1: no count check) on a node with NVIDIA GPUs, as device nodes the container sees
// (`visible_gpus`) or, without a driver, as PCI functions (`pci_gpus`), so a GPU node whose driver
// is missing fails both; -1 on a node with none, whose workers run on the CPU (gloo): both pass.
int resolve_expected_gpus(int workers, int visible_gpus, int pci_gpus);

// Helpers shared by the commands.
const char* outcome_name(Outcome o);  // "pass" | "warn" | "fail" | "skip"
bool decide_passed(const std::vector<CheckResult>& checks);

}  // namespace tv
