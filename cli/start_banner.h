// The start banner: once per node, before the first start, what the seeds' entrypoints echo by
// hand (host, platform, ranks, master, workers, GPUs, interpreter, resume), one item per log line
// "start: ITEM: VALUE (from ORIGIN)"; with --log-format json each line is one JSON record.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "launcher/topology/topology.h"

namespace tv {

struct BannerFacts {
  std::string host;
  Topology topology;
  std::string gpus;         // the GPU counter's description
  std::string command;      // the workers' argv, joined
  std::string interpreter;  // "PATH (from ORIGIN)", or "" when the command is not python
  std::string torch;        // the workers' torch version, or ""
  std::string resume;       // the checkpoint to resume, or why none
  std::string exported;     // --export SRC -> DIR, or ""
};

// The items, in order, as (item, text).
std::vector<std::pair<std::string, std::string>> banner_items(const BannerFacts& f);

// Logs them, one line each.
void log_banner(const BannerFacts& f);

}  // namespace tv
