"""`--retry-policy smart` against real workers (plain python on CPU): failures that will fail
again are not retried (docs/supervision.md, "Failures that will fail again"); `always` retries
them as before. The two-node case is in test_multinode.py (the signature travels to node 0).

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import re
import subprocess
import textwrap

import tvtest

TIMEOUT = 120  # only guards against a hang (2 shared cores)


def tv(tmp_path, script, *options):
    """trainvisor run python3 SCRIPT with the failure file and termination log under tmp_path."""
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(script))
    cmd = [str(tvtest.BIN), "run", "--preflight", "none", "--warm-standby", "off",
           "--failure-file", str(tmp_path / "failure"),
           "--termination-log", str(tmp_path / "termination-log"),
           "--progress-regex", r"step (?<step>\d+)", *map(str, options),
           "--no-python", "--", tvtest.PYTHON, str(path)]
    return subprocess.run(cmd, env=tvtest.base_env(), capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=tmp_path)


def starts(r):
    return len(re.findall(r"generation \d+: starting", r.stderr))


def gave_up(r, generations, rule):
    """The run exited 1 after `generations` starts; returns its one decision line for `rule`."""
    assert r.returncode == 1, r.stderr
    assert starts(r) == generations, r.stderr
    lines = [l for l in r.stderr.splitlines() if f"rule {rule}" in l]
    assert len(lines) == 1, r.stderr
    return lines[0]


IMPORT_ERROR = """
    import not_a_module_anyone_has
"""

SAME_VALUE_ERROR = """
    import sys
    print("step 40", flush=True)
    raise ValueError("bad record 17 in /data/shard_3.bin")
"""

# Different message and step in each generation (generation 0..3 fail, 4 succeeds).
RANDOM_FAILURE = """
    import os, random, sys
    g = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    if g == 2:
        sys.exit(0)
    print("step %d" % (10 * (g + 1)), flush=True)
    raise RuntimeError(random.choice(["disk", "net"]) + " hiccup " + "abcdefgh"[g] * 3)
"""


def test_import_error_gives_up_after_the_first_generation(tmp_path):
    line = gave_up(tv(tmp_path, IMPORT_ERROR, "--max-restarts", 5), 1, "cannot_start")
    assert "generation 0 (ModuleNotFoundError: No module named 'not_a_module_anyone_has' " \
           "before any progress)" in line
    failure = (tmp_path / "failure").read_text()
    assert "ModuleNotFoundError" in failure.splitlines()[0]
    assert "rule cannot_start" in failure.splitlines()[1]
    termination = (tmp_path / "termination-log").read_text()
    assert "last generations' root causes:\n  generation 0: rank 0" in termination


def test_retry_policy_always_retries_the_import_error(tmp_path):
    r = tv(tmp_path, IMPORT_ERROR, "--max-restarts", 2, "--retry-policy", "always")
    assert r.returncode == 1, r.stderr
    assert starts(r) == 3, r.stderr
    assert "rule cannot_start" not in r.stderr
    assert "restarts exhausted" in (tmp_path / "failure").read_text()


def test_same_value_error_at_the_same_step_gives_up_after_two_generations(tmp_path):
    r = tv(tmp_path, SAME_VALUE_ERROR, "--max-restarts", 5)
    line = gave_up(r, 2, "same_failure")
    # One line names both failures it compared, normalized, with their step.
    sig = "ValueError: bad record <n> in <path> at step 40"
    assert f"generation 1 ({sig})" in line and f"generation 0 ({sig})" in line, line
    assert "rule first_failure" in r.stderr  # generation 0's verdict: retried
    termination = (tmp_path / "termination-log").read_text()
    assert "generation 0: rank 0" in termination and "generation 1: rank 0" in termination


def test_a_different_failure_each_time_is_retried(tmp_path):
    r = tv(tmp_path, RANDOM_FAILURE, "--max-restarts", 5)
    assert r.returncode == 0, r.stderr
    assert starts(r) == 3, r.stderr
    assert "rule different_failure" in r.stderr
    assert "giving up" not in r.stderr


def test_an_unknown_retry_policy_is_refused(tmp_path):
    r = tv(tmp_path, IMPORT_ERROR, "--retry-policy", "never")
    assert r.returncode == 78, r.stderr
    assert "--retry-policy" in r.stderr and "smart|always" in r.stderr, r.stderr
