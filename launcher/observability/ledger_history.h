// What a container's ledger record keeps for `trainvisor report` (docs/observability.md, "Where
// the hours went") besides its time: each generation's start, end and outcome with the evidence
// its failure left (the root cause's line, the paths of error files, stacks, NCCL dumps), and its
// checkpoints (how many, their mean cost and interval). Pure: JSON in, JSON out. Optional members
// of a version 1 record (an older trainvisor's ledger has none and reads as none); entries that are
// not well formed are dropped one by one. Bounded, so a record stays a few KiB whatever the
// restarts: the newest kLedgerGenerations generations, kEvidencePaths paths each, every text cut at
// kLedgerTextCap bytes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tv {

inline constexpr std::size_t kLedgerGenerations = 12;
inline constexpr std::size_t kEvidencePaths = 6;
inline constexpr std::size_t kLedgerTextCap = 512;

struct GenerationRecord {
  int number = 0;
  double started_unix = 0;
  std::optional<double> ended_unix;   // none while it runs (or when the container was killed)
  std::string outcome = "running";    // running, failed, hung, succeeded, stopped
  std::string summary;                // a failure's root cause line, when this node saw it
  std::vector<std::string> evidence;  // paths of the files the failure left
};

struct CheckpointRecord {
  long count = 0;
  std::optional<double> cost_seconds;      // mean write time (C)
  std::optional<double> interval_seconds;  // mean time between checkpoints
};

nlohmann::json generations_json(const std::vector<GenerationRecord>& g);
// `j` is a record's "generations" member (absent: none).
std::vector<GenerationRecord> read_generations(const nlohmann::json& j);
// Adds `g` (cut to the bounds above), keeping the newest kLedgerGenerations.
void add_generation(std::vector<GenerationRecord>& gens, GenerationRecord g);
// The generation numbered `number`, or null.
GenerationRecord* find_generation(std::vector<GenerationRecord>& gens, int number);

nlohmann::json checkpoint_record_json(const CheckpointRecord& c);
std::optional<CheckpointRecord> read_checkpoint_record(const nlohmann::json& j);

// `text` cut at kLedgerTextCap bytes (never inside a UTF-8 sequence).
std::string ledger_text_cut(std::string text);

}  // namespace tv
