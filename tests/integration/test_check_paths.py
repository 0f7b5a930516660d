"""scripts/check_paths.py: the tree passes, and a moved file named in a comment or a doc is
caught, with where it was named; placeholders and pytest node ids are not refused."""
import subprocess
import sys

import tvtest

SRC = tvtest.SOURCE_DIR
CHECK = SRC / "scripts" / "check_paths.py"
MOVED = "tests" + "/moved.py"  # spelled apart: this file's own comments are checked too


def check(root):
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)


def repo(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_the_tree_names_only_paths_that_exist():
    r = check(SRC)
    assert r.returncode == 0, r.stdout


def test_a_moved_file_named_in_a_comment_or_a_doc_is_caught(tmp_path):
    root = repo(tmp_path, {
        "common/a.h": "// Uses common/b.h and common/a.*, see launcher/<module>/x.\n",
        "common/b.h": "int x = 1;  // moved: common/gone.h\n",
        "docs/d.md": "[b](e.md), `tests/t.py::test_x` and `tests/t.py`\n",
        "tests/t.py": "# " + MOVED + " is gone\n",
    })
    r = check(root)
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        "common/b.h:1: common/gone.h does not exist",
        "docs/d.md:1: e.md does not exist",
        f"tests/t.py:1: {MOVED} does not exist",
    ], r.stdout
