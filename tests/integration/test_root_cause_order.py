"""The root cause of a worker without `@record` is its traceback on stderr, whichever pipe
trainvisor read last (docs/supervision.md, "Root cause"). A worker that prints 200 lines on stdout
and then raises used to get its last stdout line as the root cause in about a quarter of the runs
(`exit 1: log line 199 ...`): the loop read the rest of stdout after the traceback. Here the real
binary runs that worker 200 times, a batch of them at once, and every failure file must name the
exception line, and so must the signature the judge compares (its log line).

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import subprocess
import textwrap

import tvtest

RUNS = 200
BATCH = 10  # trainvisors at once: the pipes are read while other runs compete for the CPU
TIMEOUT = 120  # one batch; only guards against a hang

# 200 lines of about 200 bytes (40 KB, more than trainvisor reads at once), then the traceback.
WORKER = """
    for i in range(200):
        print(f"log line {i} of the training loop: loss 0.{i:04d} " + "x" * 160)
    raise RuntimeError("NCCL error: unhandled system error")
"""

EXCEPTION = "RuntimeError: NCCL error: unhandled system error"
SUMMARY = f"rank 0 (node 0, local 0): exit 1: {EXCEPTION}"


def start(run_dir, script):
    run_dir.mkdir()
    # -S: no site import, the quickest interpreter start (200 of them on 2 shared cores).
    cmd = [str(tvtest.BIN), "run", "--preflight", "none", "--warm-standby", "off",
           "--max-restarts", "0", "--failure-file", str(run_dir / "failure"),
           "--no-python", "--", tvtest.PYTHON, "-u", "-S", str(script)]
    return subprocess.Popen(cmd, env=tvtest.base_env(), cwd=run_dir, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def test_the_traceback_names_the_root_cause_in_every_one_of_200_runs(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(WORKER))
    wrong = []
    for first in range(0, RUNS, BATCH):
        runs = [(tmp_path / f"run_{i}", None) for i in range(first, first + BATCH)]
        runs = [(d, start(d, script)) for d, _ in runs]
        for run_dir, proc in runs:
            _, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == 1, err
            summary = (run_dir / "failure").read_text().splitlines()[0]
            decision = [l for l in err.splitlines() if "restarts exhausted" in l]
            if summary != SUMMARY or len(decision) != 1 or \
                    f"generation 0 ({EXCEPTION} before any progress) failed" not in decision[0]:
                wrong.append(f"{run_dir.name}: {summary!r} / {decision!r}")
    assert not wrong, f"{len(wrong)} of {RUNS} runs named another line:\n" + "\n".join(wrong[:10])
