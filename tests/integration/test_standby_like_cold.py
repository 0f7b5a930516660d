"""A rank started from its warm standby sees what a cold start of the same command sees, field by
field (docs/standby.md), with the real binary: a one-rank job whose first worker fails once, run
with `--warm-standby off` (the restart is cold) and with standbys on (the restart is taken from
the standby). The worker dumps sys.argv, sys.orig_argv, __spec__, __file__, sys.path, __name__,
__package__, os.environ and the C library's environ as JSON; both restarts (attempt 1) are
compared. Commands: a script, `-m pkg.mod` and `-m pkg` (a package's __main__), each with
`-- a=b` style trailing arguments (issue 38, item 7: `-m` put the module name into sys.argv).
Then through an interpreter wrapper like Isaac Sim's python.sh (exports, then exec python3, or
no exec at all): the wrapper's exports reach the restarted rank as they reach a cold one, and a
standby under Isaac Sim's environment imports nothing before the script (issue 39).

Environment (set by ctest): TRAINVISOR_BIN, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import re
import shutil
import subprocess
import time

import pytest

import tvtest

PYTHON = tvtest.PYTHON
TIMEOUT = 600  # 2 shared cores: a standby imports torch at nice 19

# Dumps what the worker sees, then (attempt 0) waits for the test's go file and fails once.
WORKER = r'''
import ctypes, json, os, sys, time

def c_environ():
    libc = ctypes.CDLL(None)
    env = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
    out, i = {}, 0
    while env[i]:
        k, _, v = env[i].decode("utf-8", "surrogateescape").partition("=")
        out[k] = v
        i += 1
    return out

def record():
    main = sys.modules["__main__"]
    spec = main.__spec__
    return {
        "argv": sys.argv, "orig_argv": sys.orig_argv, "name": __name__,
        "file": main.__file__, "path0": sys.path[0], "path": sys.path,
        "package": main.__package__,
        "spec": None if spec is None else [spec.name, spec.origin, spec.parent,
                                           type(spec.loader).__name__],
        "loader": type(main.__loader__).__name__, "cached": main.__cached__,
        "globals": sorted(k for k in vars(main) if k.startswith("__")),
        "env": dict(os.environ), "c_env": c_environ(), "cwd": os.getcwd(),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "torch_imported": "torch" in sys.modules,
    }

def main():
    rec = record()
    attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
    out = os.environ["LIKE_COLD_OUT"]
    with open(f"{out}/rec_{attempt}.json", "w") as f:
        json.dump(rec, f)
    if attempt == "0":
        while not os.path.exists(f"{out}/go"):
            time.sleep(0.1)
        sys.exit(3)

if __name__ == "__main__":
    main()
'''

# Like /isaac-sim/python.sh: exports (a change, an addition, a removal), then the real python.
WRAPPER = r'''#!/bin/sh
export ISAAC_PATH=/fake/isaac-sim
export CARB_APP_PATH=/fake/isaac-sim/kit
export EXP_PATH=/fake/isaac-sim/apps
export PYTHONPATH="$PYTHONPATH:/fake/isaac-sim/python_packages"
export LD_LIBRARY_PATH="/fake/isaac-sim/kit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LIKE_COLD_CHANGED="by the wrapper"
unset LIKE_COLD_REMOVED
'''


def torch_available():
    return subprocess.run([PYTHON, "-c", "import torch"], capture_output=True,
                          timeout=300).returncode == 0


pytestmark = [
    pytest.mark.skipif(not tvtest.BIN.exists(), reason=f"{tvtest.BIN} does not exist"),
    pytest.mark.skipif(not torch_available(), reason=f"{PYTHON} has no torch"),
]

COMMANDS = {
    "script": ["scripts/train.py"],
    "module": ["-m", "pkg.mod"],
    "package": ["-m", "pkg"],
}
TRAILING = ["--sft-toml", "x.toml", "--", "a=b", "--c", "d e"]


@pytest.fixture
def work(tmp_path):
    """The job's working directory: the worker as a script, as pkg.mod and as pkg/__main__."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for f in ("scripts/train.py", "pkg/mod.py", "pkg/__main__.py"):
        (tmp_path / f).write_text(WORKER)
    return tmp_path


def run_job(work, command, standby, python=PYTHON):
    """One run, its first worker failing once; the attempt-1 record and trainvisor's output."""
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    env = tvtest.base_env(PYTHON_EXEC=python, LIKE_COLD_OUT=out, LIKE_COLD_CHANGED="before",
                          LIKE_COLD_REMOVED="1", PYTHONPATH="/user/lib",
                          LD_LIBRARY_PATH="/user/lib64")
    cmd = [str(tvtest.BIN), "run", "--preflight", "none", "--nproc-per-node", "1",
           "--max-restarts", "1", "--grace-period", "5", "--master-port", str(tvtest.free_port()),
           "--warm-standby", "on" if standby else "off", *command, *TRAILING]
    proc = subprocess.Popen(cmd, env=env, cwd=work, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    output = tvtest.Output(proc, TIMEOUT)
    try:
        if standby:
            output.wait_for(r"local rank 0: warm standby ready")
        while not (out / "rec_0.json").exists():
            assert proc.poll() is None, output.text()
            time.sleep(0.1)
        (out / "go").touch()
        assert proc.wait(timeout=TIMEOUT) == 0
        output.wait_end()  # the reader has everything
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = output.text()
    assert ("rank 0: started from its warm standby" in log) == standby, log
    return json.loads((out / "rec_0.json").read_text()), json.loads(
        (out / "rec_1.json").read_text()), log


# Differ between two runs, whatever starts the worker: each run's port, and its own directory
# (/tmp/trainvisor-XXXXXX: the error, heartbeat and stacks files), replaced by RUN_DIR.
PER_RUN = {"MASTER_PORT"}


def run_dir_replaced(env):
    run_dir = env["TORCHELASTIC_ERROR_FILE"].split("/attempt_")[0]
    return {k: v.replace(run_dir, "RUN_DIR") for k, v in env.items()}
SAME = ("argv", "orig_argv", "name", "file", "path0", "path", "package", "spec", "loader",
        "cached", "globals", "cwd", "nice")


def assert_like_cold(cold, warm):
    for key in SAME:
        assert warm[key] == cold[key], (key, cold[key], warm[key])
    for key in ("env", "c_env"):
        a, b = run_dir_replaced(cold[key]), run_dir_replaced(warm[key])
        diff = {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys()
                if k not in PER_RUN and a.get(k) != b.get(k)}
        assert not diff, (key, diff)
    for rec in (cold, warm):  # os.environ's changes reached the C library's environ
        assert rec["c_env"] == rec["env"]


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_standby_rank_sees_what_a_cold_one_sees(work, kind):
    _, cold, _ = run_job(work, COMMANDS[kind], standby=False)
    gen0, warm, _ = run_job(work, COMMANDS[kind], standby=True)
    assert not cold["torch_imported"] and warm["torch_imported"]
    assert_like_cold(cold, warm)
    # What a cold start looks like (CPython's own `-m`: runpy puts the file in sys.argv[0]).
    target = {"script": "scripts/train.py", "module": "pkg/mod.py", "package": "pkg/__main__.py"}
    if kind == "script":
        assert warm["argv"] == ["scripts/train.py", *TRAILING]
        assert warm["path0"] == str(work / "scripts") and warm["spec"] is None
    else:
        assert warm["argv"] == [str(work / target[kind]), *TRAILING]
        assert warm["path0"] == str(work)
        assert warm["spec"][:3] == [COMMANDS[kind][1] + (".__main__" if kind == "package" else ""),
                                    str(work / target[kind]), "pkg"]
        assert warm["package"] == "pkg"
    assert warm["file"] == str(work / target[kind])
    assert warm["orig_argv"][1:] == ["-u", *COMMANDS[kind], *TRAILING]
    assert gen0["argv"] == warm["argv"]  # generation 0 (cold) too


def wrapper(work, execs):
    path = work / "python.sh"
    path.write_text(WRAPPER + (f'exec {PYTHON} "$@"\n' if execs else f'{PYTHON} "$@" || exit 1\n'))
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("execs", [True, False], ids=["exec", "no-exec"])
def test_an_interpreter_wrappers_exports_reach_a_standby_rank(work, execs):
    py = wrapper(work, execs)
    _, cold, _ = run_job(work, COMMANDS["script"], standby=False, python=py)
    gen0, warm, log = run_job(work, COMMANDS["script"], standby=True, python=py)
    for rec in (gen0, cold, warm):
        assert rec["env"]["ISAAC_PATH"] == "/fake/isaac-sim"
        assert rec["env"]["LIKE_COLD_CHANGED"] == "by the wrapper"
        assert "LIKE_COLD_REMOVED" not in rec["env"] and "LIKE_COLD_REMOVED" not in rec["c_env"]
        assert rec["env"]["PYTHONPATH"] == "/user/lib:/fake/isaac-sim/python_packages"
    assert_like_cold(cold, warm)  # nice too: the wrapper's Python child got its priority back
    # Under Isaac Sim's environment the standby imports nothing: the script starts Kit first.
    assert not warm["torch_imported"]
    said = re.findall(r"warm standbys: the interpreter runs in Isaac Sim's environment "
                      r"\(ISAAC_PATH is set\): the standby imports nothing", log)
    assert len(said) == 1, log


def test_a_script_that_imports_isaaclab_gets_nothing_pre_imported(work):
    script = work / "scripts" / "train.py"
    script.write_text("if False:\n    from isaaclab.app import AppLauncher\n" + WORKER)
    _, warm, log = run_job(work, COMMANDS["script"], standby=True)
    assert not warm["torch_imported"]
    assert "scripts/train.py imports isaaclab: the standby imports nothing" in log, log
