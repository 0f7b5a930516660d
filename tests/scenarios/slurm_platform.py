"""Slurm as a scenario's platform: the project's real cluster (slurm-wlm 22.05 + munge, the named
nodes tvn1..tvn3 of scripts/slurm-cluster.sh on this host), the job that docs/platforms/slurm.md
tells users to run (`trainvisor render --target slurm` of examples/render/
isaac-lab-hyperpod-sagemaker.json with its paths moved here, less pyxis's --container-*
options: no pyxis on the test cluster), submitted with `sbatch`.

The environment is Slurm's own: slurmstepd sets it in every task of the step (srun(1), "OUTPUT
ENVIRONMENT VARIABLES"; Slurm 22.05 src/common/env.c, `setup_env` and `env_array_for_step`).
trainvisor reads SLURM_JOB_ID, SLURM_STEP_ID, SLURM_NNODES and SLURM_STEP_NUM_NODES,
SLURM_NODEID, SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE, SLURM_STEP_NODELIST (SLURM_JOB_NODELIST,
SLURM_NODELIST when there is no step list): the nodes, this node's rank, the master (the step's
first host) and the master port (from the job and step ids). The rest of a task's environment is
the submitting shell's (sbatch's default --export=ALL) plus the rendered script's `export`s.

Each node's task is the image's entrypoint (`ENTRYPOINT`, given to render as the `trainvisor`
binary, so the rendered srun line runs it with `run ...`): it starts a sidecar, writes its own pid
(the task knows SLURM_NODEID), and `exec`s trainvisor, which keeps that pid: trainvisor is the
task's process, the one srun launched, that slurmstepd waits for and signals. A wrapper that waits
for trainvisor to write its code would be the task instead (and would need a SIGTERM trap, as
test_slurm.py's WRAP has): the per-node codes are instead Slurm's own report, srun's line per task
that did not exit 0 (`_task_finish` in src/plugins/launch/slurm/launch_slurm.c: "HOST: task N:
Exited with exit code C", or the signal's name, "Killed"), read from the job's output file; a task
srun does not name exited 0. The job's own code is slurmctld's ExitCode (`scontrol show job`).

The platform's retry rule is the rendered script's: 75 (a node lost) and 74 (a GPU failed) are
worth a requeue (RequeueExit=75, HyperPod's auto-resume); 143 is a stopped job, which runs again
only when requeued (a preemption with PreemptMode=REQUEUE). The next "container" is the same job
requeued (`launch`): one Slurm job id throughout, which keys the job's ledger
(docs/observability.md, "Which job"), the output file appended to.
"""
import json
import os
import re
import subprocess
from pathlib import Path

import tvtest
from job import wait_for
from platforms import Platform
from slurm_cluster import check_cluster, report

CLUSTER = tvtest.SOURCE_DIR / "scripts" / "slurm-cluster.sh"
SLURM_DIR = os.environ.get("TV_SLURM_DIR", "/tmp/tv-slurm")
EXAMPLE = tvtest.SOURCE_DIR / "examples" / "render" / "isaac-lab-hyperpod-sagemaker.json"
QUEUE_GUARD = 900  # seconds a job may wait for free nodes (the cluster is shared)

ENTRYPOINT = """#!/bin/bash
# The image's entrypoint on each node: a sidecar (a log shipper, say), then trainvisor in place of
# this shell, so that it is the task Slurm launched, waits for and signals.
n=$SLURM_NODEID d=$SCEN_DIR c=${{SLURM_RESTART_COUNT:-0}}
export SCEN_CONTAINER=$c
sleep 900 </dev/null >/dev/null 2>&1 &
echo $! > "$d/sidecar${{n}}_c$c.pid"
export TV_FAKE_NVML_XID_FILE=$d/xid_node$n
export TRAINVISOR_FAILURE_FILE=$d/failure${{n}}_c$c
export TRAINVISOR_TERMINATION_LOG=$d/termination$n
export TRAINVISOR_SUMMARY_FILE=$d/summary${{n}}_c$c.json
echo $$ > "$d/tv${{n}}_c$c.pid.tmp" && mv "$d/tv${{n}}_c$c.pid.tmp" "$d/tv${{n}}_c$c.pid"
exec {trainvisor} "$@"
"""

TASK_LINE = re.compile(r"srun: error: \S+: tasks? ([\d,\-]+): (?:Exited with exit code (\d+)|(\w+))")
SIGNALS = {"Killed": -9, "Terminated": -15}


def slurm_env(**extra):
    return {"SLURM_CONF": f"{SLURM_DIR}/slurm.conf", **extra}


def ctl(*argv, timeout=60):
    return subprocess.run(list(argv), env=tvtest.base_env(**slurm_env()), capture_output=True,
                          text=True, timeout=timeout)


def cluster(command):
    env = tvtest.base_env(TV_SLURM_DIR=SLURM_DIR, PATH="/usr/sbin:/usr/bin:/bin")
    return subprocess.run(["bash", str(CLUSTER), command], env=env, capture_output=True,
                          text=True, timeout=120)


def cluster_up():
    """(why the scenario cannot run or None, whether this call started the cluster); a cluster
    that does not start fails the test. One already running is left as it is
    (scripts/slurm-cluster.sh start is idempotent)."""
    if os.geteuid() != 0:
        return "a real Slurm cluster needs root (slurmd runs the job steps); not root here", False
    if not Path("/usr/sbin/slurmd").exists() or not Path("/usr/bin/sbatch").exists():
        return "slurm-wlm is not installed (no slurmd or sbatch)", False
    running = cluster("status").returncode == 0
    r = cluster("start")
    assert r.returncode == 0, f"the Slurm cluster did not start:\n{r.stdout}{r.stderr}"
    return None, not running


def task_ids(spec):
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def task_codes(log, ntasks):
    """Each task's code as srun reported it (a signal as minus its number); unnamed tasks: 0."""
    codes = [0] * ntasks
    for m in TASK_LINE.finditer(log):
        code = int(m.group(2)) if m.group(2) else SIGNALS.get(m.group(3), -1)
        for t in task_ids(m.group(1)):
            codes[t] = code
    return codes


class Slurm(Platform):
    name = "slurm"

    def setup(self, job):
        super().setup(job)
        self.job_name = f"tv-scen-{os.getpid()}"
        self.jobs = []  # every Slurm job id this scenario submitted, the newest last
        entry = job.dir / "entrypoint.sh"
        entry.write_text(ENTRYPOINT.format(trainvisor=tvtest.BIN))
        entry.chmod(0o755)
        cfg = json.loads(EXAMPLE.read_text())
        for k in ("image", "instance_type", "efa_per_node", "rt_cores", "volumes",
                  "checkpoint_s3_uri", "kubeflow", "sagemaker", "workdir"):
            cfg.pop(k, None)
        script = str(job.workdir / "run_train.py")
        cfg.update(name=self.job_name, image="unused", nodes=len(job.nodes), gpus_per_node=0,
                   trainvisor=str(entry), checkpoint_dir=str(self.ckpt),
                   command=[script, *cfg["command"][1:]])
        # the example's run_args, its paths moved here; the CPU host's worker count
        cfg["run_args"] = [a.replace("/workspace/IsaacLab", str(job.workdir))
                           for a in cfg["run_args"]] + ["--nproc-per-node", str(job.nproc)]
        cfg["env"] = {**cfg["env"], "PYTHON_EXEC": str(self.python),
                      "ISAACLAB_INIT_LOCK": str(job.dir / "isaaclab_init.lock"),
                      "MLFLOW_ARTIFACT_DIR": str(job.workdir / "logs" / "skrl")}
        (job.dir / "job.json").write_text(json.dumps(cfg))
        r = subprocess.run([str(tvtest.BIN), "render", "--config", str(job.dir / "job.json"),
                            "--target", "slurm"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert "--kill-on-bad-exit" not in r.stdout, r.stdout
        self.script = job.dir / "job.sbatch"
        self.script.write_text(re.sub(r" --container-\w+=\S+", "", r.stdout))

    def env(self, job, node, container):
        env = self.common_env(job, node, container)
        # the rendered script says where the checkpoints are and how the script resumes
        del env["TRAINVISOR_CHECKPOINT_DIR"], env["TRAINVISOR_RESUME_ARG"]
        # this host's one interface for gloo (tvn1..tvn3 are all 127.0.0.1)
        return slurm_env(**env, GLOO_SOCKET_IFNAME="lo", SCEN_CONTAINER=container)

    def resume_words(self, record):
        path = record["resume_path"]
        return {f"--checkpoint={path}"} if path else set()

    def retries(self, code):
        return code in (74, 75)

    # --- starting a container's nodes, and their ends ----------------------------------------
    def launch(self, job, container):
        """The first allocation: the rendered script submitted. Every next one: the same job
        requeued (`scontrol requeue`, what RequeueExit=75, a preemption with PreemptMode=REQUEUE or
        HyperPod's auto-resume does), so the job keeps its id (the ledger's key) and its output
        file (--open-mode=append). Slurm holds a requeued job for the credential's lifetime
        (slurm.conf AuthInfo cred_expire, 120 s by default) before it runs again. Each node's pids
        come from the files its entrypoint writes."""
        if container == 0:
            env = tvtest.base_env(**self.env(job, 0, container))
            r = subprocess.run(["sbatch", "--parsable", str(self.script)], env=env,
                               cwd=job.workdir, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
            self.jobs.append(r.stdout.strip().split(";")[0])
            self.log = job.workdir / f"{self.job_name}-{self.jobs[-1]}.out"
        else:
            # the submitting shell's SCEN_CONTAINER is the first container's: the entrypoint
            # counts containers by SLURM_RESTART_COUNT, which a requeue sets
            r = ctl("scontrol", "requeue", self.jobs[-1])
            assert r.returncode == 0, r.stderr
        self.log_from = self.log.stat().st_size if self.log.exists() else 0
        for n in job.nodes:
            n.container, n.log = container, self.log
            d = job.dir
            pid = d / f"tv{n.index}_c{container}.pid"
            what = f"node {n.index}'s task of Slurm job {self.jobs[-1]}"
            self.wait(what, lambda: pid.exists() or self.finished(), guard=QUEUE_GUARD, every=0.2)
            assert pid.exists(), f"job {self.jobs[-1]} ended before its tasks ran:\n{n.text()}"
            n.pid = int(pid.read_text())
            n.sidecar = int((d / f"sidecar{n.index}_c{container}.pid").read_text())
            n.failure = d / f"failure{n.index}_c{container}"
            n.summary = d / f"summary{n.index}_c{container}.json"

    @staticmethod
    def wait(what, predicate, **kw):
        """job.wait_for, stopped at once by a node that cannot run jobs; either failure says
        what the cluster looked like (slurm_cluster.report)."""
        def ready():
            check_cluster(f"waiting for {what}")
            return predicate()
        try:
            return wait_for(what, ready, **kw)
        except AssertionError as e:
            raise AssertionError(f"{e}:\n{report()}") from None

    def state(self):
        out = ctl("scontrol", "show", "job", self.jobs[-1]).stdout
        m = re.search(r"\bJobState=(\S+).*?\bExitCode=(\S+)", out, re.S)
        return (m.group(1), m.group(2)) if m else ("GONE", None)

    def finished(self):
        return self.state()[0] not in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING")

    def exits(self, job):
        """Each node's code from srun's report, once the job has ended; the job's own
        (State, ExitCode) in self.ended."""
        self.ended = self.wait(f"Slurm job {self.jobs[-1]} to end",
                               lambda: (s := self.state())[0] not in
                               ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING") and s)
        return task_codes(self.log.read_text(errors="replace")[self.log_from:], len(job.nodes))

    def cancel(self, signal=None):
        """scancel; with `signal`, only the job's steps get it (not the batch shell)."""
        argv = ["scancel", *([f"--signal={signal}"] if signal else []), self.jobs[-1]]
        r = ctl(*argv)
        assert r.returncode == 0, r.stderr

    def cancel_all(self):
        if getattr(self, "jobs", None):
            ctl("scancel", *self.jobs)
