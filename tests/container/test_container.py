"""trainvisor as PID 1 of a real container, built from the Dockerfile (scripts/container-test.sh
builds the image and runs this file). Each test starts a container with podman, acts on it as
an orchestrator would, and reads the exit code and the log. Figures are printed (pytest -s).

Env: TV_IMAGE (the image), TV_PODMAN (podman with its global options), TV_PODMAN_RUN_OPTS.
"""
import json
import os
import shlex
import subprocess
import time
import uuid

import pytest

IMAGE = os.environ.get("TV_IMAGE", "localhost/trainvisor-test:latest")
PODMAN = shlex.split(os.environ.get("TV_PODMAN", "podman --runtime runc"))
RUN_OPTS = shlex.split(os.environ.get("TV_PODMAN_RUN_OPTS", ""))

# A worker that reports SIGTERM and exits; `wait` makes the trap run at once.
POLITE = 'trap \'echo "rank $RANK got SIGTERM"; exit 0\' TERM; echo "rank $RANK ready"; while :; do sleep 0.2 & wait $!; done'
# A worker that ignores SIGTERM.
STUBBORN = 'trap "" TERM; echo "rank $RANK ready (ignoring SIGTERM)"; while :; do sleep 0.2; done'


def podman(*args, check=True, timeout=120):
    p = subprocess.run([*PODMAN, *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, f"podman {' '.join(args)}: {p.stderr}"
    return p


@pytest.fixture
def container():
    """A name for one detached container; removed after the test."""
    names = []

    def start(*trainvisor_args, volumes=()):
        name = f"tv-test-{uuid.uuid4().hex[:8]}"
        names.append(name)
        vol = [a for v in volumes for a in ("-v", v)]
        podman("run", "-d", "--name", name, *RUN_OPTS, *vol, IMAGE, *trainvisor_args)
        return name

    yield start
    for n in names:
        podman("rm", "-f", "-t", "0", n, check=False)


def logs(name):
    p = podman("logs", name, check=False)
    return p.stdout + p.stderr


def wait_for(name, text, count=1, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if logs(name).count(text) >= count:
            return
        time.sleep(0.2)
    pytest.fail(f"{name}: '{text}' x{count} not seen in {timeout} s:\n{logs(name)}")


def stop(name, timeout_s):
    t0 = time.monotonic()
    podman("stop", "-t", str(timeout_s), name, timeout=timeout_s + 60)
    seconds = time.monotonic() - t0
    state = json.loads(podman("inspect", name).stdout)[0]["State"]
    return state["ExitCode"], seconds


def test_stop_signals_the_workers_first_and_exits_143(container):
    name = container("run", "--nproc-per-node", "2", "bash", "-c", POLITE)
    wait_for(name, "ready", 2)
    code, seconds = stop(name, 10)
    out = logs(name)
    print(f"\npodman stop: exit {code} in {seconds:.2f} s")
    assert code == 143, out
    assert "rank 0 got SIGTERM" in out and "rank 1 got SIGTERM" in out, out
    assert seconds < 8, f"took {seconds:.1f} s: the workers exit at once on SIGTERM"


def test_worker_ignoring_sigterm_is_killed_after_the_grace_period(container):
    name = container("run", "--nproc-per-node", "2", "--grace-period", "2", "bash", "-c", STUBBORN)
    wait_for(name, "ready", 2)
    code, seconds = stop(name, 10)
    out = logs(name)
    print(f"\nstubborn worker, --grace-period 2: exit {code} in {seconds:.2f} s")
    assert code == 143, out  # trainvisor's own exit, not podman's SIGKILL (137)
    assert "grace period of 2000 ms is over" in out, out
    assert seconds < 9


def test_default_grace_period_ends_before_podmans_stop_timeout(container):
    """No --grace-period: the default outside Kubernetes/Batch/SageMaker/Slurm is 8 s, under the
    10 s that podman stop waits, so trainvisor (not podman) kills the stubborn worker."""
    name = container("run", "--nproc-per-node", "1", "bash", "-c", STUBBORN)
    wait_for(name, "ready")
    code, seconds = stop(name, 10)
    out = logs(name)
    print(f"\nstubborn worker, default grace: exit {code} in {seconds:.2f} s")
    assert code == 143, out
    assert "grace period of 8000 ms is over" in out, out


def zombies(name):
    script = 'for s in /proc/[0-9]*/stat; do read -r line < "$s" 2>/dev/null && set -- ${line##*) } && [ "$1" = Z ] && echo "$s"; done; true'
    return podman("exec", name, "sh", "-c", script).stdout.split()


def test_orphaned_grandchildren_are_reaped_and_killed_at_stop(container):
    # Each (sleep &) double-forks: the sleeps are orphaned to PID 1 (trainvisor). 30 short ones
    # exit and must be reaped; 3 long ones must not outlive the stop.
    worker = ('for i in $(seq 30); do (sleep 0.1 &); done; for i in 1 2 3; do (exec -a orphan-long sleep 600 &); done; '
              + POLITE)
    name = container("run", "--nproc-per-node", "1", "bash", "-c", worker)
    wait_for(name, "ready")
    time.sleep(1.5)
    left = zombies(name)
    assert left == [], f"zombies in the container: {left}"
    code, seconds = stop(name, 10)
    print(f"\norphans: 0 zombies; stop exit {code} in {seconds:.2f} s")
    assert code == 143
    assert seconds < 8, "the orphaned sleeps were killed, not waited for"


def test_sagemaker_train_runs_the_sagemaker_program(tmp_path):
    (tmp_path / "input" / "config").mkdir(parents=True)
    (tmp_path / "code").mkdir()
    (tmp_path / "input" / "config" / "hyperparameters.json").write_text(json.dumps(
        {"sagemaker_program": '"train.sh"', "epochs": '"3"', "lr": "0.001", "sagemaker_region": '"us-west-2"'}))
    (tmp_path / "input" / "config" / "resourceconfig.json").write_text(json.dumps(
        {"current_host": "algo-1", "hosts": ["algo-1"], "network_interface_name": "eth0"}))
    (tmp_path / "code" / "train.sh").write_text('echo "args: $*"; echo "cwd: $(pwd)"; echo "rank $RANK of $WORLD_SIZE"\n')
    p = podman("run", "--rm", *RUN_OPTS, "-v", f"{tmp_path}:/opt/ml", IMAGE, "train", check=False)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "args: --epochs 3 --lr 0.001" in out, out
    assert "cwd: /opt/ml/code" in out
    assert "rank 0 of 1" in out


def test_sagemaker_train_without_sagemaker_says_what_is_missing():
    p = podman("run", "--rm", *RUN_OPTS, IMAGE, "train", check=False)
    out = p.stdout + p.stderr
    assert p.returncode == 127, out
    assert "/opt/ml/input/config/hyperparameters.json" in out and "no program named 'train'" in out, out


def test_image_holds_only_the_portable_binary():
    """The binary runs in the bare Debian root: no package was installed for it."""
    p = podman("run", "--rm", *RUN_OPTS, IMAGE, check=False)
    assert p.returncode == 0, p.stderr
    assert "trainvisor" in p.stdout + p.stderr
