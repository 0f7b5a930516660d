// libFuzzer: the whole checkpoint lookup on a tree the input describes. The bytes decode into a
// tree on the in-memory FakeCheckpointFs, built from the catalog's own name vocabulary (every
// layout's file and directory names, placeholders filled in, at every depth including the root,
// as files, empty files, directories and symlinks: tests/unit/checkpoint/random_tree.h, which the
// unit suite's property test shares); then the lookups `run`, `checkpoint latest` and
// `checkpoint watch` make run on it (auto and a format the input picks). Nothing may crash or hang,
// and an answer must lie in the tree (its path and its run directory).
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/unit/checkpoint/random_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = (spdlog::set_level(spdlog::level::off), true);
  (void)quiet;
  tv::testing::FakeCheckpointFs fs;
  const std::string root = "/ckpt";
  tv::testing::RandomTree tree(fs, root);
  tv::testing::ByteSource in({data, size});
  // auto and one format the input picks (all of them per input is 10x slower; the unit suite's
  // property test runs every format on each of its trees).
  static const std::vector<std::string> formats = tv::testing::every_format();
  const std::vector<std::string> these = {"auto", formats[in.below(formats.size())]};
  tree.build(in, 128);
  if (const std::string bad = tv::testing::run_lookups(fs, root, these); !bad.empty()) {
    std::fprintf(stderr, "fuzz_checkpoint_tree: %s\n", bad.c_str());
    std::abort();
  }
  return 0;
}
