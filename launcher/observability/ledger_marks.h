// What the job's ledger keeps besides the containers' time (launcher/observability/ledger.h):
// the checkpoints the job found poisoned, which every later start and container steps over
// (--resume-fallback, docs/checkpoints.md), and each container's save before its stop
// (--save-signal). Pure: JSON in, JSON out. Both are optional members of a version 1 ledger (an
// older trainvisor's ledger has neither and reads as none).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tv {

inline constexpr std::size_t kLedgerMarks = 64;  // poisoned checkpoints kept (the newest)

struct PoisonMark {
  std::string path;                  // the checkpoint, as the resume lookup names it
  std::int64_t mtime_ns = 0;         // when that save became complete (a later save there is new)
  std::optional<std::int64_t> step;  // its step, when known
  std::string reason;                // the one line that marked it
  double marked_unix = 0;
  int container = 0;  // the index of the container that marked it
};

struct StopSaveRecord {
  bool completed = false;  // a complete checkpoint newer than the stop was seen in time
  double waited_seconds = 0;
  std::optional<std::int64_t> saved_step;  // the save's step (the newest before, if none)
  std::optional<std::int64_t> lost_steps;  // steps after it that the stop lost
  std::string path;
};

nlohmann::json marks_json(const std::vector<PoisonMark>& marks);
// `j` is the ledger's "poisoned" member (absent: none); entries that are not well formed are
// dropped one by one (a mark lost is a checkpoint tried again, not a wrong pick).
std::vector<PoisonMark> read_marks(const nlohmann::json& j);
// Adds `m` unless that save (path and mtime) is marked already; keeps the newest kLedgerMarks. true
// when added.
bool add_mark(std::vector<PoisonMark>& marks, PoisonMark m);

nlohmann::json stop_save_json(const StopSaveRecord& s);
std::optional<StopSaveRecord> read_stop_save(const nlohmann::json& j);
// "save before the stop: completed in 1.20 s (step 40, 2 steps lost)" / "... NOT completed ...".
std::string stop_save_line(const StopSaveRecord& s);

}  // namespace tv
