"""The default --grace-period follows the detected platform's stop window (common/stop_window.h,
docs/platforms/README.md): the real binary, a real worker, a real SIGTERM; the log line that
announces the SIGKILL deadline tells which grace period applied."""
import json
import signal
import subprocess
import time

import tvtest


BIN = str(tvtest.BIN)
# Exits at once on SIGTERM, so no test waits out a grace period.
WORKER = 'trap "exit 0" TERM; echo ready; while :; do sleep 0.1 & wait $!; done'


def announced_grace(*args, env):
    p = subprocess.Popen([BIN, "run", "--preflight", "none", "--nproc-per-node", "1", *args, "--", "/bin/sh", "-c", WORKER],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    out = ""
    # The worker's own line (the start banner's command line has the word too).
    while time.monotonic() < deadline and not any(l.strip() in ("ready", "[rank0]: ready") for l in out.splitlines()):
        out += p.stdout.readline()
    p.send_signal(signal.SIGTERM)
    rest, _ = p.communicate(timeout=60)
    out += rest
    assert p.returncode == 143, out
    marker = "SIGKILL after "
    assert marker in out, out
    return int(out.split(marker)[1].split(" ms")[0])


def test_no_platform_is_docker_or_podman():
    assert announced_grace(env=tvtest.own_env()) == 8000


def test_explicit_grace_period_wins():
    assert announced_grace("--grace-period", "3", env=tvtest.own_env()) == 3000
    assert announced_grace(env=tvtest.own_env(TRAINVISOR_GRACE_PERIOD="4", KUBERNETES_SERVICE_HOST="10.0.0.1")) == 4000


def test_any_kubernetes_pod():
    assert announced_grace(env=tvtest.own_env(KUBERNETES_SERVICE_HOST="10.0.0.1")) == 25000


def test_slurm():
    env = tvtest.own_env(SLURM_JOB_ID="7", SLURM_NNODES="1", SLURM_NODEID="0", SLURM_JOB_NODELIST="localhost")
    assert announced_grace("--master-port", "29731", env=env) == 25000


def test_sagemaker(tmp_path):
    rc = tmp_path / "resourceconfig.json"
    rc.write_text(json.dumps({"current_host": "algo-1", "hosts": ["algo-1"]}))
    assert announced_grace("--resource-config", str(rc), env=tvtest.own_env()) == 110000
