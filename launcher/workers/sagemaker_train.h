// SageMaker's `train` convention: SageMaker Training Jobs start an image as `docker run IMAGE
// train`. When the command is `train` and no program of that name exists, the training script is
// the `sagemaker_program` hyperparameter (SageMaker's training toolkit's convention), found in
// /opt/ml/code and given every other hyperparameter as `--name value` (names sorted, the
// toolkit's JSON-encoded values decoded). `trainvisor render --target sagemaker` sets
// ContainerEntrypoint/ContainerArguments instead, so nothing depends on this.
#pragma once

#include <string>
#include <vector>

#include "common/file_system.h"
#include "common/result.h"

namespace tv {

struct SageMakerPaths {
  std::string hyperparameters = "/opt/ml/input/config/hyperparameters.json";
  std::string code_dir = "/opt/ml/code";
};

// The command that replaces `train`: [script.py, --name, value, ...] (run's .py rule then puts
// python3 -u in front), [/bin/sh, script.sh, ...] for a .sh, or the file itself otherwise.
// Errors: 127 when the hyperparameters file or the script does not exist; 78 when the file is
// not a JSON object, has no sagemaker_program, or names a path outside the code directory.
Result<std::vector<std::string>> sagemaker_train_command(const FileSystem& fs,
                                                         const SageMakerPaths& paths = {});

}  // namespace tv
