#include "render/job_config.h"

#include <regex>

#include "common/json_parse.h"
#include "render/job_sections.h"
#include "render/json_fields.h"

namespace tv {
namespace {

using render_fields::check_all;
using render_fields::Fields;
using render_fields::json;

Status check_name(Fields& f, const std::string& name) {
  static const std::regex dns_label("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  if (!std::regex_match(name, dns_label))
    return f.error(
        "name",
        "expected lowercase letters, digits and '-', starting and ending with a letter or "
        "digit, at most 63 characters (a Kubernetes name), got \"" +
            name + "\"");
  return ok_status();
}

// The image reaches an sbatch line and every spec: one word of printable characters.
Status check_image(Fields& f, const std::string& image) {
  static const std::regex word("[A-Za-z0-9._/:@#+-]+");
  if (!std::regex_match(image, word))
    return f.error("image",
                   "expected an image reference (letters, digits and ._/:@#+-, no spaces), got " +
                       json(image).dump());
  return ok_status();
}

Status check_paths(Fields& f, const JobConfig& c) {
  if (c.checkpoint_dir.front() != '/')
    return f.error("checkpoint_dir", "expected an absolute path, got \"" + c.checkpoint_dir + "\"");
  if (c.trainvisor.front() != '/')
    return f.error("trainvisor",
                   "expected the binary's absolute path, got \"" + c.trainvisor + "\"");
  if (c.workdir && !job_sections::plain_path(*c.workdir))
    return f.error("workdir",
                   "expected an absolute path without ',', ':' or control characters, "
                   "got " +
                       json(*c.workdir).dump());
  if (c.checkpoint_s3_uri && c.checkpoint_s3_uri->rfind("s3://", 0) != 0)
    return f.error("checkpoint_s3_uri",
                   "expected s3://bucket/prefix, got \"" + *c.checkpoint_s3_uri + "\"");
  return ok_status();
}

// The options render writes itself: in run_args they would say the same thing twice. With
// gpus_per_node 0 (a CPU job) render writes no --nproc-per-node, so run_args may set it.
Status check_run_args(Fields& f, const std::string& field, const std::vector<std::string>& args,
                      const JobConfig& c) {
  static const std::vector<std::pair<std::string, std::string>> owned = {
      {"--platform", "--target"},
      {"--nnodes", "nodes"},
      {"--spare-nodes", "spare_nodes"},
      {"--nproc-per-node", "gpus_per_node"},
      {"--nproc_per_node", "gpus_per_node"},
      {"--max-restarts", "max_restarts"},
      {"--grace-period", "grace_period"},
      {"--checkpoint-dir", "checkpoint_dir"},
      {"--workdir", "workdir"},
      {"--instance-groups", "sagemaker.training_groups"}};
  const bool cpu_job = c.gpus_per_node == 0;
  for (const auto& a : args)
    for (const auto& [option, owner] : owned)
      if ((a == option || a.rfind(option + "=", 0) == 0) && !(cpu_job && owner == "gpus_per_node"))
        return f.error(field,
                       "\"" + a + "\" is written by render from " + owner + ": set that instead");
  return ok_status();
}

Status check_all_run_args(Fields& f, const JobConfig& c) {
  if (auto r = check_run_args(f, "run_args", c.run_args, c); !r) return r;
  for (const auto& [target, args] : c.target_run_args)
    if (auto r = check_run_args(f, target + ".run_args", args, c); !r) return r;
  return ok_status();
}

Status read_top_level(Fields& f, JobConfig& c) {
  return check_all(
      {f.string("name", c.name, true), f.string("image", c.image, true),
       f.integer("nodes", c.nodes, 1, 10000), f.integer("spare_nodes", c.spare_nodes, 0, 10000),
       f.integer("gpus_per_node", c.gpus_per_node, 0, 64),
       f.string("instance_type", c.instance_type), f.integer("efa_per_node", c.efa_per_node, 0, 64),
       f.boolean("rt_cores", c.rt_cores), f.strings("command", c.command, true),
       f.strings("run_args", c.run_args, false), f.string("trainvisor", c.trainvisor, false),
       f.integer("max_restarts", c.max_restarts, 0, 1000),
       f.integer("grace_period", c.grace_period, 1, 3600),
       f.string("checkpoint_dir", c.checkpoint_dir, false),
       f.string("checkpoint_s3_uri", c.checkpoint_s3_uri),
       f.integer("shm_mib", c.shm_mib, 64, 100000000),
       f.integer("timeout_s", c.timeout_s, 60, 2419200), f.string("workdir", c.workdir)});
}

}  // namespace

Result<JobConfig> parse_job_config(const std::string& text, const std::string& source) {
  const auto parsed = parse_json(text);
  if (!parsed)
    return Error{ErrorKind::kConfig, source + ": not valid JSON (" + parsed.error().message + ")"};
  const json& doc = *parsed;
  if (!doc.is_object())
    return Error{ErrorKind::kConfig, source + ": expected a JSON object at the top"};
  Fields f(doc, source, "");
  JobConfig c;
  if (auto r = check_all({read_top_level(f, c), check_name(f, c.name), check_image(f, c.image),
                          job_sections::read_sections(f, c), check_all_run_args(f, c),
                          f.no_unknown_fields()});
      !r)
    return r.error();
  if (c.checkpoint_dir.empty()) c.checkpoint_dir = "/opt/ml/checkpoints";
  if (auto r = check_paths(f, c); !r) return r.error();
  return c;
}

}  // namespace tv
