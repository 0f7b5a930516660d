// The settings of the kubeflow, sagemaker and slurm sections beyond the basic ones (the seeds'
// labels, service account, hugepages, pull policy, topology and node-health label; SageMaker's
// input channels and instance groups; each section's run_args), read and checked by the rules of
// render/platform_limits.h. Internal to render/ (job_sections.cc calls them).
#pragma once

#include "render/job_config.h"
#include "render/json_fields.h"

namespace tv::job_sections {

Status read_kubeflow_extras(render_fields::Fields& k, KubeflowConfig& kc);
Status read_sagemaker_extras(render_fields::Fields& s, SageMakerConfig& sm);
// `<target>.run_args`: the section's own `trainvisor run` options.
Status read_target_run_args(render_fields::Fields& s, const std::string& target, JobConfig& c);

}  // namespace tv::job_sections
