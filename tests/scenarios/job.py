"""A job of several nodes on loopback, each node one `bash -c ENTRYPOINT` that ends in
`exec trainvisor run ...` (the seed's launcher line with its first word changed), started again
as the platform would start a new container; and the checks every phase ends with.

Waits are for events (a record file, an exit, a log line); their limits only keep a broken
build from hanging CI and are never what a test asserts."""
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import tvtest

GUARD = 120  # seconds: the most any one event may take before the test gives up

# What changes between generations by design (docs/standby.md, "A restart", and the paths into
# each generation's attempt_<g>/ directory that a cold start of that generation gets too):
# everything else of a restarted rank's environment must equal its cold start's.
PER_GENERATION = {"MASTER_PORT", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_ERROR_FILE",
                  "TRAINVISOR_HEARTBEAT_FILE", "TRAINVISOR_RESUME_CHECKPOINT",
                  "TRAINVISOR_STACKS_FILE", "TORCH_FR_DUMP_TEMP_FILE"}


def wait_for(what, predicate, guard=GUARD, every=0.05):
    deadline = time.monotonic() + guard
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(every)


def children(pid):
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class Node:
    """One node's container: the entrypoint shell, which starts a sidecar (as entrypoints start
    log shippers and monitors) and then `exec`s trainvisor, so trainvisor has the shell's pid."""

    def __init__(self, job, index):
        self.job, self.index = job, index
        self.proc = None
        self.pid = None  # trainvisor's
        self.log = None
        self.container = -1

    def start(self, container, env, command):
        self.container = container
        d = self.job.dir
        self.log = d / f"node{self.index}_c{container}.log"
        self.failure = d / f"failure{self.index}_c{container}"
        self.summary = d / f"summary{self.index}_c{container}.json"
        sidecar = d / f"sidecar{self.index}_c{container}.pid"
        script = (f"sleep 900 & echo $! > {sidecar}\n"
                  f"exec {tvtest.BIN} run {command}")
        full = tvtest.base_env(**env, TRAINVISOR_FAILURE_FILE=self.failure,
                               TRAINVISOR_TERMINATION_LOG=d / f"termination{self.index}",
                               TRAINVISOR_SUMMARY_FILE=self.summary,
                               SCEN_CONTAINER=container)
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(["bash", "-c", script], cwd=self.job.workdir, env=full,
                                         stdout=out, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid  # the shell's, which trainvisor's becomes
        self.sidecar = int(wait_for("the sidecar's pid", lambda: sidecar.exists()
                                    and sidecar.read_text().strip()))

    def text(self):
        return self.log.read_text(errors="replace")

    def wait(self):
        try:
            return self.proc.wait(timeout=GUARD)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"node {self.index} did not exit:\n{self.text()[-3000:]}")

    def why(self):
        """What a failed exit is about, whatever the log's length: the node's warnings and errors
        and its failure file (a log's last lines are its summary table)."""
        lines = [l for l in self.text().splitlines() if re.search(r" [WE]\] ", l)]
        failure = self.failure.read_text(errors="replace") if self.failure.exists() else "(none)"
        return f"node {self.index}: " + "\n".join(lines[-30:]) + f"\nfailure file: {failure}"

    def gpu_watch(self):
        """The pid of this node's GPU health watch (a child of trainvisor), or None."""
        return next((c for c in children(self.pid) if "gpu-watch" in cmdline(c)), None)

    def signal(self, sig):
        os.kill(self.pid, sig)


class Job:
    def __init__(self, tmp_path, platform, nodes=2, nproc=2):
        self.dir = tmp_path
        self.platform = platform
        self.nodes = [Node(self, i) for i in range(nodes)]
        self.nproc = nproc
        self.world = nodes * nproc
        self.workdir = tmp_path / "work"
        self.workdir.mkdir()
        (tmp_path / "records").mkdir()
        (tmp_path / "plan").mkdir()
        self.containers = 0

    # --- the life of the job -------------------------------------------------------------
    def start_containers(self):
        """Every node's next container, as the platform starts it (its retry rule decided)."""
        c = self.containers
        self.containers += 1
        self.port, = tvtest.free_ports(1)
        self.platform.launch(self, c)
        return c

    def plan(self, name, content=""):
        (self.dir / "plan" / name).write_text(content)

    def records(self, container, gen):
        out = {}
        for f in (self.dir / "records").glob(f"c{container}_g{gen}_r*.json"):
            r = json.loads(f.read_text())
            out[int(r["env"]["RANK"])] = r
        return out

    def wait_generation(self, container, gen):
        return wait_for(f"container {container} generation {gen} on every rank",
                        lambda: (r := self.records(container, gen)) and len(r) == self.world and r)

    def newest_step(self):
        return self.platform.newest_step(self)

    def wait_checkpoint_after(self, step):
        return wait_for(f"a checkpoint after step {step}",
                        lambda: (s := self.newest_step()) > step and s)

    def exits(self):
        """Each node's exit code, as the platform reports it."""
        return self.platform.exits(self)

    # --- the invariants every phase ends with --------------------------------------------
    def check_restart_equals_cold_start(self, container, cold, warm):
        for rank, w in warm.items():
            c = cold[rank]
            diff = sorted(k for k in set(c["env"]) | set(w["env"])
                          if k not in PER_GENERATION and c["env"].get(k) != w["env"].get(k))
            assert not diff, (f"rank {rank}: the restarted rank's environment differs from its cold "
                              f"start's in {[(k, c['env'].get(k), w['env'].get(k)) for k in diff]}")
            resume = self.platform.resume_words(w)
            strip = lambda argv: [a for a in argv if a not in resume]
            for field in ("argv", "orig_argv"):
                assert strip(w[field]) == strip(c[field]), (rank, field, c[field], w[field])
            for field in ("spec", "file", "path0", "cwd"):
                assert w[field] == c[field], (rank, field, c[field], w[field])

    def check_resumed_newest(self, recs):
        for rank, r in recs.items():
            assert r["resume_step"] == r["newest_at_start"], (
                f"rank {rank} resumed from step {r['resume_step']} ({r['resume_path']}); the "
                f"newest checkpoint on disk was step {r['newest_at_start']}")

    def check_nothing_killed_that_workers_did_not_leave(self, sidecars=True):
        """`sidecars`: whether the sidecars must still live (a Slurm step's end kills them)."""
        for n in self.nodes:
            assert not sidecars or alive(n.sidecar), f"node {n.index}: the entrypoint's sidecar was killed"
            said = re.findall(r"killed \d+ process\(es\)[^\n]*", n.text())
            assert not said, f"node {n.index}: {said} (the stand-in leaves nothing behind)"

    def check_failure_files_name(self, *words):
        for n in self.nodes:
            if not n.failure.exists():
                continue
            text = n.failure.read_text()
            for w in words:
                assert w in text, f"node {n.index}'s failure file lacks {w!r}:\n{text}"

    def check_ledger_adds_up(self, node=0):
        summary = json.loads(self.nodes[node].summary.read_text())
        job = summary["job"]
        parts = job["productive_seconds"] + sum(job["badput_seconds"].values())
        assert abs(parts - job["wall_seconds"]) < 1.0, job
        self.check_report_says(job)
        return job

    def check_report_says(self, job):
        """`trainvisor report` on the job's ledger prints the account node 0's summary gave (the
        summary is taken a moment after the ledger's last write: microseconds apart)."""
        ledgers = list(self.dir.rglob(".trainvisor-ledger-*.json"))
        assert len(ledgers) == 1, ledgers
        r = subprocess.run([str(tvtest.BIN), "report", "--ledger", str(ledgers[0])],
                           capture_output=True, text=True, timeout=GUARD)
        assert r.returncode == 0, r.stderr
        said = dict(re.findall(r"^  (containers|wall time|goodput|restarts)\s+(\S+)", r.stdout,
                               re.M))
        assert int(said["containers"]) == job["containers"], r.stdout
        assert int(said["restarts"]) == job["restarts"], r.stdout
        assert abs(float(said["wall time"]) - job["wall_seconds"]) < 0.01, (r.stdout, job)
        assert abs(float(said["goodput"]) - job["goodput"]) < 0.002, (r.stdout, job)
