#!/bin/bash
# Forming and restarting a job of N nodes on one host (docs/benchmarks.md, "Rendezvous at scale"):
# N `trainvisor run` agents on loopback, one worker each (a bash script: no interpreter start-up
# in the figures), --max-restarts 1; once every worker runs, the last rank exits 1 once.
#   formation: the last agent started -> every worker running
#   restart:   that death -> every replacement running
# and the same job under torchrun c10d (--max_restarts 1 --monitor_interval 0.1) where memory
# allows. Every agent runs under a soft `ulimit -n` of 1024 (node 0 raises its own).
# Then, at the largest N (TV_CHECKS=0 skips it): the join flood (all N agents started at once:
# node 0 must close no connection before it joins, no agent may retry) and a lost node (one
# agent SIGSTOPped: node 0 must exit 75 within --peer-timeout plus one check interval).
#
# Usage: bench/rendezvous_scale.sh NODES...             e.g. bench/rendezvous_scale.sh 2 16 64
# Env:   TV_BINS="before=/path/a after=/path/b" (default: "trainvisor=build/trainvisor")
#        TV_REPEATS (3; 1 at 512 nodes and more), TV_PEER (restart runs' --peer-timeout s, 30),
#        TV_CHECK_PEER (5), TV_CHECKS (1), TV_TORCHRUN ("python3 -m torch.distributed.run";
#        default: Debian's torch 1.13 through bench/torchrun_compat.py if importable, else
#        python3's; "none" skips), TV_TORCHRUN_MAX (64), TV_OUT (a folder for results.md),
#        TV_FLAGS (more `run` options for every agent, e.g. "--gpu-health off"; default none),
#        TV_FINGERPRINT=both (each binary twice: with the node fingerprint, its default, and with
#        --node-fingerprint off, side by side: docs/coordination.md, "Node fingerprint").
# On one host every agent's GPU health watch and start-banner query load NVML where there is a
# GPU: 1,024 NVML children on one host are an artefact of the simulation (one per node in a real
# job); they run at nice 19 behind the workers (docs/supervision.md), and TV_FLAGS="--gpu-health
# off" shows the figure without the watch.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export TV_HERE="$here"
export TV_BINS="${TV_BINS:-trainvisor=$here/../build/trainvisor}"
py="$(command -v python3 || echo /usr/bin/python3)"
exec "$py" - "$@" <<'EOF'
import os, resource, shlex, signal, socket, statistics, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(os.environ["TV_HERE"])
BINS = [b.split("=", 1) + [[]] for b in os.environ["TV_BINS"].split()]
if os.environ.get("TV_FINGERPRINT") == "both":
    BINS = [x for l, tv, _ in BINS for x in ([l + " (fingerprint)", tv, []],
                                              [l + " (--node-fingerprint off)", tv,
                                               ["--node-fingerprint", "off"]])]
PEER = int(os.environ.get("TV_PEER", "30"))
CHECK_PEER = int(os.environ.get("TV_CHECK_PEER", "5"))
TR_MAX = int(os.environ.get("TV_TORCHRUN_MAX", "64"))
OUTDIR = os.environ.get("TV_OUT")
FLAGS = shlex.split(os.environ.get("TV_FLAGS", ""))
FORM_LIMIT = int(os.environ.get("TV_FORM_LIMIT", "300"))  # s for every worker to start
NODES = [int(a) for a in sys.argv[1:]] or [2, 16]
MARK = ("TV_BENCH_MARK", str(os.getpid()))
HZ = os.sysconf("SC_CLK_TCK")
LOG = []

def say(line=""):
    print(line, flush=True)
    LOG.append(line)

# Every agent (and its workers) inherits a soft limit of 1024 open files; the hard one stays.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))

WORKER = r'''#!/bin/bash
# $1: the run's folder. Attempt 1 (after the death) exits 0 at once.
out=$1 a=0
[ -e "$out/died" ] && a=1
printf '%s\n' "$EPOCHREALTIME" > "$out/s$a/$RANK"
[ $a = 1 ] && exit 0
[ "$2" = hold ] && exec sleep 100000
if [ "$RANK" = $((WORLD_SIZE - 1)) ]; then
  read -r _ < "$out/go"
  printf '%s\n' "$EPOCHREALTIME" > "$out/died"
  exit 1
fi
exec sleep 100000
'''

sys.path.insert(0, os.environ["TV_HERE"])
from bench_util import ports, kill_marked as _kill_marked

def kill_marked():
    _kill_marked(*MARK)

def env():
    e = dict(os.environ)
    e.update({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "GLOO_SOCKET_IFNAME": "lo", MARK[0]: MARK[1]})
    return e

def new_run(n):
    out = Path(tempfile.mkdtemp(prefix="tvrdzv"))
    (out / "s0").mkdir(); (out / "s1").mkdir(); (out / "logs").mkdir()
    os.mkfifo(out / "go")
    (out / "worker.sh").write_text(WORKER)
    (out / "worker.sh").chmod(0o755)
    return out

def count(d):
    return len(os.listdir(d))

def stamps(d):
    vals = []
    for f in os.listdir(d):
        for _ in range(200):
            t = (d / f).read_text().strip()
            if t: break
            time.sleep(0.005)
        vals.append(float(t))
    return vals

def wait_for(pred, procs, limit, what):
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > limit:
            raise RuntimeError("timed out waiting for %s" % what)
        if any(p.poll() is not None for p in procs):
            raise RuntimeError("an agent ended while waiting for %s (exit codes %s)"
                               % (what, sorted({p.poll() for p in procs if p.poll() is not None})))
        time.sleep(0.005)

def reap(procs, limit):
    """Exit code, user+system CPU s and peak RSS KiB of each agent (wait4), in node order."""
    res = [None] * len(procs)
    t0 = time.monotonic()
    while any(r is None for r in res):
        for i, p in enumerate(procs):
            if res[i] is not None: continue
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                res[i] = (p.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss)
        if time.monotonic() - t0 > limit:
            raise RuntimeError("agents still running after %d s" % limit)
        time.sleep(0.01)
    return res

def spawn_all(argvs, out):
    procs = []
    for k, argv in enumerate(argvs):
        with open(out / "logs" / str(k), "wb") as log:
            procs.append(subprocess.Popen(argv, env=env(), stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=log))
    return procs, time.time()

def fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1

def ticks(pid):
    f = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / HZ

def tv_argvs(tv, n, out, peer, hold=False, extra=()):
    m, r = ports(2)
    return [[tv, "run", "--nnodes", str(n), "--node-rank", str(k), "--master-addr", "127.0.0.1",
             "--master-port", str(m), "--rdzv-port", str(r), "--nproc-per-node", "1",
             "--max-restarts", "1", "--peer-timeout", str(peer), "--rdzv-token", "bench",
             "--preflight", "none", "--failure-file", str(out / ("f%d" % k)),
             "--termination-log", str(out / ("t%d" % k)), *FLAGS, *extra, "--no-python", "--",
             str(out / "worker.sh"), str(out)] + (["hold"] if hold else []) for k in range(n)]

def tr_argvs(prefix, n, out):
    (port,) = ports(1)
    return [prefix + ["--nnodes", str(n), "--nproc_per_node", "1", "--rdzv_backend", "c10d",
                      "--rdzv_endpoint", "127.0.0.1:%d" % port, "--rdzv_id", "bench%d" % port,
                      "--max_restarts", "1", "--monitor_interval", "0.1", "--no_python",
                      str(out / "worker.sh"), str(out)] for _ in range(n)]

def tv_job(tv, n, extra=()):
    out = new_run(n)
    return tv_argvs(tv, n, out, PEER, extra=extra), out

def tr_job(prefix, n):
    out = new_run(n)
    return tr_argvs(prefix, n, out), out

def one_job(job, n, is_tv):
    """formation s, restart s, node 0's figures (trainvisor only)."""
    argvs, out = job
    procs, last_start = spawn_all(argvs, out)
    info = {}
    try:
        wait_for(lambda: count(out / "s0") >= n, procs, FORM_LIMIT, "every worker of attempt 0")
        formed = max(stamps(out / "s0")) - last_start
        if is_tv:
            info["fd0"] = fds(procs[0].pid)
            info["fd_other"] = max(fds(p.pid) for p in procs[1:][:64])
            c0 = ticks(procs[0].pid)
        with open(out / "go", "w") as go:  # the last rank dies now
            go.write("go\n")
        wait_for(lambda: count(out / "s1") >= n, procs, 300, "every replacement")
        restarted = max(stamps(out / "s1")) - float((out / "died").read_text())
        if is_tv: info["cpu0_restart"] = ticks(procs[0].pid) - c0
        res = reap(procs, 120)
        info["codes"] = sorted({r[0] for r in res})
        if is_tv:
            info["cpu0"], info["rss0"] = res[0][1], res[0][2]
            info["cpu_other"] = statistics.mean(r[1] for r in res[1:])
            info["rss_other"] = max(r[2] for r in res[1:])
            info["log0"] = (out / "logs" / "0").read_text(errors="replace")
        return formed, restarted, info
    finally:
        kill_marked()
        for p in procs:
            if p.returncode is None:
                try: os.wait4(p.pid, 0)
                except ChildProcessError: pass

def ms(x): return "%s ms" % format(round(x * 1000, 1), ",")

def median_job(make, n, reps, is_tv):
    runs = []
    for _ in range(reps):
        try:
            runs.append(one_job(make(), n, is_tv))
        except RuntimeError as e:
            say("  %d nodes: run failed: %s" % (n, e))
    if not runs: return None
    f = statistics.median(r[0] for r in runs)
    r = statistics.median(r[1] for r in runs)
    return f, r, runs

def torchrun_prefix():
    t = os.environ.get("TV_TORCHRUN")
    if t == "none": return None
    if t: return shlex.split(t)
    compat = HERE / "torchrun_compat.py"
    deb = "/usr/bin/python3"
    if os.path.exists(deb) and compat.exists() and subprocess.run(
            [deb, "-c", "import torch, sys; sys.exit(not torch.__version__.startswith('1.'))"],
            capture_output=True).returncode == 0:
        return [deb, str(compat)]
    return ["python3", "-m", "torch.distributed.run"]

say("# rendezvous at scale: %s CPUs, load %.1f, soft RLIMIT_NOFILE of every agent %d (hard %d), "
    "restart runs --peer-timeout %d s" % (os.cpu_count(), os.getloadavg()[0],
    resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard, PEER))
try:
    say("# /proc/self/task/*/children: %s" % ("present" if os.path.exists(
        "/proc/%d/task/%d/children" % (os.getpid(), os.getpid())) else "absent"))
except OSError:
    pass
tr = torchrun_prefix()
rows = {}
for n in NODES:
    reps = int(os.environ.get("TV_REPEATS", "3" if n < 512 else "1"))
    row = []
    for label, tv, extra in BINS:
        got = median_job(lambda: tv_job(tv, n, extra), n, reps, True)
        if not got:
            row.append("failed / failed"); continue
        f, r, runs = got
        i = runs[len(runs) // 2][2]
        say("%s, %d nodes: formation %s, restart %s (runs: %s); exit codes %s; node 0: CPU %.2f s "
            "in all, %.3f s in the restart, peak RSS %.1f MiB, %d fds; other nodes: CPU %.3f s "
            "each, peak RSS %.1f MiB, at most %d fds"
            % (label, n, ms(f), ms(r), ", ".join("%s/%s" % (ms(x[0]), ms(x[1])) for x in runs),
               i["codes"], i["cpu0"], i["cpu0_restart"], i["rss0"] / 1024, i["fd0"],
               i["cpu_other"], i["rss_other"] / 1024, i["fd_other"]))
        for line in i["log0"].splitlines():
            if "RLIMIT" in line or "open files" in line: say("  node 0 log: " + line.strip())
        row.append("%s / %s" % (ms(f), ms(r)))
    if tr and n <= TR_MAX:
        got = median_job(lambda: tr_job(tr, n), n, 1 if n > 16 else reps, False)
        row.append("%s / %s" % (ms(got[0]), ms(got[1])) if got else "failed")
        if got: say("torchrun, %d nodes: formation %s, restart %s; exit codes %s"
                    % (n, ms(got[0]), ms(got[1]), got[2][0][2]["codes"]))
    else:
        row.append("-")
    rows[n] = row

def checks(tv, n):
    """The join flood and a lost node at n nodes."""
    out = new_run(n)
    argvs = tv_argvs(tv, n, out, CHECK_PEER, hold=True)
    procs, _ = spawn_all(argvs, out)
    try:
        def flood(what):
            log0 = (out / "logs" / "0").read_text(errors="replace").splitlines()
            closed = sum("before it joined" in l or "before joining" in l for l in log0)
            retried = sum(("retrying" in (out / "logs" / str(k)).read_text(errors="replace"))
                          for k in range(n))
            say("join flood, %d agents started at once: %s; node 0 logged %d closing(s) of "
                "connections before they joined; %d agent(s) retried; %d of %d workers running"
                % (n, what, closed, retried, count(out / "s0"), n))
        try:
            wait_for(lambda: count(out / "s0") >= n, procs, FORM_LIMIT, "every worker (join flood)")
        except RuntimeError:
            flood("NOT every node joined within %d s" % FORM_LIMIT)
            raise
        time.sleep(1)
        flood("every node joined")
        victim = n // 2
        t0 = time.monotonic()
        os.kill(procs[victim].pid, signal.SIGSTOP)
        while procs[0].poll() is None and time.monotonic() - t0 < CHECK_PEER * 4 + 60:
            time.sleep(0.005)
        dt = time.monotonic() - t0
        rc = procs[0].poll()
        log0 = (out / "logs" / "0").read_text(errors="replace")
        why = [l for l in log0.splitlines() if "silent for more than" in l][:1]
        say("lost node, %d nodes, node %d SIGSTOPped, --peer-timeout %d s: node 0 exited %s after "
            "%.2f s (bound: the timeout plus a check every %.2f s); %s"
            % (n, victim, CHECK_PEER, rc, dt, CHECK_PEER / 4, why[0].strip() if why else "?"))
    finally:
        for p in procs:
            try: os.kill(p.pid, signal.SIGCONT)
            except OSError: pass
        kill_marked()
        for p in procs:
            try: os.wait4(p.pid, 0)
            except ChildProcessError: pass

if os.environ.get("TV_CHECKS", "1") != "0":
    for label, tv, _ in BINS[-1:]:
        try:
            checks(tv, max(NODES))
        except RuntimeError as e:
            say("checks at %d nodes failed: %s" % (max(NODES), e))

say()
say("| nodes | " + " | ".join("%s: all workers running after the last agent starts / death -> "
                              "every replacement running" % l for l, _, _ in BINS)
    + " | torchrun c10d, same job |")
say("| --- " * (len(BINS) + 2) + "|")
for n, row in rows.items():
    say("| %s | %s |" % (format(n, ","), " | ".join(row)))
if OUTDIR:
    Path(OUTDIR).mkdir(parents=True, exist_ok=True)
    (Path(OUTDIR) / "rendezvous_scale.md").write_text("\n".join(LOG) + "\n")
EOF
