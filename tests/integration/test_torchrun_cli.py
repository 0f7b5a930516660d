"""Differential: every option of torchrun's parser is accepted by `trainvisor run` with the same
meaning (checked in the worker's argv/environment) or refused with a message naming it.

Two parsers: the installed torch's (`torch.distributed.run.get_args_parser()`, iterated action by
action: an option this file does not know fails the test), and torch 2.11's option names,
transcribed from torch/distributed/run.py get_args_parser at pytorch/pytorch
010929fd3f401c3868310396e6a91ed95aa0305b, spelt with dashes and `--opt=value`."""
import subprocess

import pytest

from tvtest import PYTHON, base_env, free_port
from torchrun_cli import recorder, records, run

TORCH_211 = [  # (dest, the option strings run.py gives it)
    ("nnodes", ["--nnodes"]), ("nproc_per_node", ["--nproc-per-node", "--nproc_per_node"]),
    ("rdzv_backend", ["--rdzv-backend", "--rdzv_backend"]),
    ("rdzv_endpoint", ["--rdzv-endpoint", "--rdzv_endpoint"]),
    ("rdzv_id", ["--rdzv-id", "--rdzv_id"]), ("rdzv_conf", ["--rdzv-conf", "--rdzv_conf"]),
    ("standalone", ["--standalone"]), ("max_restarts", ["--max-restarts", "--max_restarts"]),
    ("monitor_interval", ["--monitor-interval", "--monitor_interval"]),
    ("start_method", ["--start-method", "--start_method"]),
    ("event_log_handler", ["--event-log-handler", "--event_log_handler"]),
    ("role", ["--role"]), ("module", ["-m", "--module"]),
    ("no_python", ["--no-python", "--no_python"]), ("run_path", ["--run-path", "--run_path"]),
    ("log_dir", ["--log-dir", "--log_dir"]), ("redirects", ["-r", "--redirects"]),
    ("tee", ["-t", "--tee"]),
    ("local_ranks_filter", ["--local-ranks-filter", "--local_ranks_filter"]),
    ("node_rank", ["--node-rank", "--node_rank"]),
    ("master_addr", ["--master-addr", "--master_addr"]),
    ("master_port", ["--master-port", "--master_port"]),
    ("local_addr", ["--local-addr", "--local_addr"]),
    ("logs_specs", ["--logs-specs", "--logs_specs"]),
    ("numa_binding", ["--numa-binding", "--numa_binding"]),
    ("signals_to_handle", ["--signals-to-handle", "--signals_to_handle"]),
]


def env_is(name, want):
    def check(recs, tmp):
        assert {r["env"].get(name) for r in recs.values()} == {want(tmp) if callable(want) else want}
    return check


def world(n):
    def check(recs, tmp):
        assert sorted(recs) == list(range(n))
        assert {r["env"]["WORLD_SIZE"] for r in recs.values()} == {str(n)}
    return check


def logs_written(recs, tmp):
    assert any((tmp / "logs").rglob("*")), "no per-rank log under --log-dir"


PORT = free_port()

# dest -> ("accept", value or None, check of the records) | ("refuse", value)
CASES = {
    "nnodes": ("accept", "1", world(1)),
    "nproc_per_node": ("accept", "2", world(2)),
    "rdzv_backend": ("accept", "c10d", world(1)),
    "rdzv_endpoint": ("accept", "127.0.0.1", env_is("MASTER_ADDR", "127.0.0.1")),
    "rdzv_id": ("accept", "diff-job", env_is("TORCHELASTIC_RUN_ID", "diff-job")),
    "rdzv_conf": ("accept", "join_timeout=30,last_call_timeout=1", world(1)),
    "standalone": ("accept", None, world(1)),
    "max_restarts": ("accept", "2", env_is("TORCHELASTIC_MAX_RESTARTS", "2")),
    "monitor_interval": ("accept", "1", world(1)),
    "start_method": ("accept", "spawn", world(1)),
    "event_log_handler": ("refuse", "console"),
    "role": ("accept", "trainer", env_is("ROLE_NAME", "trainer")),
    "module": ("accept", None, world(1)),
    "no_python": ("accept", None, world(1)),
    "run_path": ("accept", None, world(1)),
    "log_dir": ("accept", "{tmp}/logs", logs_written),
    "redirects": ("refuse", "3"),
    "tee": ("refuse", "3"),
    "local_ranks_filter": ("refuse", "0"),
    "node_rank": ("accept", "0", env_is("GROUP_RANK", "0")),
    "master_addr": ("accept", "127.0.0.1", env_is("MASTER_ADDR", "127.0.0.1")),
    "master_port": ("accept", str(PORT), env_is("MASTER_PORT", str(PORT))),
    "local_addr": ("refuse", "127.0.0.1"),
    "logs_specs": ("refuse", "custom"),
    "numa_binding": ("refuse", "node"),
    "signals_to_handle": ("refuse", "SIGUSR1"),
}


def installed_parser_options():
    code = ("import json, torch.distributed.run as r\n"
            "print(json.dumps([[a.dest, a.option_strings] for a in r.get_args_parser()._actions"
            " if a.option_strings and a.dest != 'help']))")
    proc = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=120)
    if proc.returncode:
        pytest.skip(f"{PYTHON} has no torch.distributed.run: {proc.stderr[-300:]}")
    import json
    return [tuple(x) for x in json.loads(proc.stdout)]


def command(dest, script, tmp):
    """The worker part of the line: -m takes a module, --no_python an executable file."""
    if dest == "module":
        return [script.stem]
    return [script]


def check_option(tmp_path, dest, spelling, equals):
    assert dest in CASES, f"torchrun option {spelling} ({dest}) is not covered: add it to CASES"
    kind, value, *check = CASES[dest]
    value = value.format(tmp=tmp_path) if value else value
    script, out = recorder(tmp_path)
    if value is None:
        opt = [spelling]
    elif equals and spelling.startswith("--"):
        opt = [f"{spelling}={value}"]
    else:
        opt = [spelling, value]
    env = base_env(TV_RECORD_DIR=out, PYTHONPATH=tmp_path)
    proc = run(tmp_path, [*opt, *command(dest, script, tmp_path), "--lr", "3e-4"], env=env)
    said = proc.stdout + proc.stderr
    if kind == "refuse":
        assert proc.returncode in (64, 78), f"{opt}: expected a refusal, exit {proc.returncode}"
        names = {spelling, spelling.replace("_", "-"), "--" + dest.replace("_", "-")}
        assert any(n in said for n in names), f"{opt}: refusal does not name it:\n{said}"
        assert not list(out.iterdir()), f"{opt}: refused, yet a worker ran"
        return
    assert proc.returncode == 0, f"{opt}: exit {proc.returncode}:\n{said[-2000:]}"
    recs = records(out)
    assert recs, f"{opt}: no worker record"
    assert {tuple(r["argv"]) for r in recs.values()} == {("--lr", "3e-4")}
    check[0](recs, tmp_path)


def test_every_option_of_the_installed_torchrun(tmp_path_factory):
    options = installed_parser_options()
    assert len(options) >= 15, options
    for dest, strings in options:
        check_option(tmp_path_factory.mktemp(dest), dest, strings[-1], equals=False)


@pytest.mark.parametrize("dest,strings", TORCH_211, ids=[d for d, _ in TORCH_211])
def test_torch_2_11_option_names(tmp_path, dest, strings):
    long_form = [s for s in strings if s.startswith("--")][0]  # -r/-t: test_short_value_...
    check_option(tmp_path, dest, long_form, equals=True)


def test_short_value_options_are_named_not_run(tmp_path):
    script, out = recorder(tmp_path)
    for short in ("-r", "-t"):
        proc = run(tmp_path, [short, "3", script], env=base_env(TV_RECORD_DIR=out))
        assert proc.returncode == 64 and short in proc.stderr, proc.stderr
    assert not list(out.iterdir())
