"""scripts/check_self_contained.py: the tree passes, and a test, a script or a CMake file that
reads the project's fixtures from beside the clone is caught, with where it is; the copies in
tests/data/ and files outside the scanned folders are not refused."""
import subprocess
import sys

import tvtest

SRC = tvtest.SOURCE_DIR
CHECK = SRC / "scripts" / "check_self_contained.py"
SHARED = "shar" + "ed"  # spelled apart: this file is scanned too


def check(root):
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)


def repo(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_the_tree_reads_nothing_from_outside_the_repository():
    r = check(SRC)
    assert r.returncode == 0, r.stdout


def test_each_way_of_reaching_the_fixtures_beside_the_clone_is_caught(tmp_path):
    root = repo(tmp_path, {
        "tests/integration/test_a.py":
            f'CRD = SRC.parent / "{SHARED}" / "fixtures" / "k8s" / "crd.yaml"\nok = 1\n',
        "tests/integration/test_b.py":
            f'SEED = os.path.join(SRC, "../{SHARED}/x.json")\n'
            f'S = os.path.join(SRC, "..", "{SHARED}", "x")\n',
        "scripts/run.sh": f"# seeds: /work/{SHARED}/fixtures/nccl\n",
        "cmake/deps.cmake": "set(SEEDS ${CMAKE_SOURCE_DIR}/fixtures/" + "seeds)\n",
        "tests/data/seeds/README.md": f"copied from ../{SHARED}/fixtures/" + "seeds\n",
        "tests/data/copy.sh": f"cat ../{SHARED}/x\n",
        "docs/d.md": f"The seeds are in ../{SHARED}/fixtures/" + "seeds.\n",
        "common/a.cc": "int x = 1;\n",
    })
    r = check(root)
    assert r.returncode == 1
    assert [line.split(" (")[0] for line in r.stdout.splitlines()] == [
        "cmake/deps.cmake:1: fixtures/" + "seeds",
        f"scripts/run.sh:1: /work/{SHARED}",
        f'tests/integration/test_a.py:1: .parent / "{SHARED}"',
        f"tests/integration/test_b.py:1: ../{SHARED}",
        f'tests/integration/test_b.py:2: "..", "{SHARED}"',
    ], r.stdout
    assert "copy the file into tests/data/" in r.stdout
    assert "5 line(s)" in r.stderr


def test_a_clean_repository_passes(tmp_path):
    root = repo(tmp_path, {"tests/integration/test_a.py": 'DATA = SRC / "tests" / "data"\n',
                           "CMakeLists.txt": "add_library(x SHARED x.cc)\n"})
    r = check(root)
    assert r.returncode == 0 and r.stdout == "", r.stdout
