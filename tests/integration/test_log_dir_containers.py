"""A --log-dir that outlives its container (docs/supervision.md, "Output and logs"): each new
container of the job begins at generation 0, and its generation 0 must not append to the
attempt_0 files of the container before it. Generation g of a container writes
attempt_<first + g>, `first` one past the highest attempt_<k> already in the directory.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON."""
import subprocess

from tvtest import BIN, PYTHON, base_env

# Prints which container and generation it is; fails generation 0 so a container has two.
WORKER = f"""#!{PYTHON}
import os, sys
gen = os.environ["TORCHELASTIC_RESTART_COUNT"]
print("container", os.environ["TV_CONTAINER"], "generation", gen, flush=True)
sys.exit(1 if gen == "0" else 0)
"""


def container(tmp_path, n):
    r = subprocess.run(
        [str(BIN), "run", "--preflight", "none", "--warm-standby", "off", "--max-restarts", "1",
         "--log-dir", tmp_path / "logs", "--failure-file", tmp_path / f"failure{n}",
         "--termination-log", tmp_path / f"tlog{n}", "--nproc-per-node", "1",
         tmp_path / "worker.py"],
        env=base_env(TV_CONTAINER=n), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stderr


def test_a_new_container_never_appends_to_an_old_containers_attempt(tmp_path):
    (tmp_path / "worker.py").write_text(WORKER)
    container(tmp_path, 1)
    said = container(tmp_path, 2)
    assert "attempt_0 to attempt_1 are an earlier run's; generation 0 writes attempt_2" in said
    logs = tmp_path / "logs"
    expected = {0: "container 1 generation 0", 1: "container 1 generation 1",
                2: "container 2 generation 0", 3: "container 2 generation 1"}
    assert sorted(p.name for p in logs.glob("attempt_*")) == [f"attempt_{k}" for k in expected]
    for k, line in expected.items():
        assert (logs / f"attempt_{k}" / "rank_0" / "stdout.log").read_text().splitlines() == [line]
