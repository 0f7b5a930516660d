#include "checkpoint/integrity.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "checkpoint/dcp_metadata.h"
#include "checkpoint/little_endian.h"
#include "checkpoint/names.h"
#include "checkpoint/pickle.h"
#include "checkpoint/zip_end_record.h"
#include "checkpoint/zip_verify.h"
#include "common/escape.h"
#include "common/exit_codes.h"

namespace tv {
namespace {

constexpr std::uint64_t kMaxPickleBytes = 256ull << 20;
constexpr std::uint64_t kMaxJsonBytes = 64ull << 20;
constexpr std::uint64_t kMaxSafetensorsHeader = 100ull << 20;

Judgement incomplete(std::string why) { return {Verdict::kIncomplete, std::move(why), 0}; }
Judgement complete() { return {Verdict::kComplete, "", 0}; }

void account(Checkpoint& c, const FileStat& st) {
  c.bytes += st.size;
  c.mtime_ns = std::max(c.mtime_ns, st.mtime_ns);
  if (st.btime_ns > 0 && (c.started_ns == 0 || st.btime_ns < c.started_ns))
    c.started_ns = st.btime_ns;
}

Judgement check_zip_bytes(CheckpointFs& fs, const std::string& path, const FileStat& st) {
  const std::uint64_t n = std::min<std::uint64_t>(st.size, kZipTailBytes);
  auto tail = fs.read_range(path, st.size - n, n);
  if (!tail) return incomplete("cannot read: " + tail.error().message);
  if (tail->size() != n) return incomplete("file shrank while being read");
  auto rec = parse_zip_end_record(*tail, st.size);
  if (!rec) return incomplete(rec.error().message);
  auto head = fs.read_range(path, rec->central_directory_offset, 4);
  if (!head) return incomplete("cannot read: " + head.error().message);
  if (!is_central_directory_header(*head))
    return incomplete("no central directory at offset " +
                      std::to_string(rec->central_directory_offset));
  return complete();
}

// A pickle file (skrl jax, legacy torch.save): parses to STOP exactly at the end.
Judgement check_pickle_bytes(CheckpointFs& fs, const std::string& path, const FileStat& st) {
  if (st.size > kMaxPickleBytes) {
    auto last = fs.read_range(path, st.size - 1, 1);
    if (last && *last == ".") return complete();
    return incomplete("pickle does not end with STOP (cut off?)");
  }
  auto bytes = fs.read_range(path, 0, st.size);
  if (!bytes) return incomplete("cannot read: " + bytes.error().message);
  if (bytes->size() != st.size) return incomplete("file shrank while being read");
  auto parsed = parse_pickle(*bytes);
  if (!parsed) return incomplete(parsed.error().message);
  return complete();
}

// Settled by this node's own observations: an mtime the window behind this node's clock, or the
// same size and mtime at an earlier look (known_stable). An mtime in the future is no age: it
// settles after one window of looks, never when the clock catches up (issue 58).
Judgement check_settled(const std::string& path, const FileStat& st, const Judge& j) {
  const std::int64_t age = j.now_ns - st.mtime_ns;
  Judgement r = complete();
  r.ahead_ns = std::max<std::int64_t>(0, -age);
  if (j.settle_ns <= 0 || age >= j.settle_ns) return r;
  if (j.known_stable && j.known_stable(path, st)) return r;
  r.verdict = Verdict::kSettling;
  if (age < 0) {
    r.reason = "modified " + std::to_string(-age / 1'000'000) + " ms ahead of this node's clock";
    r.settle_left_ns = j.settle_ns;
  } else {
    r.reason = "modified " + std::to_string(age / 1'000'000) + " ms ago";
    r.settle_left_ns = j.settle_ns - age;
  }
  return r;
}

Judgement check_torch(Checkpoint& c, CheckpointFs& fs, const std::string& path, const Judge& j) {
  auto st = fs.stat(path);
  if (!st) return incomplete(path + ": cannot stat: " + st.error().message);
  if (!st->is_regular) return incomplete(path + ": not a regular file");
  auto magic = fs.read_range(path, 0, 2);
  if (!magic) return incomplete(path + ": cannot read: " + magic.error().message);
  Judgement bytes;
  if (magic->size() == 2 && (*magic)[0] == 'P' && (*magic)[1] == 'K')
    bytes = check_zip_bytes(fs, path, *st);
  else if (!magic->empty() && static_cast<unsigned char>((*magic)[0]) == 0x80)
    bytes = check_pickle_bytes(fs, path, *st);
  else
    bytes = incomplete("neither a zip nor a pickle (empty or not written yet?)");
  if (bytes.verdict != Verdict::kComplete) {
    if (bytes.reason.find(path) == std::string::npos && path != c.path)
      bytes.reason = path + ": " + bytes.reason;
    return bytes;
  }
  account(c, *st);
  return check_settled(path, *st, j);
}

Judgement check_dcp_unit(Checkpoint& c, CheckpointFs& fs, const std::string& dir) {
  const std::string meta_path = join_path(dir, ".metadata");
  auto meta = fs.stat(meta_path);
  if (!meta) {
    const bool tmp = fs.stat(join_path(dir, ".metadata.tmp")).ok();
    return incomplete(dir + (tmp ? ": only .metadata.tmp (save in progress or interrupted)"
                                 : ": no .metadata (save in progress or interrupted)"));
  }
  if (meta->size > kMaxDcpMetadataBytes)
    return incomplete(meta_path + ": " + std::to_string(meta->size) + " bytes, over the limit");
  auto bytes = fs.read_range(meta_path, 0, meta->size);
  if (!bytes) return incomplete(meta_path + ": cannot read: " + bytes.error().message);
  auto files = parse_dcp_metadata(*bytes);
  if (!files) return incomplete(dir + ": " + files.error().message);
  account(c, *meta);
  for (const auto& f : *files) {
    const std::string path = join_path(dir, f.relative_path);
    auto st = fs.stat(path);
    if (!st || !st->is_regular) return incomplete(path + " is missing (.metadata refers to it)");
    if (st->size < f.min_size)
      return incomplete(path + " has " + std::to_string(st->size) + " bytes; .metadata refers to " +
                        std::to_string(f.min_size) + " (truncated or still being written)");
    account(c, *st);
  }
  return complete();
}

Judgement check_safetensors(Checkpoint& c, CheckpointFs& fs, const std::string& path) {
  auto st = fs.stat(path);
  if (!st) return incomplete(path + ": cannot stat: " + st.error().message);
  auto head = fs.read_range(path, 0, 8);
  if (!head || head->size() != 8) return incomplete(path + ": no safetensors header");
  const std::uint64_t n = little_endian(*head, 0, 8);
  if (n > kMaxSafetensorsHeader || n > st->size - 8)
    return incomplete(path + ": header length " + std::to_string(n) + " does not fit the file");
  auto text = fs.read_range(path, 8, n);
  if (!text || text->size() != n) return incomplete(path + ": header cut off");
  const auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return incomplete(path + ": header is not JSON");
  std::uint64_t end = 0;
  for (const auto& [name, t] : json.items()) {
    if (name == "__metadata__" || !t.is_object()) continue;
    const auto it = t.find("data_offsets");
    if (it == t.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_unsigned())
      return incomplete(path + ": tensor " + name + " has no data_offsets");
    end = std::max(end, (*it)[1].get<std::uint64_t>());
  }
  if (end > st->size - 8 - n)
    return incomplete(path + ": tensors need " + std::to_string(8 + n + end) + " bytes, file has " +
                      std::to_string(st->size));
  account(c, *st);
  return complete();
}

// A JSON part, read with a cap (read_range opens O_NONBLOCK and refuses anything but a regular
// file) and parsed without exceptions. The error says why it is not complete.
Result<nlohmann::json> read_json(Checkpoint& c, CheckpointFs& fs, const std::string& path) {
  auto not_complete = [&](const std::string& why) { return Error{ErrorKind::kFailed, path + why}; };
  auto st = fs.stat(path);
  if (!st) return not_complete(": cannot stat: " + st.error().message);
  if (st->size > kMaxJsonBytes) return not_complete(": too large");
  auto text = fs.read_range(path, 0, st->size);
  if (!text) return not_complete(": cannot read: " + text.error().message);
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) return not_complete(": not valid JSON (cut off?)");
  account(c, *st);
  return json;
}

Judgement check_json(Checkpoint& c, CheckpointFs& fs, const std::string& path) {
  auto json = read_json(c, fs, path);
  return json ? complete() : incomplete(json.error().message);
}

// Sharded HF weights: the index's weight_map names, for every tensor, a shard file in the same
// directory (transformers `save_pretrained`, SAFE_WEIGHTS_INDEX_NAME / WEIGHTS_INDEX_NAME). The
// index is written after the shards; each shard named must be there. The shards present are parts
// of their own, so their headers are checked there.
Judgement check_shard_index(Checkpoint& c, CheckpointFs& fs, const std::string& path) {
  const auto json = read_json(c, fs, path);
  if (!json) return incomplete(json.error().message);
  const auto map = json->is_object() ? json->find("weight_map") : json->end();
  if (map == json->end() || !map->is_object() || map->empty())
    return incomplete(path + ": no weight_map naming the shards");
  std::set<std::string, std::less<>> shards;
  for (const auto& [tensor, shard] : map->items()) {
    const std::string* name = shard.get_ptr<const std::string*>();
    if (name == nullptr || name->empty() || *name == "." || *name == ".." ||
        name->find('/') != std::string::npos || name->find('\0') != std::string::npos)
      return incomplete(path + ": weight_map entry " + escape_control(tensor) +
                        " is not a file name in its directory");
    shards.insert(*name);
  }
  const std::string dir = parent_of(path);
  for (const auto& shard : shards) {
    const std::string shard_path = join_path(dir, shard);
    auto st = fs.stat(shard_path);
    if (!st || !st->is_regular)
      return incomplete(escape_control(shard_path) + " is missing (" + base_of(path) +
                        " names it; save interrupted?)");
  }
  return complete();
}

Judgement check_part(Checkpoint& c, CheckpointFs& fs, const Part& p, const Judge& j) {
  switch (p.kind) {
    case PartKind::kTorch:
      return check_torch(c, fs, p.path, j);
    case PartKind::kDcp:
      return check_dcp_unit(c, fs, p.path);
    case PartKind::kSafetensors:
      return check_safetensors(c, fs, p.path);
    case PartKind::kJson:
      return check_json(c, fs, p.path);
    case PartKind::kShardIndex:
      return check_shard_index(c, fs, p.path);
    case PartKind::kExists:
      break;
  }
  auto st = fs.stat(p.path);
  if (!st) return incomplete("no " + p.path);
  account(c, *st);
  return complete();
}

Judgement check_pointer(const Candidate& k, CheckpointFs& fs) {
  const std::int64_t named = read_pointer_step(fs, k.pointer);
  if (k.checkpoint.step < 0 || named >= k.checkpoint.step) return complete();
  return incomplete(k.pointer + " names step " + std::to_string(named) +
                    " (it is written after every part of a save): this save did not finish");
}

// glob's check=KIND: the match's content (no settle window: the rule decides when it is stable).
Judgement glob_parts(Candidate& k, CheckpointFs& fs) {
  const std::uint64_t bytes = k.checkpoint.bytes;
  const std::int64_t mtime = k.checkpoint.mtime_ns;
  for (const auto& p : k.parts) {
    Judgement r = check_part(k.checkpoint, fs, p, Judge{fs.now_ns(), 0, {}});
    if (r.verdict != Verdict::kComplete) return r;
  }
  k.checkpoint.bytes = bytes;
  k.checkpoint.mtime_ns = std::max(mtime, k.checkpoint.mtime_ns);
  return complete();
}

// settle=SECONDS on a match dated ahead of this node's clock (issue 58): no age to compare, so it
// is settled when seen unchanged at the lookup's next look (one window of its Judge later), or
// at once where the lookup has no window; never when the clock catches up.
Judgement glob_ahead(Candidate& k, CheckpointFs& fs, const Judge& j, const FileStat& st,
                     std::int64_t newest) {
  FileStat seen = st;
  seen.mtime_ns = newest;
  const bool settled =
      j.settle_ns <= 0 || (j.known_stable && j.known_stable(k.checkpoint.path, seen));
  Judgement r = settled ? glob_parts(k, fs)
                        : Judgement{Verdict::kSettling,
                                    "changed " + std::to_string((newest - j.now_ns) / 1'000'000) +
                                        " ms ahead of this node's clock",
                                    j.settle_ns};
  r.ahead_ns = newest - j.now_ns;
  return r;
}

Judgement check_glob(Candidate& k, CheckpointFs& fs, const Judge& j) {
  Checkpoint& c = k.checkpoint;
  auto st = fs.stat(c.path);
  if (!st) return incomplete("cannot stat: " + st.error().message);
  account(c, *st);
  const std::string rule = k.glob_rule.substr(0, k.glob_rule.find('='));
  if (rule == "pointer") {
    if (!fs.stat(k.pointer)) return incomplete("no pointer file " + k.pointer);
    if (auto p = check_pointer(k, fs); p.verdict != Verdict::kComplete) return p;
    return glob_parts(k, fs);
  }
  if (rule == "settle") {
    const double secs = std::strtod(k.glob_rule.c_str() + 7, nullptr);
    std::int64_t newest = st->mtime_ns;
    if (st->is_directory)
      if (auto entries = fs.list(c.path))
        for (const auto& e : *entries)
          if (auto f = fs.stat(join_path(c.path, e.name))) newest = std::max(newest, f->mtime_ns);
    c.mtime_ns = newest;
    const auto window = static_cast<std::int64_t>(secs * 1e9);
    if (j.now_ns - newest >= window) return glob_parts(k, fs);
    if (newest > j.now_ns) return glob_ahead(k, fs, j, *st, newest);
    return incomplete("changed " + std::to_string((j.now_ns - newest) / 1'000'000) +
                      " ms ago (settle=" + std::to_string(secs) + " s)");
  }
  if (rule == "none") return glob_parts(k, fs);
  auto m = fs.stat(k.marker);
  if (!m) return incomplete("no completion marker " + k.marker);
  if (rule == "done" && st->mtime_ns > m->mtime_ns)
    return incomplete("modified after its marker " + k.marker);
  c.mtime_ns = m->mtime_ns;
  return glob_parts(k, fs);
}

}  // namespace

Judgement evaluate(Candidate& candidate, CheckpointFs& fs, const Judge& judge) {
  Checkpoint& c = candidate.checkpoint;
  c.bytes = 0;
  c.mtime_ns = 0;
  c.started_ns = 0;
  if (!candidate.missing.empty()) return incomplete(candidate.missing);
  if (candidate.layout == Layout::kGlob) return check_glob(candidate, fs, judge);
  Judgement worst = complete();
  std::int64_t ahead = 0;
  for (const auto& p : candidate.parts) {
    Judgement r = check_part(c, fs, p, judge);
    if (r.verdict == Verdict::kIncomplete) return r;
    ahead = std::max(ahead, r.ahead_ns);
    if (r.verdict == Verdict::kSettling && r.settle_left_ns > worst.settle_left_ns) worst = r;
  }
  if (!candidate.pointer.empty())
    if (auto p = check_pointer(candidate, fs); p.verdict != Verdict::kComplete) return p;
  worst.ahead_ns = ahead;
  return worst;
}

Judgement verify_for_resume(const Candidate& candidate, CheckpointFs& fs, bool hash_data) {
  for (const auto& p : candidate.parts) {
    if (p.kind != PartKind::kTorch) continue;
    auto magic = fs.read_range(p.path, 0, 2);
    if (!magic || *magic != "PK") continue;  // pickles were parsed whole already
    auto st = fs.stat(p.path);
    if (!st) return incomplete(p.path + ": cannot stat: " + st.error().message);
    auto v = verify_zip(fs, p.path, st->size, hash_data);
    if (!v) return incomplete(p.path + ": " + v.error().message);
  }
  return complete();
}

}  // namespace tv
