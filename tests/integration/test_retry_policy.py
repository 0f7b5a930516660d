"""`--retry-policy smart` against real workers (plain python on CPU): failures that will fail
again are not retried (docs/supervision.md, "Failures that will fail again"); `always` retries
them as before. The two-node case is in test_multinode.py (the signature travels to node 0).

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import re
import subprocess
import textwrap
import time
import urllib.request

import tvtest

TIMEOUT = 120  # only guards against a hang (2 shared cores)


def command(tmp_path, script, *options):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(script))
    return [str(tvtest.BIN), "run", "--preflight", "none", "--warm-standby", "off",
           "--failure-file", str(tmp_path / "failure"),
           "--termination-log", str(tmp_path / "termination-log"),
           "--progress-regex", r"step (?<step>\d+)", *map(str, options),
           "--no-python", "--", tvtest.PYTHON, str(path)]


def tv(tmp_path, script, *options):
    """trainvisor run python3 SCRIPT with the failure file and termination log under tmp_path."""
    return subprocess.run(command(tmp_path, script, *options), env=tvtest.base_env(),
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)


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


# Generation 0 fails; generation 1 waits for the test's scrape, then succeeds.
FAIL_THEN_WAIT = """
    import os, pathlib, sys, time
    here = pathlib.Path(__file__).parent
    if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
        raise ValueError("first")
    (here / "ready").touch()
    while not (here / "go").exists():
        time.sleep(0.02)
"""


def test_each_decision_counts_on_metrics(tmp_path):
    port = tvtest.free_port()
    proc = subprocess.Popen(command(tmp_path, FAIL_THEN_WAIT, "--metrics-port", port),
                            env=tvtest.base_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (tmp_path / "ready").exists() and proc.poll() is None:
            assert time.monotonic() < deadline, "generation 1 never started"
            time.sleep(0.02)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            text = r.read().decode()
        assert 'trainvisor_retry_decisions_total{rule="first_failure"} 1' in text, text
    finally:
        (tmp_path / "go").touch()
        out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
