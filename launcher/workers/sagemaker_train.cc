#include "launcher/workers/sagemaker_train.h"

#include <nlohmann/json.hpp>

#include "common/bounded_read.h"
#include "common/exit_codes.h"
#include "common/json_parse.h"

namespace tv {
namespace {

using nlohmann::json;

// The SageMaker Python SDK writes every value JSON-encoded ("\"train.py\"", "3"); the training
// toolkit decodes what it can and passes str() of the result: strings as they are, True/False.
std::string decode_value(const json& raw) {
  json v = raw;
  if (raw.is_string()) {
    const json decoded = parse_json_or_discarded(raw.get<std::string>());
    if (decoded.is_discarded()) return raw.get<std::string>();
    v = decoded;
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

Result<std::string> program_name(const json& hp, const std::string& file,
                                 const std::string& code_dir) {
  const auto it = hp.find("sagemaker_program");
  if (it == hp.end())
    return Error{ErrorKind::kConfig,
                 file +
                     ": no \"sagemaker_program\" hyperparameter (the training script's name in " +
                     code_dir +
                     "); set it, or start the image with ContainerEntrypoint "
                     "/ContainerArguments (trainvisor render --target sagemaker)"};
  const std::string name = decode_value(*it);
  if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos)
    return Error{ErrorKind::kConfig, file + ": sagemaker_program=\"" + name +
                                         "\": expected a file name inside " + code_dir};
  return name;
}

std::vector<std::string> command_for(const std::string& script, const json& hp) {
  std::vector<std::string> cmd;
  if (script.ends_with(".sh")) cmd.push_back("/bin/sh");
  cmd.push_back(script);
  for (const auto& [key, value] : hp.items()) {  // nlohmann's object keeps keys sorted
    if (key.starts_with("sagemaker_")) continue;
    cmd.push_back("--" + key);
    cmd.push_back(decode_value(value));
  }
  return cmd;
}

}  // namespace

Result<std::vector<std::string>> sagemaker_train_command(const FileSystem& fs,
                                                         const SageMakerPaths& paths) {
  const std::string& file = paths.hyperparameters;
  std::string why;
  const auto text = fs.read(file, kConfigFileCap, &why);
  if (!text)
    return Error{
        ErrorKind::kNotFound,
        "train: no program named 'train' on PATH, and no SageMaker training script to run "
        "instead: " +
            file + ": " + why +
            " (SageMaker writes it for a training job; elsewhere run `trainvisor run CMD`)"};
  const json hp = parse_json_or_discarded(*text);
  if (hp.is_discarded() || !hp.is_object())
    return Error{ErrorKind::kConfig, file + ": expected a JSON object of hyperparameters"};
  auto name = program_name(hp, file, paths.code_dir);
  if (!name) return name.error();
  const std::string script = paths.code_dir + "/" + *name;
  if (!fs.exists(script))
    return Error{ErrorKind::kNotFound,
                 file + ": sagemaker_program=\"" + *name + "\", but " + script + " does not exist"};
  return command_for(script, hp);
}

}  // namespace tv
