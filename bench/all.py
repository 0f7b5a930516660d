#!/usr/bin/env python3
"""Driver of bench/all.sh: every benchmark of bench/ with trainvisor's defaults, side by side with
its peer where it has one, each one's whole output kept in OUT/<name>.txt, and one table of the
headline figures (docs/benchmarks.md, "Headline figures") printed and written to OUT/table.md.
With --docs FILE the table between FILE's `<!-- bench/all.sh: begin -->` and `end` markers is
replaced by this run's.

Usage: all.py TRAINVISOR OUT [--docs FILE] [SECTION...]   (sections: see SECTIONS; default all
that this machine can run: the GPU ones need nvidia-smi, the torch ones a python3 with torch)
Env: PYTHON (python3 with torch, default python3), TV_NODES (rendezvous sizes, default "64", and
"64 1024" with 16 CPUs or more), QUICK=1 (fewer repeats).
"""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = os.environ.get("PYTHON", "python3")
QUICK = os.environ.get("QUICK") == "1"
CPUS = os.cpu_count() or 1
NODES = os.environ.get("TV_NODES", "64 1024" if CPUS >= 16 else "64").split()
BEGIN, END = "<!-- bench/all.sh: begin -->", "<!-- bench/all.sh: end -->"


def has_gpu():
    return shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True).returncode == 0


def has_torch():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


def num(pattern, text, group=1):
    m = re.search(pattern, text, re.M)
    return m.group(group).replace(",", "") if m else "?"


def cols(label, text):
    """The numbers of the row that starts with `label` (launch.sh, restart_latency.sh ...)."""
    for line in text.splitlines():
        if line.strip().startswith(label):
            return re.findall(r"[0-9][0-9,]*\.?[0-9]*", line[len(label) + line.find(label):])
    return ["?", "?"]


def launch(tv, text):
    wall, rss = cols("wall time (ms)", text), cols("max RSS, largest process (MiB)", text)
    return [("wall time", wall[0] + " ms", wall[1] + " ms"),
            ("max RSS, largest process", rss[0] + " MiB", rss[1] + " MiB")]


def restart(tv, text):
    last = cols("death -> last replacement running (ms)", text)
    return [("death -> last replacement running", last[0] + " ms", last[1] + " ms")]


def sigterm(tv, text):
    got, ended = cols("SIGTERM sent -> all 8 workers received (ms)", text), cols(
        "SIGTERM sent -> launcher exited (ms)", text)
    return [("SIGTERM -> all 8 workers received", got[0] + " ms", got[1] + " ms"),
            ("SIGTERM -> launcher exited", ended[0] + " ms", ended[1] + " ms")]


def idle(tv, text):
    row = cols("% of one core", text)
    return [("idle CPU, 8 sleeping workers", row[0] + " % of a core",
             (row[1] if len(row) > 1 else "?") + " % (interval 0.1 s)")]


def output(tv, text):
    return [("4 x 8.25 MB of output, through / straight to files",
             num(r"through trainvisor: ([0-9.]+) ms", text) + " ms",
             num(r"straight to files: +([0-9.]+) ms", text) + " ms (ratio "
             + num(r"ratio: ([0-9.]+)x", text) + "x)")]


def lookup(tv, text):
    tv_row = [l for l in text.splitlines() if l.startswith("trainvisor checkpoint latest")]
    find_row = [l for l in text.splitlines() if l.startswith("find ")]
    pick = lambda rows: rows[0].split()[-3] + " s" if rows else "?"
    return [("checkpoint latest, 100,000 files in one directory", pick(tv_row), pick(find_row))]


def dirs(tv, text):
    rows = [l for l in text.splitlines() if re.match(r"(trainvisor|find) ", l)]
    pick = lambda k: rows[k].split()[-2] + " s" if len(rows) > k else "?"
    return [("checkpoint latest, 10,000 iter_* directories", pick(0), pick(1))]


def watcher(tv, text):
    return [("checkpoint watch steady state, worst layout of the catalog at 10,000",
             num(r"worst layout: ([0-9.]+) %", text) + " % of a core", "")]


def rendezvous(flags):
    def parse(tv, text):
        rows = []
        for n, form, rest in re.findall(
                r"^trainvisor, ([0-9]+) nodes: formation ([0-9,.]+) ms, restart ([0-9,.]+) ms",
                text, re.M):
            peer = re.search(r"^torchrun, %s nodes: formation ([0-9,.]+) ms, restart ([0-9,.]+) ms"
                             % n, text, re.M)
            label = "%s nodes on loopback, form / restart%s" % (format(int(n), ","),
                                                                  (" (" + flags + ")") if flags else "")
            rows.append((label, "%s / %s ms" % (form, rest),
                         "%s / %s ms" % peer.groups() if peer else ""))
        return rows
    return parse


def standby(tv, text):
    row = [l for l in text.splitlines() if l.startswith("trainvisor standby on")]
    off = [l for l in text.splitlines() if l.startswith("torchrun")]
    ready = lambda r: re.findall(r"([0-9.]+ \([0-9.]+-[0-9.]+\)|[0-9.]+)", r[0])[2] if r else "?"
    return [("kill -> replacement ready (standby on), s", ready(row), ready(off))]


def sections(tv, out):
    reps = "3" if QUICK else None
    stamp = next((str(p) for p in (Path(tv).parent / "helpers" / "tv_stamp",
                                    HERE.parent / "build" / "helpers" / "tv_stamp") if p.exists()),
                 "")
    env_tv = {"TRAINVISOR": tv, "PYTHON": shutil.which(PY) or PY, "TV_STAMP": stamp}
    s = [
        ("launch", "launch 4 no-op workers and reap", [str(HERE / "launch.sh"), reps or "10"],
         env_tv, launch, True),
        ("launch_gpu_health_off", "launch, --gpu-health off", [str(HERE / "launch.sh"), reps or "10"],
         {**env_tv, "TV_FLAGS": "--gpu-health off"}, launch, True),
        ("restart", "restart latency, 4 workers", [str(HERE / "restart_latency.sh"), reps or "7"],
         env_tv, restart, bool(stamp)),
        ("sigterm", "SIGTERM fan-out, 8 workers", [str(HERE / "sigterm_latency.sh"), reps or "7"],
         env_tv, sigterm, bool(stamp)),
        ("idle", "idle CPU", [str(HERE / "idle_cpu.sh"), "10" if QUICK else "30"],
         {"BUILD_DIR": str(Path(tv).parent), "PYTHON": shutil.which(PY) or PY}, idle, True),
        ("output", "output cost", [str(HERE / "output_cost.sh"), tv, "8.25", reps or "5"], {},
         output, True),
        ("lookup", "checkpoint latest", [str(HERE / "checkpoint_latest.sh"), tv], {}, lookup, True),
        ("dirs", "checkpoint latest, iter_*", [str(HERE / "checkpoint_dirs.sh"), tv], {}, dirs, True),
        ("watcher", "checkpoint watch, every layout",
         [PY, str(HERE / "watcher_catalog.py"), tv, "10000", "10" if QUICK else "20"], {},
         watcher, has_torch()),
        ("rendezvous", "rendezvous at scale", [str(HERE / "rendezvous_scale.sh"), *NODES],
         {"TV_BINS": "trainvisor=" + tv, "TV_CHECKS": "0"}, rendezvous(""), True),
        ("rendezvous_gpu_health_off", "rendezvous at scale, --gpu-health off",
         [str(HERE / "rendezvous_scale.sh"), *NODES],
         {"TV_BINS": "trainvisor=" + tv, "TV_CHECKS": "0", "TV_TORCHRUN": "none",
          "TV_FLAGS": "--gpu-health off"}, rendezvous("--gpu-health off"), has_gpu()),
        ("rendezvous_no_nvml", "rendezvous at scale, no NVML child at all",
         [str(HERE / "rendezvous_scale.sh"), NODES[-1]],
         {"TV_BINS": "trainvisor=" + tv, "TV_CHECKS": "0", "TV_TORCHRUN": "none",
          "TV_FLAGS": "--gpu-health off", "NVIDIA_VISIBLE_DEVICES": "void"},
         rendezvous("--gpu-health off, NVIDIA_VISIBLE_DEVICES=void"), has_gpu()),
        ("standby", "warm standby restart", [str(HERE / "standby_restart.sh"), tv, PY,
                                             str(out / "standby"), reps or "5", "1"], {},
         standby, has_torch()),
    ]
    return s


def main(argv):
    docs = None
    if "--docs" in argv:
        i = argv.index("--docs")
        docs = Path(argv[i + 1])
        del argv[i:i + 2]
    tv, out, wanted = str(Path(argv[0]).resolve()), Path(argv[1]), argv[2:]
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    host = "%d CPUs%s" % (CPUS, ", GPU: " + subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True, text=True).stdout.splitlines()[0]
        if has_gpu() else ", no GPU")
    for name, what, cmd, env, parse, can in sections(tv, out):
        if (wanted and name not in wanted) or not can:
            continue
        print("== %s: %s" % (name, " ".join(cmd)), flush=True)
        t0 = time.monotonic()
        p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
        (out / (name + ".txt")).write_text(p.stdout + "\n--- stderr\n" + p.stderr)
        figures = parse(tv, p.stdout) if p.returncode == 0 else [(what, "failed (exit %d)"
                                                                   % p.returncode, "")]
        print(p.stdout[-3000:], flush=True)
        print("   (%.0f s)" % (time.monotonic() - t0), flush=True)
        envs = " ".join("%s=%s" % (k, '"%s"' % v if " " in v else v) for k, v in env.items()
                        if k in ("TV_FLAGS", "NVIDIA_VISIBLE_DEVICES"))
        command = ((envs + " ") if envs else "") + "bench/" + Path(cmd[0] if cmd[0] != PY
                                                                    else cmd[1]).name
        rows += [(f, a, b, command) for f, a, b in figures]
    table = ["%s, load %.1f, %s" % (host, os.getloadavg()[0], time.strftime("%Y-%m-%d")), "",
             "| figure | trainvisor (defaults) | peer (torchrun, find) | command |",
             "| --- | ---: | ---: | --- |"] + ["| %s | %s | %s | `%s` |" % r for r in rows]
    text = "\n".join(table) + "\n"
    (out / "table.md").write_text(text)
    print(text)
    if docs:
        doc = docs.read_text()
        if BEGIN not in doc or END not in doc:
            sys.exit("%s has no %s ... %s markers" % (docs, BEGIN, END))
        head, rest = doc.split(BEGIN, 1)
        docs.write_text(head + BEGIN + "\n" + text + rest[rest.index(END):])


if __name__ == "__main__":
    main(sys.argv[1:])
