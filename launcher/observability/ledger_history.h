// What a container's ledger record keeps for `trainvisor report` (docs/observability.md, "Where
// the hours went") besides its time: each generation's start, end and outcome with the evidence
// its failure left (the root cause's line, the paths of error files, stacks, NCCL dumps, logs with
// the exception line each ends with), and its
// checkpoints (how many, their mean cost and interval). Pure: JSON in, JSON out. Optional members
// of a version 1 record (an older trainvisor's ledger has none and reads as none); entries that are
// not well formed are dropped one by one. Bounded, so a record stays a few KiB whatever the
// restarts: the newest kLedgerGenerations generations, kEvidencePaths paths and kExceptionLines
// exception lines (kExceptionLineCap bytes) each, every other text cut at kLedgerTextCap bytes.
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
inline constexpr std::size_t kExceptionLines = 2;      // exception lines kept per generation
inline constexpr std::size_t kExceptionLineCap = 256;  // each cut at this many bytes

// A log among a failure's evidence and the exception line at its end (a rank's stderr.log); in the
// file {"evidence": <its index in the generation's evidence>, "line": ...}, so no path is kept
// twice (the record's bound).
struct ExceptionLine {
  std::string path;
  std::string line;
  bool operator==(const ExceptionLine&) const = default;
};

struct GenerationRecord {
  int number = 0;
  double started_unix = 0;
  std::optional<double> ended_unix;   // none while it runs (or when the container was killed)
  std::string outcome = "running";    // running, failed, hung, succeeded, stopped
  std::string summary;                // a failure's root cause line, when this node saw it
  std::vector<std::string> evidence;  // paths of the files the failure left
  std::vector<ExceptionLine> exceptions = {};  // the logs among them and their exception lines
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
// Adds `path` to g's evidence (none twice, kEvidencePaths at most) with the exception line its log
// ends with ("": none; kExceptionLines at most), both cut to their bounds.
void add_evidence(GenerationRecord& g, const std::string& path, const std::string& exception);
// The generation numbered `number`, or null.
GenerationRecord* find_generation(std::vector<GenerationRecord>& gens, int number);

nlohmann::json checkpoint_record_json(const CheckpointRecord& c);
std::optional<CheckpointRecord> read_checkpoint_record(const nlohmann::json& j);

// `text` cut at `cap` bytes (never inside a UTF-8 sequence).
std::string ledger_text_cut(std::string text, std::size_t cap = kLedgerTextCap);

}  // namespace tv
