#include "checkpoint/catalog.h"

#include <array>

namespace tv {
namespace {

constexpr std::string_view kTimeOrder =
    "by the time stamp in the run directory's name, else the mtime of its newest checkpoint, "
    "else the global_step of that checkpoint's trainer_state.json; runs that none tells apart: "
    "ambiguous";

constexpr std::array<CatalogEntry, static_cast<std::size_t>(Layout::kGlob)> kCatalog = {{
    {Layout::kSkrl, "skrl", "skrl",
     "agent_<t>.pt, <module>_<t>.pt, <uid>_<module>_<t>.pt, best_<module>.pt, agent_<t>.pickle; "
     "beside agent_* files only agent_* and best_agent.* are claimed; module names are "
     "identifiers",
     "the digits after the last '_'", kTimeOrder,
     "every module file of the step is complete and the step has every module other saves of the "
     "run have",
     "skrl skrl/agents/torch/base.py write_checkpoint", "Recognizer::torch_rl, Materializer::skrl"},
    {Layout::kRslRl, "rsl_rl", "rsl_rl,skrl", "model_<iter>.pt", "the digits after 'model_'",
     kTimeOrder, "the zip is complete", "rsl_rl rsl_rl/runners/on_policy_runner.py save",
     "Recognizer::torch_rl, Materializer::single"},
    {Layout::kRlGames, "rl_games", "rl_games",
     "nn/last_<name>_ep_<e>_rew_<r>.pth, the final saves nn/last_<name>_ep_<e>_rew__<r>_.pth, "
     "nn/last_<name>_frame_<f>_rew__<r>_.pth, nn/last_<name>_custom_stop_ep_<e>.pth and the "
     "older nn/last_<name>ep<e>rew[<r>].pth, best nn/<name>.pth",
     "the digits before the last 'rew' after 'ep', or after '_custom_stop_ep_'; a _frame_ save "
     "(written at the last epoch, after that epoch's save): the highest epoch beside it",
     kTimeOrder, "the zip is complete", "rl_games rl_games/common/a2c_common.py train (262cf20)",
     "Recognizer::rl_games, Materializer::single"},
    {Layout::kDcp, "dcp", "dcp,torchtitan", "a directory holding .metadata or *.distcp",
     "the number in the directory's name", kTimeOrder,
     "DCP .metadata names only shards that are there and long enough; .pt and .json files beside "
     "it are complete",
     "torchtitan torchtitan/components/checkpoint.py; torch "
     "torch/distributed/checkpoint/filesystem.py",
     "Recognizer::dcp_unit, Materializer::dcp"},
    {Layout::kCosmosDcp, "cosmos-rl", "cosmos-rl", "checkpoints/iter_<09d>/{model,optim,...}/",
     "the iter_ digits", kTimeOrder, "all four parts complete; latest_checkpoint.txt not behind",
     "cosmos-rl cosmos_rl/utils/wfm/checkpointer.py _write_latest_checkpoint_file",
     "Recognizer::dcp_unit, Materializer::cosmos_dcp"},
    {Layout::kCosmosPredict2, "cosmos-predict2", "cosmos-predict2",
     "checkpoints/{model,optim,scheduler,trainer}/iter_<09d>.pt", "the iter_ digits", kTimeOrder,
     "all four part files complete", "cosmos-predict2 cosmos_predict2/checkpointer.py save",
     "Recognizer::cosmos_predict2, Materializer::cosmos_predict2"},
    {Layout::kCosmosPolicy, "cosmos-rl", "cosmos-rl", "checkpoints/step_<N>/policy/",
     "the step_ digits", kTimeOrder,
     "cosmos_config, every rank's files and .rank_<r>_complete marker",
     "cosmos-rl cosmos_rl/utils/checkpoint.py save_checkpoint",
     "Recognizer::directory, Materializer::cosmos_policy"},
    {Layout::kHf, "hf", "hf,accelerate", "checkpoint-<N>/ or checkpoint_<N>/ with HF content",
     "the number in the name", kTimeOrder,
     "trainer_state.json (Trainer) or random_states_0.pkl (accelerate) and every "
     "custom_checkpoint_<i>.pkl other saves of the run have; every file inside complete",
     "transformers src/transformers/trainer.py _save_checkpoint; accelerate "
     "src/accelerate/accelerator.py save_state, src/accelerate/checkpointing.py save_custom_state",
     "Recognizer::directory, Materializer::hf"},
    {Layout::kLightning, "lightning", "lightning,nemo",
     "*.ckpt files (epoch=<E>-step=<S>, last, last-v<N>, any ModelCheckpoint filename)",
     "'step=' in the name, else 'epoch=', else global_step in data.pkl, else the last number",
     kTimeOrder, "the zip is complete; no <name>-unfinished marker beside it (NeMo)",
     "lightning src/lightning/pytorch/callbacks/model_checkpoint.py format_checkpoint_name",
     "Recognizer::lightning, Materializer::single"},
    {Layout::kDeepSpeed, "deepspeed", "deepspeed", "global_step<N>/", "the global_step digits",
     kTimeOrder, "every .pt complete; `latest` names this tag or a later one",
     "DeepSpeed deepspeed/runtime/engine.py save_checkpoint",
     "Recognizer::directory, Materializer::deepspeed"},
    {Layout::kMegatron, "megatron", "megatron",
     "iter_<07d>/ holding common.pt or metadata.json (torch_dist; DCP files alone are plain "
     "DCP), or mp_rank_*/ directories (legacy)",
     "the iter_ digits", kTimeOrder,
     "torch_dist: DCP complete, common.pt complete, metadata.json (written last) parses; legacy: "
     "every mp_rank_* directory (as many as other saves have) holds complete .pt files; "
     "latest_checkpointed_iteration.txt, when it holds a number, is not behind",
     "Megatron-LM megatron/training/checkpointing.py save_checkpoint, get_checkpoint_name, "
     "get_checkpoint_tracker_filename; megatron/core/dist_checkpointing/serialization.py save, "
     "core.py save_config",
     "Recognizer::megatron, Materializer::megatron"},
    {Layout::kNemo, "nemo", "nemo",
     "a directory whose name holds step=<N> and that is a DCP directory (NeMo 1.x .ckpt "
     "directory) or holds weights/ (NeMo 2.0)",
     "the number after 'step=' (not consumed_samples=)", kTimeOrder,
     "no <name>-unfinished marker beside it; the DCP directory, common.pt and metadata.json "
     "complete",
     "NeMo nemo/lightning/pytorch/callbacks/model_checkpoint.py "
     "format_checkpoint_unfinished_marker_path; nemo/utils/callbacks/nemo_model_checkpoint.py",
     "Recognizer::nemo, Materializer::nemo"},
    {Layout::kTorchtune, "torchtune", "torchtune",
     "<output_dir>/epoch_<N>/ holding weights (.safetensors, .bin, .pt)", "the epoch_ digits",
     kTimeOrder,
     "every safetensors header and size fits, the index names only shards that are there, "
     "every torch file complete",
     "torchtune torchtune/training/checkpointing/_checkpointer.py "
     "FullModelHFCheckpointer.save_checkpoint; _utils.py get_largest_iter_folder",
     "Recognizer::directory, Materializer::torchtune"},
    {Layout::kOrbax, "orbax", "orbax",
     "a directory holding _CHECKPOINT_METADATA, named <step> or <prefix>_<step>; "
     "<step>.orbax-checkpoint-tmp-<n> is a save in progress",
     "the digits of the name", kTimeOrder,
     "not a tmp name and no tmp item inside; _CHECKPOINT_METADATA and every item's _METADATA "
     "parse",
     "orbax-checkpoint orbax/checkpoint/_src/path/atomicity.py TMP_DIR_SUFFIX, "
     "AtomicRenameTemporaryPath.finalize",
     "Recognizer::orbax, Materializer::orbax"},
    {Layout::kSb3, "sb3", "sb3,stable-baselines3",
     "<prefix>_<N>_steps.zip (+ <prefix>_replay_buffer_<N>_steps.pkl, "
     "<prefix>_vecnormalize_<N>_steps.pkl)",
     "the digits before _steps", kTimeOrder,
     "the zip is complete; the step's replay buffer and VecNormalize pickles are there and "
     "parse when other saves of the directory have them",
     "stable-baselines3 stable_baselines3/common/callbacks.py CheckpointCallback._checkpoint_path",
     "Recognizer::sb3, Materializer::sb3"},
    {Layout::kVerl, "verl", "verl",
     "global_step_<N>/ holding actor/ (critic/): <kind>_world_size_<W>_rank_<R>.pt per rank, "
     "one checkpoint (a rank's shard is never a checkpoint by itself)",
     "the global_step_ digits", kTimeOrder,
     "every kind's shard for every rank 0..W-1 is complete; latest_checkpointed_iteration.txt, "
     "when there, is not behind",
     "verl verl/utils/checkpoint/fsdp_checkpoint_manager.py save_checkpoint; "
     "verl/trainer/ppo/ray_trainer.py _save_checkpoint",
     "Recognizer::directory, Materializer::verl"},
    {Layout::kTimm, "timm", "timm",
     "last.pth.tar, checkpoint-<E>.pth.tar, recovery-<E>-<B>.pth.tar, best model_best.pth.tar "
     "(tmp.pth.tar is a save in progress)",
     "the epoch of the name; last.pth.tar: the epoch in its content, after that epoch's other "
     "saves",
     kTimeOrder, "the zip is complete",
     "pytorch-image-models timm/utils/checkpoint_saver.py CheckpointSaver.save_checkpoint, "
     "save_recovery",
     "Recognizer::timm, Materializer::single"},
    {Layout::kFairseq, "fairseq", "fairseq",
     "checkpoint<E>.pt (end of epoch), checkpoint_<E>_<U>.pt (every --save-interval-updates), "
     "checkpoint_last.pt, best checkpoint_best.pt and checkpoint.best_<metric>_<v>.pt",
     "the updates U (an end-of-epoch save: none); ordered by epoch, then updates, the end of an "
     "epoch after its updates; checkpoint_last.pt: the newest save beside it",
     kTimeOrder, "the zip is complete", "fairseq fairseq/checkpoint_utils.py save_checkpoint",
     "Recognizer::fairseq, "
     "Materializer::single"},
}};

bool listed(std::string_view names, std::string_view name) {
  while (!names.empty()) {
    const auto comma = names.find(',');
    if (names.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    names.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::span<const CatalogEntry> catalog() { return kCatalog; }

const CatalogEntry& catalog_entry(Layout layout) {
  return kCatalog[static_cast<std::size_t>(layout)];
}

const char* layout_format(Layout layout) {
  if (layout >= Layout::kGlob) return "glob";
  return catalog_entry(layout).format.data();  // string literals: NUL-terminated
}

std::uint32_t layouts_of_format(const std::string& f) {
  if (f == "auto") return bit(Layout::kGlob) - 1;
  if (f.starts_with("glob:")) return bit(Layout::kGlob);
  std::uint32_t mask = 0;
  for (const auto& e : kCatalog)
    if (listed(e.selected_by, f)) mask |= bit(e.layout);
  return mask;
}

}  // namespace tv
