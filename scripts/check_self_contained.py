#!/usr/bin/env python3
"""The test suite needs nothing outside the repository.

A user's clone has only the repository: no project fixtures beside it. This prints every line of
a test, script or CMake file that names the project's shared folder (a parent-relative or an
absolute one, or a path built from its parts) or the seeds' fixture folder, with where it is,
and exits 1 when there is one. What the tests need lives in tests/data/ (tests/data/seeds/,
tests/data/k8s/, tests/data/nccl/), which is not scanned: the copied files are as published.

Scanned: tests/ (but tests/data/), scripts/, bench/, .ci/, every CMakeLists.txt, *.cmake and
Dockerfile that git sees. Comments and docstrings count: a path kept in one comes back in code.

usage: check_self_contained.py [REPO_ROOT]   (CTest: the entry `self_contained`;
tests/integration/test_check_self_contained.py shows that it catches an offender)
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])

SCANNED_DIRS = ("tests/", "scripts/", "bench/", ".ci/")
NOT_SCANNED = ("tests/data/",)
SCANNED_NAMES = ("CMakeLists.txt", "Dockerfile")
# Each pattern spelled in pieces, so that this file does not name what it looks for.
SHARED = "shar" + "ed"
OFFENDERS = [
    (re.compile(r"\.\./" + SHARED + r"\b"), "a parent-relative shared folder"),
    (re.compile(r"/work/" + SHARED + r"\b"), "the absolute shared folder"),
    (re.compile(r"fixtures/" + "seeds"), "the seeds' fixture folder"),
    # The folder as Python builds it: SRC.parent / NAME, os.path.join(SRC, "..", NAME), NAME / "fixtures"
    (re.compile(r"\.parent\s*/\s*[\"']" + SHARED + r"[\"']"), "a parent-relative shared folder"),
    (re.compile(r"[\"']\.\.[\"']\s*,\s*[\"']" + SHARED + r"[\"']"), "a parent-relative shared folder"),
    (re.compile(r"[\"']" + SHARED + r"[\"']\s*[/,]\s*[\"']fixtures[\"']"), "the shared fixtures"),
]


def scanned():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    for f in out:
        if not f or f.startswith(NOT_SCANNED) or not (ROOT / f).is_file():
            continue
        name = f.rsplit("/", 1)[-1]
        if f.startswith(SCANNED_DIRS) or name in SCANNED_NAMES or name.endswith(".cmake"):
            yield f


def offences(rel):
    try:
        text = (ROOT / rel).read_text()
    except (UnicodeDecodeError, OSError):
        return
    for n, line in enumerate(text.splitlines(), 1):
        for pattern, what in OFFENDERS:
            m = pattern.search(line)
            if m:
                yield f"{rel}:{n}: {m.group(0)} ({what}: not in a user's clone; copy the file into tests/data/)"
                break


def main():
    found = [o for rel in sorted(scanned()) for o in offences(rel)]
    for o in found:
        print(o)
    if found:
        print(f"{len(found)} line(s) read files from outside the repository", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
