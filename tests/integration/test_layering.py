"""scripts/check_layering.py: the tree passes, and a forbidden include is caught."""
import re
import shutil
import subprocess
import sys

import tvtest

SRC = tvtest.SOURCE_DIR
CHECK = SRC / "scripts" / "check_layering.py"


def check(root):
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)


def copy_modules(tmp_path):
    for m in ("common", "checkpoint", "health", "launcher", "cli"):
        shutil.copytree(SRC / m, tmp_path / m)
    return tmp_path


def test_the_tree_keeps_the_layering():
    r = check(SRC)
    assert r.returncode == 0, r.stdout


def add_include(root, file, header):
    p = root / file
    p.write_text(f'#include "{header}"\n' + p.read_text())


def test_topology_including_node_is_caught(tmp_path):
    root = copy_modules(tmp_path)
    add_include(root, "launcher/topology/topology.cc", "launcher/node/supervisor.h")
    r = check(root)
    assert r.returncode == 1
    assert "launcher/topology/topology.cc:1: launcher/topology may not include " \
           "launcher/node/supervisor.h" in r.stdout


def test_health_including_launcher_is_caught(tmp_path):
    root = copy_modules(tmp_path)
    add_include(root, "health/preflight.cc", "launcher/topology/topology.h")
    assert check(root).returncode == 1


def test_a_module_including_cli_is_caught(tmp_path):
    root = copy_modules(tmp_path)
    add_include(root, "checkpoint/discovery.cc", "cli/commands.h")
    r = check(root)
    assert r.returncode == 1 and "cli/commands.h" in r.stdout


def test_plan_including_cli_and_a_module_including_plan_are_caught(tmp_path):
    root = copy_modules(tmp_path)
    add_include(root, "launcher/plan/run_rules.cc", "cli/commands.h")
    add_include(root, "launcher/node/supervisor.cc", "launcher/plan/run_plan.h")
    r = check(root)
    assert r.returncode == 1
    assert "launcher/plan may not include cli/commands.h" in r.stdout
    assert "launcher/node may not include launcher/plan/run_plan.h" in r.stdout


def test_workers_including_node_and_job_including_workers_are_caught(tmp_path):
    root = copy_modules(tmp_path)
    add_include(root, "launcher/workers/worker_group.cc", "launcher/node/node_run.h")
    add_include(root, "launcher/job/job_state.cc", "launcher/workers/spawner.h")
    add_include(root, "launcher/rendezvous/membership.cc", "launcher/workers/spawner.h")
    r = check(root)
    assert r.returncode == 1
    assert "launcher/workers may not include launcher/node/node_run.h" in r.stdout
    assert "launcher/job may not include launcher/workers/spawner.h" in r.stdout
    assert "launcher/rendezvous may not include launcher/workers/spawner.h" in r.stdout


# docs/architecture.md, "Decisions and their one owner": an error carries an ErrorKind and only
# common/exit_codes.h maps a kind to an exit code. No other product file names a code: not
# through a constant of its own (exit_code::kConfig was one, in 77 files), nor an Error built
# from a number.
PRODUCT = ("common", "checkpoint", "health", "render", "launcher", "cli")
NAMED_CODE = re.compile(r"exit_code::k(?!Ok\b)\w+|\bError\{\s*-?\d")


def product_files(root):
    for m in PRODUCT:
        for f in sorted((root / m).rglob("*")):
            if f.suffix in (".h", ".cc") and f.is_file():
                yield f


def named_codes(root):
    for f in product_files(root):
        rel = f.relative_to(root).as_posix()
        if rel == "common/exit_codes.h":
            continue
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if NAMED_CODE.search(line):
                yield f"{rel}:{n}: {line.strip()}"


def test_only_exit_codes_h_maps_an_error_to_a_code():
    found = list(named_codes(SRC))
    assert not found, "\n".join(found)


def test_a_code_named_outside_exit_codes_h_is_caught(tmp_path):
    root = copy_modules(tmp_path)
    add_include(root, "launcher/node/node_run.cc", "common/exit_codes.h")
    p = root / "launcher/node/node_run.cc"
    p.write_text(p.read_text() + "\nint x() { return tv::exit_code::kConfig; }\n")
    q = root / "cli/run_command.cc"
    q.write_text(q.read_text() + "\ntv::Error y() { return tv::Error{78, \"bad\"}; }\n")
    found = list(named_codes(root))
    assert any(f.startswith("launcher/node/node_run.cc:") for f in found), found
    assert any(f.startswith("cli/run_command.cc:") for f in found), found
