# trainvisor's reading of PyTorch's NCCL flight-recorder dumps (docs/supervision.md, "Evidence on
# hang"). Compiled into the binary (CMakeLists.txt) and run in a child Python after the run, as
# `PY -I -c <this> DUMP...`: PID 1 never unpickles. A dump (ProcessGroupNCCL's DebugInfoWriter,
# FlightRecorder.cpp: "version", "pg_config", "entries", ...) is a pickle of plain values; globals
# are refused, so a dump cannot run code here. Each entry has "record_id", "process_group" (name,
# description), "collective_seq_id", "profiling_name" ("nccl:all_reduce"), "state" (scheduled,
# started, completed) and "is_p2p". Prints, per dump, the collective its rank last entered, then the
# ranks behind the furthest one in the same process group: those that never entered it. With
# `--evidence` first, one JSON object a line instead, {"rank", "seq", "op", "group", "state"} for
# each dump that recorded a collective (collective_evidence.h reads them; the job's culprit).
import json
import pickle
import sys


class _Plain(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))


def _last(path):
    with open(path, "rb") as f:
        dump = _Plain(f).load()
    entries = [e for e in dump.get("entries", []) if isinstance(e, dict) and not e.get("is_p2p")]
    if not entries:
        return None
    return max(entries, key=lambda e: e.get("record_id", -1))


evidence = sys.argv[1:2] == ["--evidence"]
rows = []
for path in sys.argv[2 if evidence else 1:]:
    rank = path.rsplit("_", 1)[-1]
    try:
        rows.append((rank, _last(path), ""))
    except Exception as e:  # noqa: BLE001 - one line per unreadable dump
        rows.append((rank, None, "unreadable dump (%s: %s)" % (type(e).__name__, e)))
if evidence:
    for rank, e, _ in rows:
        if e is not None and rank.isdigit() and isinstance(e.get("collective_seq_id"), int):
            print(json.dumps({"rank": int(rank), "seq": e["collective_seq_id"],
                              "op": str(e.get("profiling_name", "")),
                              "group": str(e.get("process_group", ("?",))[0]),
                              "state": str(e.get("state", ""))}))
    sys.exit(0)
furthest = {}
for rank, e, _ in rows:
    if e is not None:
        pg = str(e.get("process_group", ("?",))[0])
        furthest[pg] = max(furthest.get(pg, -1), e.get("collective_seq_id", -1))
for rank, e, why in rows:
    if e is None:
        print("  rank %s: %s" % (rank, why or "no collective recorded"))
    else:
        print("  rank %s: last entered collective #%s %s (%s) in process group %s" %
              (rank, e.get("collective_seq_id"), e.get("profiling_name"), e.get("state"),
               e.get("process_group", ("?",))[0]))
for pg, seq in sorted(furthest.items()):
    behind = [r for r, e, _ in rows
              if e is not None and str(e.get("process_group", ("?",))[0]) == pg
              and e.get("collective_seq_id", -1) < seq]
    if behind:
        print("  missing from collective #%d of process group %s: rank %s" %
              (seq, pg, ", ".join(behind)))
