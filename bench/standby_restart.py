"""Driver of bench/standby_restart.sh: kill -> every replacement ready, for trainvisor with warm
standbys, trainvisor without, and torchrun, on the same DDP job (bench/standby_restart_worker.py),
REPEATS rounds alternating the three; prints one table (median, min, max) and the standbys'
memory. Usage: standby_restart.py TRAINVISOR PYTHON OUTDIR REPEATS NPROC
"""
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "standby_restart_worker.py"
TIMEOUT = 600


def launchers(tv, py, nproc, port):
    common = ["--nproc-per-node", str(nproc), "--max-restarts", "1", "--preflight", "none",
              "--master-port", str(port)]
    return {
        "trainvisor standby on": [tv, "run", *common, "--warm-standby", "on"],
        "trainvisor standby off": [tv, "run", *common, "--warm-standby", "off"],
        "torchrun": [py, str(HERE / "torchrun_compat.py"), "--standalone", "--nproc_per_node",
                     str(nproc), "--max_restarts", "1", "--monitor_interval", "0.1"],
    }


def memory_of(pid):
    """(RSS MiB, PSS MiB, has a CUDA driver mapping) of one process."""
    def field(path, key):
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) / 1024
        return -1
    rss = field(f"/proc/{pid}/status", "VmRSS:")
    try:
        pss = field(f"/proc/{pid}/smaps_rollup", "Pss:")
    except OSError:
        pss = -1
    maps = Path(f"/proc/{pid}/maps").read_text()
    return rss, pss, "libcuda.so" in maps


def run_one(name, cmd, out, nproc, env):
    out.mkdir(parents=True, exist_ok=True)
    (out / "go").unlink(missing_ok=True)
    log = open(out / "launcher.log", "w")
    proc = subprocess.Popen([*cmd, str(WORKER), str(out)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    done = threading.Event()

    def pump():
        for line in proc.stdout:
            log.write(line)
            log.flush()
            lines.append(line)
        done.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + TIMEOUT
    standby = "standby on" in name
    mem = []
    while time.monotonic() < deadline and not done.is_set():
        text = "".join(lines)
        ready0 = len(re.findall(r"READY rank=\d+ rc=0 ", text))
        sb = re.findall(r"warm standby ready \(pid (\d+)", text)
        if ready0 >= nproc and (not standby or len(sb) >= nproc):
            for pid in sb:
                try:
                    mem.append(memory_of(int(pid)))
                except OSError:
                    pass
            time.sleep(2)  # every launcher in the same steady state before the kill
            (out / "go").touch()
            break
        time.sleep(0.1)
    rc = proc.wait(timeout=max(1, deadline - time.monotonic()))
    done.wait(10)
    text = "".join(lines)
    kill = re.search(r"KILL t=([\d.]+)", text)
    again = [(float(a), float(b)) for a, b in re.findall(r"READY rank=\d+ rc=1 t0=([\d.]+) ready=([\d.]+)", text)]
    if rc != 0 or not kill or len(again) < nproc:
        print(f"  {name}: exit {rc}, kill {'seen' if kill else 'missing'}, {len(again)} ready "
              f"after it: see {out / 'launcher.log'}", file=sys.stderr)
        return None
    k = float(kill.group(1))
    return {"started": max(a for a, _ in again) - k, "ready": max(b for _, b in again) - k,
            "warm": len(re.findall(r"started from its warm standby", text)), "mem": mem}


def main():
    tv, py, outdir, repeats, nproc = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    env = dict(os.environ, PYTHON_EXEC=py, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
               NVSHMEM_DISABLE_NVLS="1")
    results = {}
    port = 29600
    for r in range(repeats):
        for name, cmd in launchers(tv, py, nproc, port).items():
            port += 3
            slug = name.replace(" ", "-")
            print(f"round {r + 1}/{repeats}: {name}", file=sys.stderr, flush=True)
            res = run_one(name, launchers(tv, py, nproc, port)[name], outdir / f"{slug}-{r}", nproc, env)
            if res:
                results.setdefault(name, []).append(res)
    torch_version = subprocess.run([py, "-c", "import torch;print(torch.__version__, 'cuda' if torch.cuda.is_available() else 'cpu')"],
                                   capture_output=True, text=True).stdout.strip()
    print(f"\nkill -> every replacement (nproc {nproc}, torch {torch_version}, {repeats} round(s)); "
          "seconds, median [min-max]")
    print(f"{'launcher':<24} {'runs':>4} {'script running':>22} {'ready (PG + all-reduce)':>26} {'warm ranks':>10}")

    def fmt(v):
        return f"{statistics.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"

    for name in launchers(tv, py, nproc, 0):
        rs = results.get(name, [])
        if not rs:
            print(f"{name:<24} {0:>4} {'failed':>22}")
            continue
        print(f"{name:<24} {len(rs):>4} {fmt([x['started'] for x in rs]):>22} {fmt([x['ready'] for x in rs]):>26} "
              f"{statistics.median([x['warm'] for x in rs]):>10}")
    mem = [m for x in results.get("trainvisor standby on", []) for m in x["mem"]]
    if mem:
        print(f"\nper standby when ready: RSS {fmt([m[0] for m in mem])} MiB, PSS {fmt([m[1] for m in mem])} MiB, "
              f"CUDA driver mapped in {sum(1 for m in mem if m[2])} of {len(mem)}")


if __name__ == "__main__":
    main()
