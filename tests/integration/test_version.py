"""`trainvisor version` against the real binary."""
import json
import os
import re
import subprocess

import tvtest

BIN = str(tvtest.BIN)


def test_version_lists_libraries():
    r = subprocess.run([BIN, "version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("trainvisor ")
    for word in ("cuda driver", "nccl", "libfabric", "net plugin"):
        assert word in r.stdout


def test_version_json_libfabric_is_the_loaded_one():
    r = subprocess.run([BIN, "version", "--json"], capture_output=True, text=True, timeout=120)
    j = json.loads(r.stdout)
    assert j["trainvisor"]
    if "path" in j["libfabric"]:
        assert os.path.exists(j["libfabric"]["path"])
        assert j["libfabric"]["version"].count(".") == 1


def test_dash_dash_version():
    r = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("trainvisor ")


def cmake_project_version():
    text = open(os.path.join(tvtest.SOURCE_DIR, "CMakeLists.txt")).read()
    return re.search(r"project\(trainvisor VERSION ([0-9.]+)", text).group(1)


def test_version_is_the_one_cmake_knows():
    r = subprocess.run([BIN, "version", "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(r.stdout)["trainvisor"] == cmake_project_version()
    r = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines()[0] == "trainvisor " + cmake_project_version()
