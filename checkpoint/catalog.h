// The catalog of checkpoint layouts, as data: one entry per framework layout, saying what a
// checkpoint unit is, where its step comes from, how its runs are grouped and ordered, what makes
// it complete, and which source of the framework each rule is read from. The --format names and
// the reported "format" come from here; recognize.cc / materialize.cc implement the entries'
// rules (one function each, named in `code`), and docs/checkpoints.md is checked against this
// table by tests/unit/checkpoint/catalog_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tv {

enum class Layout : std::uint8_t {
  kSkrl,            // <module>_<t>.pt / .pickle, best_<module>.pt (Isaac Lab, plain skrl, jax)
  kRslRl,           // model_<iter>.pt
  kRlGames,         // nn/last_<name>_ep_<e>_rew_<r>.pth, ..._frame_<f>_..., ..._custom_stop_ep_<e>
  kDcp,             // a DCP directory (torchtitan checkpoint/step-<N>)
  kCosmosDcp,       // checkpoints/iter_<09d>/{model,optim,scheduler,trainer}/ (DCP)
  kCosmosPredict2,  // checkpoints/{model,optim,scheduler,trainer}/iter_<09d>.pt
  kCosmosPolicy,    // <stamp>/checkpoints/step_<N>/policy/*_rank_<r>.pth + .rank_<r>_complete
  kHf,              // checkpoint-<N>/ (Trainer) or checkpoint_<N>/ (accelerate)
  kLightning,       // *.ckpt: epoch=<E>-step=<S>.ckpt, last.ckpt, last-v<N>.ckpt, custom names
  kDeepSpeed,       // global_step<N>/ + latest
  kMegatron,        // iter_<07d>/ (torch_dist: metadata.json last; legacy: mp_rank_*/) + tracker
  kNemo,            // <name>--...-step=<N>-consumed_samples=<M>[-last][.ckpt]/, -unfinished marker
  kTorchtune,       // <output_dir>/epoch_<N>/ (sharded safetensors + index)
  kOrbax,    // <dir>/<step>/_CHECKPOINT_METADATA; <step>.orbax-checkpoint-tmp-<n> in progress
  kSb3,      // <prefix>_<N>_steps.zip (+ replay_buffer_/vecnormalize_ .pkl)
  kVerl,     // global_step_<N>/{actor,critic}/<kind>_world_size_<W>_rank_<R>.pt + tracker
  kTimm,     // last.pth.tar, checkpoint-<E>.pth.tar, recovery-<E>-<B>.pth.tar, model_best.pth.tar
  kFairseq,  // checkpoint<E>.pt, checkpoint_<E>_<U>.pt, checkpoint_last.pt, checkpoint_best.pt
  kGlob,
  kCount
};

struct CatalogEntry {
  Layout layout;
  std::string_view format;       // reported in `checkpoint latest --json` "format"
  std::string_view selected_by;  // the --format names that select it, comma-separated
  std::string_view unit;         // how a checkpoint unit is recognized
  std::string_view step;         // where its step comes from
  std::string_view runs;         // how its runs are grouped and ordered
  std::string_view complete;     // what makes it complete
  std::string_view source;       // the framework file (and function) each rule is read from
  std::string_view code;         // the functions of recognize.cc / materialize.cc implementing it
};

// Every layout but glob (glob:PATTERN is an entry written on the command line).
std::span<const CatalogEntry> catalog();
const CatalogEntry& catalog_entry(Layout layout);

const char* layout_format(Layout layout);  // the "format" reported: "skrl", "hf", ...
// Layouts a --checkpoint-format value selects, as a bit mask (0: not a known name).
std::uint32_t layouts_of_format(const std::string& format);
inline std::uint32_t bit(Layout l) { return 1u << static_cast<unsigned>(l); }

}  // namespace tv
