"""scripts/check_layering.py: the tree passes, and a forbidden include is caught."""
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


def test_topology_including_supervision_is_caught(tmp_path):
    root = copy_modules(tmp_path)
    add_include(root, "launcher/topology/topology.cc", "launcher/supervision/supervisor.h")
    r = check(root)
    assert r.returncode == 1
    assert "launcher/topology/topology.cc:1: launcher/topology may not include " \
           "launcher/supervision/supervisor.h" in r.stdout


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
    add_include(root, "launcher/supervision/supervisor.cc", "launcher/plan/run_plan.h")
    r = check(root)
    assert r.returncode == 1
    assert "launcher/plan may not include cli/commands.h" in r.stdout
    assert "launcher/supervision may not include launcher/plan/run_plan.h" in r.stdout
