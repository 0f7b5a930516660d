#include "checkpoint/integrity.h"

#include <algorithm>

#include "checkpoint/zip_end_record.h"

namespace tv {
namespace {

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

Judgement check_settled(const std::string& path, const FileStat& st, const Judge& j) {
  const std::int64_t age = j.now_ns - st.mtime_ns;
  if (age >= j.settle_ns) return complete();
  if (j.known_stable && j.known_stable(path, st)) return complete();
  return {Verdict::kSettling, "modified " + std::to_string(age / 1'000'000) + " ms ago",
          j.settle_ns - age};
}

Judgement check_zip_file(Checkpoint& c, CheckpointFs& fs, const std::string& path, const Judge& j) {
  auto st = fs.stat(path);
  if (!st) return incomplete("cannot stat: " + st.error().message);
  if (!st->is_regular) return incomplete("not a regular file");
  auto bytes = check_zip_bytes(fs, path, *st);
  if (bytes.verdict != Verdict::kComplete) return bytes;
  account(c, *st);
  return check_settled(path, *st, j);
}

Judgement check_dcp_unit(Checkpoint& c, CheckpointFs& fs, const std::string& dir) {
  auto entries = fs.list(dir);
  if (!entries) return incomplete("cannot list " + dir + ": " + entries.error().message);
  auto meta = fs.stat(join_path(dir, ".metadata"));
  if (!meta) {
    const bool tmp = fs.stat(join_path(dir, ".metadata.tmp")).ok();
    return incomplete(dir + (tmp ? ": only .metadata.tmp (save in progress or interrupted)"
                                 : ": no .metadata (save in progress or interrupted)"));
  }
  account(c, *meta);
  for (const auto& e : *entries) {
    if (e.name == ".metadata" || e.type == EntryType::kDirectory) continue;
    auto st = fs.stat(join_path(dir, e.name));
    if (!st || !st->is_regular) continue;
    if (st->mtime_ns > meta->mtime_ns)
      return incomplete(join_path(dir, e.name) +
                        " is newer than .metadata (a save into this directory is in progress or "
                        "was interrupted)");
    account(c, *st);
  }
  return complete();
}

Judgement check_glob(Checkpoint& c, CheckpointFs& fs, const std::string& marker) {
  auto m = fs.stat(marker);
  if (!m) return incomplete("no completion marker " + marker);
  auto st = fs.stat(c.path);
  if (!st) return incomplete("cannot stat: " + st.error().message);
  if (st->mtime_ns > m->mtime_ns) return incomplete("modified after its marker " + marker);
  account(c, *st);
  c.mtime_ns = m->mtime_ns;
  return complete();
}

}  // namespace

Judgement evaluate(Candidate& candidate, CheckpointFs& fs, const Judge& judge) {
  Checkpoint& c = candidate.checkpoint;
  c.bytes = 0;
  c.mtime_ns = 0;
  c.started_ns = 0;
  if (!candidate.missing.empty()) return incomplete(candidate.missing);
  if (candidate.kind == CandidateKind::kGlob) return check_glob(c, fs, candidate.marker);
  Judgement worst = complete();
  for (const auto& f : c.files) {
    Judgement r = candidate.kind == CandidateKind::kDcp ? check_dcp_unit(c, fs, f)
                                                        : check_zip_file(c, fs, f, judge);
    if (r.verdict == Verdict::kIncomplete) return r;
    if (r.verdict == Verdict::kSettling && r.settle_left_ns > worst.settle_left_ns) worst = r;
  }
  return worst;
}

}  // namespace tv
