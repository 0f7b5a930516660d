// resolve_topology(): which source, explicit overrides, nproc_per_node, master_port.
#include "launcher/topology/topology.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>

#include "common/escape.h"
#include "common/parse_number.h"
#include "launcher/topology/topology_sources.h"

namespace tv {
namespace {

using topo::config_error;

// --nnodes / --node-rank / --master-addr given as a flag or TRAINVISOR_ variable (PET_ values
// belong to the kubeflow source, defaults to nobody).
struct Explicit {
  std::optional<OptionValue> nnodes, node_rank, master_addr;
  bool any() const { return nnodes || node_rank || master_addr; }
};

std::optional<OptionValue> explicit_value(const Options& opts, const std::string& name) {
  auto v = opts.get(name);
  if (!v || v->origin == "default" || v->origin.starts_with("PET_")) return std::nullopt;
  return v;
}

Explicit explicit_values(const Options& opts) {
  return {explicit_value(opts, "nnodes"), explicit_value(opts, "node-rank"),
          explicit_value(opts, "master-addr")};
}

Error bad_option(const OptionValue& v, const std::string& expected) {
  return config_error(v.origin + "=\"" + escape_control(v.value) + "\": expected " + expected);
}

Result<int> option_int(const OptionValue& v, long min, long max, const std::string& why = "") {
  const auto out = parse_integer<long>(v.value, min, max);
  if (!out)
    return bad_option(v, "an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                             (why.empty() ? "" : " (" + why + ")"));
  return static_cast<int>(*out);
}

// Which platform: "auto" or a forced one, and the origin of that choice.
Result<std::pair<std::string, std::string>> chosen_platform(const Options& opts) {
  auto p = opts.get_choice("platform");
  if (!p) return p.error();
  const OptionValue pv = *opts.get("platform");
  if (!opts.flag("standalone")) return std::make_pair(*p, pv.origin);
  const OptionValue sv = *opts.get("standalone");
  if (*p != "auto" && *p != "local")
    return config_error(sv.origin + " conflicts with " + pv.origin + "=\"" + pv.value +
                        "\": expected --standalone alone (it means --platform local)");
  return std::make_pair(std::string("local"), sv.origin);
}

// --nnodes N, or MIN:MAX with 1 <= MIN < MAX (cli/torchrun_options.cc made N:N into N): the
// node count, and MIN where elastic (else 0).
Result<std::pair<int, int>> nnodes_range(const OptionValue& v) {
  const auto colon = v.value.find(':');
  if (colon == std::string::npos) {
    auto n = option_int(v, 1, kMaxNodes);
    if (!n) return n.error();
    return std::make_pair(*n, 0);
  }
  const auto lo = parse_integer<long>(v.value.substr(0, colon), 1, kMaxNodes);
  const auto hi = parse_integer<long>(v.value.substr(colon + 1), 1, kMaxNodes);
  if (!lo || !hi || *lo > *hi)
    return bad_option(v, "N or MIN:MAX with 1 <= MIN <= MAX <= " + std::to_string(kMaxNodes));
  return std::make_pair(static_cast<int>(*hi), *lo == *hi ? 0 : static_cast<int>(*lo));
}

// No platform detected: the explicit values are the whole topology (the rest defaults).
Result<Topology> explicit_source(const Explicit& ex) {
  Topology t;
  t.platform = Platform::kExplicit;
  t.origin["nnodes"] = t.origin["node_rank"] = t.origin["master_addr"] = "default";
  if (ex.nnodes) {
    auto n = nnodes_range(*ex.nnodes);
    if (!n) return n.error();
    t.nnodes = n->first;
    t.min_nnodes = n->second;
    t.origin["nnodes"] = ex.nnodes->origin;
  }
  if (ex.nnodes && t.nnodes > 1 && !ex.master_addr)
    return config_error(ex.nnodes->origin + "=\"" + ex.nnodes->value +
                        "\" without --master-addr: expected --master-addr (or "
                        "TRAINVISOR_MASTER_ADDR), the address of node rank 0, for more than "
                        "one node");
  if (!ex.node_rank && t.nnodes > 1) {
    // No rank anywhere: the rendezvous finds it (docs/coordination.md, "Node ranks").
    t.rank_by_rendezvous = true;
    t.origin["node_rank"] =
        "none given: node 0 is the node that hosts the rendezvous, the others are assigned in "
        "join order";
  }
  return t;
}

// What a platform's topology is read from, one row per platform (common/platforms.h has its
// name and stop window): whether its variables (or file) are there, its source
// (topology_<name>.cc), how `--platform auto` says it found it, and what `--platform NAME`
// expected where they are not. `--platform auto` takes the first row detected, in this order;
// none: local (or explicit, with options).
struct SourceInputs {
  const Options& opts;
  const Environment& env;
  const FileSystem& fs;
  const HostAddress& self;
  std::string rc;     // --resource-config
  bool master_given;  // --master-addr (or --rdzv-endpoint) replaces the platform's master
};

struct SourceRow {
  Platform id;
  bool (*detected)(const SourceInputs&);
  // --platform NAME: refused with missing()'s text unless forced_ok (null: detected) holds;
  // missing null: the source refuses a partial environment itself.
  bool (*forced_ok)(const SourceInputs&);
  std::string (*missing)(const SourceInputs&);
  Result<Topology> (*read)(const SourceInputs&);
  std::string (*detected_by)(const SourceInputs&);
};

const SourceRow kSources[] = {
    {Platform::kSageMaker,
     [](const SourceInputs& in) { return topo::sagemaker_detected(in.env, in.fs, in.rc); },
     [](const SourceInputs& in) { return topo::sagemaker_file_present(in.fs, in.rc); },
     [](const SourceInputs& in) {
       return "--platform sagemaker: file " + in.rc +
              " does not exist: expected SageMaker's resource config (--resource-config PATH)";
     },
     [](const SourceInputs& in) {
       return topo::sagemaker_source(in.env, in.fs, in.rc, in.opts.get("instance-groups"));
     },
     [](const SourceInputs& in) { return "detected: file " + in.rc + " exists"; }},
    {Platform::kKubeflow, [](const SourceInputs& in) { return topo::kubeflow_detected(in.env); },
     nullptr,
     [](const SourceInputs&) {
       return std::string(
           "--platform kubeflow: none of PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR is set, nor "
           "MASTER_ADDR + RANK + WORLD_SIZE: expected the variables of the Kubeflow training "
           "operator");
     },
     [](const SourceInputs& in) { return topo::kubeflow_source(in.env, in.master_given); },
     [](const SourceInputs& in) {
       for (const char* v : {"PET_NNODES", "PET_NODE_RANK", "PET_MASTER_ADDR"})
         if (in.env.has(v)) return std::string("detected: env ") + v;
       return std::string("detected: env MASTER_ADDR + RANK + WORLD_SIZE");
     }},
    {Platform::kBatch, [](const SourceInputs& in) { return topo::batch_detected(in.env); }, nullptr,
     [](const SourceInputs&) {
       return std::string(
           "--platform batch: AWS_BATCH_JOB_NUM_NODES is not set: expected an AWS Batch "
           "multi-node parallel job");
     },
     [](const SourceInputs& in) { return topo::batch_source(in.env, in.self, in.master_given); },
     [](const SourceInputs&) { return std::string("detected: env AWS_BATCH_JOB_NUM_NODES"); }},
    {Platform::kSlurm, [](const SourceInputs& in) { return topo::slurm_detected(in.env); }, nullptr,
     nullptr, [](const SourceInputs& in) { return topo::slurm_source(in.env); },
     [](const SourceInputs&) { return std::string("detected: env SLURM_JOB_ID + SLURM_NNODES"); }},
};

const SourceRow* source_of(Platform p) {
  for (const SourceRow& r : kSources)
    if (r.id == p) return &r;
  return nullptr;
}

std::string detected_by(const Topology& t, const SourceInputs& in, const Explicit& ex) {
  if (t.platform == Platform::kExplicit)
    return "detected: " + (ex.nnodes      ? ex.nnodes
                           : ex.node_rank ? ex.node_rank
                                          : ex.master_addr)
                              ->origin;
  if (const SourceRow* r = source_of(t.platform)) return r->detected_by(in);
  return "default (no platform detected)";
}

// A detected platform is the topology and explicit values override it field by field
// (apply_explicit); only with no platform detected do they make the topology `explicit`.
Result<Topology> detect_source(const SourceInputs& in, const Explicit& ex) {
  for (const SourceRow& r : kSources) {
    if (!r.detected(in)) continue;
    return r.read(in);
  }
  if (!ex.any()) return topo::local_source();
  return explicit_source(ex);
}

// --platform NAME: that platform's source, refused where its variables are missing.
Result<Topology> forced_source(const std::string& name, const SourceInputs& in) {
  const SourceRow* r = source_of(platform_named(name).value_or(Platform::kLocal));
  if (!r) return topo::local_source();
  if (r->missing && !(r->forced_ok ? r->forced_ok : r->detected)(in))
    return config_error(r->missing(in));
  return r->read(in);
}

// Explicit values over a platform (forced or detected), the one rule (docs/topology.md,
// "Explicit values over a platform"; tests/unit/plan/explicit_over_platform_test.cc):
//   --nnodes                        must agree with the platform's count, else 78 naming both
//   --node-rank                     must agree with the platform's rank, else 78 naming both
//   --master-addr, --rdzv-endpoint  replace the master address (apply_rank_and_master)
//   --master-port                   replaces the port (apply_port)
//   --nproc-per-node                is its own (no platform fixes it: apply_nproc)
// Everything else (hosts, job id, workers' variables, stop window) stays the platform's. A host
// that does not train (SageMaker's other instance groups) exits 0 before any of it matters.
Status apply_explicit(const Explicit& ex, const std::string& platform_label, Topology& t) {
  if (!t.not_training.empty()) return ok_status();
  const auto conflict = [&](const OptionValue& v, const std::string& field, int value,
                            const std::string& what) {
    return config_error(v.origin + "=\"" + escape_control(v.value) + "\" conflicts with " +
                        t.origin[field] + " = " + std::to_string(value) + " (" + platform_label +
                        "): expected the same " + what + ", or no " + v.origin);
  };
  if (ex.nnodes) {
    auto n = option_int(*ex.nnodes, 1, kMaxNodes);
    if (!n) return n.error();
    if (*n != t.nnodes) return conflict(*ex.nnodes, "nnodes", t.nnodes, "node count");
  }
  if (ex.node_rank) {
    auto r = option_int(*ex.node_rank, 0, kMaxNodes - 1);
    if (!r) return r.error();
    if (*r != t.node_rank) return conflict(*ex.node_rank, "node_rank", t.node_rank, "rank");
  }
  return ok_status();
}

// --spare-nodes K (docs/coordination.md, "Hot spare nodes"). An explicit --nnodes N is the world
// and the spares come beside it (ranks 0..N+K-1, ft_launcher's meaning); a platform's node count
// is every container it started, so the world is that count less the spares.
Status apply_spares(const Options& opts, const Explicit& ex, Topology& t) {
  auto k = opts.get_int("spare-nodes");
  if (!k) return k.error();
  if (*k == 0) return ok_status();
  const std::string origin = opts.get("spare-nodes")->origin;
  const std::string said = origin + "=\"" + std::to_string(*k) + "\"";
  if (t.platform == Platform::kSageMaker)
    return config_error(said +
                        " under platform sagemaker: expected no spares (SageMaker's host "
                        "list fixes every host's part, and a failed host fails the training job)");
  if (t.platform != Platform::kExplicit && t.min_nnodes == 0) {
    if (*k >= t.nnodes)
      return config_error(said + ": expected fewer spares than the " + std::to_string(t.nnodes) +
                          " nodes of " + t.origin["nnodes"] +
                          " (the platform's count includes the spares)");
    t.spare_nodes = static_cast<int>(*k);
    t.nnodes -= t.spare_nodes;
    t.origin["nnodes"] += " less " + origin + " " + std::to_string(*k);
    t.origin["spare_nodes"] = origin;
    return ok_status();
  }
  if (t.min_nnodes > 0)
    return config_error(said + " with " + t.origin["nnodes"] + " " + std::to_string(t.min_nnodes) +
                        ":" + std::to_string(t.nnodes) +
                        ": expected a fixed --nnodes N with spares");
  if (!ex.master_addr)
    return config_error(said +
                        " without --master-addr: expected --master-addr (or "
                        "TRAINVISOR_MASTER_ADDR), the address of node rank 0");
  t.spare_nodes = static_cast<int>(*k);
  t.origin["spare_nodes"] = origin;
  return ok_status();
}

Status apply_rank_and_master(const Explicit& ex, Topology& t) {
  if (ex.node_rank && t.platform == Platform::kExplicit) {
    const int slots = t.nnodes + t.spare_nodes;
    auto r = option_int(*ex.node_rank, 0, slots - 1,
                        "nnodes is " + std::to_string(t.nnodes) + " from " + t.origin["nnodes"] +
                            (t.spare_nodes ? " with " + std::to_string(t.spare_nodes) + " spare(s)"
                                           : std::string()));
    if (!r) return r.error();
    t.node_rank = *r;
    t.origin["node_rank"] = ex.node_rank->origin;
  }
  if (ex.master_addr) {
    if (!topo::plausible_host(ex.master_addr->value))
      return bad_option(*ex.master_addr, "a host name or address");
    t.master_addr = ex.master_addr->value;
    t.origin["master_addr"] = ex.master_addr->origin;
  }
  return ok_status();
}

Status apply_port(const Options& opts, Topology& t) {
  auto v = opts.get("master-port");
  const bool option_wins = v && v->origin != "default" && !v->origin.starts_with("PET_");
  if (v && v->origin != "default" && (option_wins || !t.origin.count("master_port"))) {
    auto port = option_int(*v, 1, 65535);
    if (!port) return port.error();
    t.master_port = *port;
    t.origin["master_port"] = v->origin;
  }
  if (!t.origin.count("master_port") && !t.job_id.empty()) {
    // Two jobs sharing a node must not share a port: derive the default from the job's id.
    t.master_port = job_master_port(t.job_id);
    t.origin["master_port"] = "default, derived from the job id (" + t.origin["job_id"] + ")";
  }
  if (!t.origin.count("master_port")) t.origin["master_port"] = "default";
  return ok_status();
}

Status apply_nproc(const Options& opts, const GpuCounter& gpus, Topology& t) {
  auto v = opts.get("nproc-per-node");
  if (!v || v->value == "auto" || v->value == "gpu") {
    const int n = gpus.count();
    t.nproc_per_node = n > 0 ? n : 1;
    t.origin["nproc_per_node"] =
        std::string(n > 0 ? "auto: " : "auto, no GPU so 1: ") + gpus.describe();
    return ok_status();
  }
  auto n = opts.get_int("nproc-per-node");  // its row's range (topology_options.cc)
  if (!n) return n.error();
  t.nproc_per_node = static_cast<int>(*n);
  t.origin["nproc_per_node"] = v->origin;
  return ok_status();
}

// Host names enter from the environment and from files: each one is checked where the topology is
// made, so a space or a control character is refused (78, naming where it came from) instead of
// timing out the rendezvous or forging a log line.
Status check_hosts(Topology& t) {
  const std::string expected =
      "a host name or address (printable, no spaces, at most 255 bytes; IPv6 as [::1] or ::1)";
  if (!topo::plausible_host(t.master_addr))
    return bad_option({t.master_addr, t.origin["master_addr"]}, expected);
  for (const auto& h : t.hosts)
    if (!topo::plausible_host(h)) return bad_option({h, t.origin["hosts"]}, expected);
  // Bracketed IPv6 ("[::1]", torchrun's spelling) is parsed here, once: every reader after this
  // (the rendezvous, the workers' MASTER_ADDR) gets the bare address.
  t.master_addr = topo::unbracketed_host(t.master_addr);
  for (auto& h : t.hosts) h = topo::unbracketed_host(h);
  return ok_status();
}

// "J" or "J.S" (a Slurm job and step), both decimal: the slot number J + S * kJobStepStride.
std::optional<uint64_t> numeric_slot(const std::string& id) {
  const char* b = id.data();
  const char* e = b + id.size();
  uint64_t job = 0, step = 0;
  auto [p, ec] = std::from_chars(b, e, job);
  if (ec != std::errc()) return std::nullopt;
  if (p == e) return job;
  if (*p != '.') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, e, step);
  if (ec2 != std::errc() || q != e) return std::nullopt;
  constexpr auto slots = static_cast<uint64_t>(kJobPortSlots);
  return job % slots + step % slots * kJobStepStride;
}

}  // namespace

int job_master_port(const std::string& job_id) {
  auto k = numeric_slot(job_id);
  if (!k) {  // not a number: FNV-1a of the text
    k = 14695981039346656037ull;
    for (unsigned char c : job_id) *k = (*k ^ c) * 1099511628211ull;
  }
  return kJobPortBase + 2 * static_cast<int>(*k % kJobPortSlots);
}

Result<Topology> resolve_topology(const Options& opts, const Environment& env, const FileSystem& fs,
                                  const GpuCounter& gpus, const HostAddress& self) {
  auto platform = chosen_platform(opts);
  if (!platform) return platform.error();
  const Explicit ex = explicit_values(opts);
  const SourceInputs in{
      opts, env, fs, self, opts.value_or("resource-config", ""), ex.master_addr.has_value()};
  const bool forced = platform->first != "auto";
  auto t = forced ? forced_source(platform->first, in) : detect_source(in, ex);
  if (!t) return t.error();
  if (auto id = opts.get("rdzv-id"); t->job_id.empty() && id && id->value != "none") {
    t->job_id = id->value;  // torchrun's rdzv_id is the job's id (run.py: run_id=args.rdzv_id)
    t->origin["job_id"] = id->origin;
  }
  t->origin["platform"] = forced ? platform->second : detected_by(*t, in, ex);
  if (t->platform != Platform::kExplicit) {
    const std::string label =
        (forced ? "--platform " : "platform ") + std::string(platform_name(t->platform));
    if (auto st = apply_explicit(ex, label, *t); !st) return st.error();
  }
  if (auto st = apply_spares(opts, ex, *t); !st) return st.error();
  if (t->spare_nodes > 0 && !ex.node_rank) {
    t->rank_by_rendezvous = true;  // a 1-node world with spares: ranks in join order too
    t->origin["node_rank"] =
        "none given: node 0 is the node that hosts the rendezvous, the others are assigned in "
        "join order";
  }
  if (auto st = apply_rank_and_master(ex, *t); !st) return st.error();
  if (auto st = apply_port(opts, *t); !st) return st.error();
  if (auto st = apply_nproc(opts, gpus, *t); !st) return st.error();
  if (auto st = check_hosts(*t); !st) return st.error();
  if (!t->origin.count("job_id")) t->origin["job_id"] = "none";
  if (auto it = opts.get("instance-type"); it && !it->value.empty()) {
    t->instance_type = it->value;
    t->origin["instance_type"] = it->origin;
  }
  return t;
}

}  // namespace tv
