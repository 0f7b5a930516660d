#!/usr/bin/env python3
"""Every repository path named in a comment or a document exists.

Scans the comments of C++/CMake/shell/Python sources and every Markdown file for words that
name a path inside the repository (they start with one of its top-level folders, or a doc links
to a file beside it) and prints each one that does not exist, with where it was named. Exit 1
when there is one. Placeholders (<module>, *, {}, ...) are not paths and are skipped.

usage: check_paths.py [REPO_ROOT]   (CTest: the entry `paths`)
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.|/x\.h$")
# Paths of other repositories that the docs quote (Isaac Lab's training scripts, Diffusers' examples):
# not ours.
EXTERNAL = ("scripts/reinforcement_learning/", "examples/text_to_image/")
SKIP_DIRS = ("third_party/", "build")
COMMENT = {".cc": "//", ".h": "//", ".cpp": "//", ".py": "#", ".sh": "#", ".txt": "#",
           ".cmake": "#", ".yml": "#", ".yaml": "#"}


def tracked():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return [f for f in out if f and not f.startswith(SKIP_DIRS) and (ROOT / f).is_file()]


FILES = tracked()
# A path: a top-level folder of the repository (one that holds files git sees: not build/), then
# path characters.
TOP = sorted({f.split("/")[0] for f in FILES if "/" in f})
PATH = re.compile(r"(?<![\w./-])((?:%s)/[^\s`'\"()\[\],;|]*)" % "|".join(map(re.escape, TOP)))


def comment_text(path, text):
    """The comment part of each line."""
    marker = COMMENT.get(path.suffix) or ("#" if path.name in ("CMakeLists.txt", "Dockerfile")
                                          else None)
    if marker is None:
        return []
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        i = line.find(marker)
        if i >= 0:
            lines.append((n, line[i:]))
    return lines


def exists(word, base):
    word = word.split("::")[0].rstrip(".:,;)")  # a pytest node id names its file
    if not word or PLACEHOLDER.search(word) or word.startswith(EXTERNAL):
        return True
    for candidate in (ROOT / word, base / word):
        if candidate.exists():
            return True
    return False


def main():
    missing = []
    for rel in FILES:
        path = ROOT / rel
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        if path.suffix == ".md":
            lines = list(enumerate(text.splitlines(), 1))
        else:
            lines = comment_text(path, text)
        for n, line in lines:
            words = [m.group(1) for m in PATH.finditer(line)]
            if path.suffix == ".md":
                words += [w for w in LINK.findall(line) if "://" not in w and not w.startswith("mailto:")]
            for w in words:
                if not exists(w, path.parent):
                    missing.append(f"{rel}:{n}: {w.rstrip('.:,;)')} does not exist")
    for m in missing:
        print(m)
    if missing:
        print(f"{len(missing)} path(s) named in comments or docs do not exist", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
