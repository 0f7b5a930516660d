"""The docs' examples, run as written: every command of a fenced `sh` or `console` block in
README.md and docs/**/*.md is extracted and, where it can run on a CPU host, run with the
binary under test as `trainvisor`, so a doc cannot drift from the binary.

The conventions (also named in tests/README.md):
- `sh` block: each command (continuation lines joined, comments dropped) must exit 0.
- `console` block: `$ CMD` lines are commands; the lines after one, up to the next `$ `, are its
  output (stdout and stderr together), compared line by line. In the shown output `...` stands
  for any text within a line, a line of only `...` for any number of lines, and a run of spaces
  for one or more spaces (columns may widen). `$ echo $?` shows an exit code.
- The commands of one block run in order in one fresh directory; an `export` or `cd` line holds
  for the block's later commands, as in the reader's shell.
- `<!-- example: skip (WHY) -->` on the line before a block: none of its commands is run.
- `<!-- example: files NAME=PATH ... -->` before a block: the repository's PATH is copied to NAME
  in the block's directory first (`job.json=examples/render/cosmos3-hyperpod.json`); a bare PATH
  is copied to the same relative path.
- Not run, by rule (NOT_ON_A_CPU_HOST below): commands of other tools that need a cluster, a
  cloud account or a container runtime (aws, kubectl, sbatch, podman, ...), and fragments (a
  `...` word stands for the rest of a line).
Each runs through bash with a clean environment (no platform variables of the machine running
the tests) and `trainvisor` on PATH as the binary under test.
"""
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import tvtest

SRC = tvtest.SOURCE_DIR
DOCS = [SRC / "README.md"] + sorted((SRC / "docs").rglob("*.md"))
TIMEOUT_S = 600  # guards against a hang only (the DDP example imports torch on 2 shared cores)

NOT_ON_A_CPU_HOST = {
    "aws": "needs an AWS account",
    "kubectl": "needs a Kubernetes cluster",
    "sbatch": "needs a Slurm cluster",
    "srun": "needs a Slurm cluster",
    "podman": "builds an image: needs a container runtime and the network",
    "docker": "needs a container runtime and a GPU image",
    "torchrun": "torchrun's own line, shown beside trainvisor's",
    "/isaac-sim/python.sh": "needs Isaac Sim's image",
}
SKIP = re.compile(r"<!--\s*example:\s*skip\s*\((.+?)\)\s*-->")
FILES = re.compile(r"<!--\s*example:\s*files\s+(.+?)\s*-->")


@dataclass
class Command:
    where: str  # FILE:LINE
    text: str
    output: list = None  # the lines shown after it (console blocks), else None
    skip: str = ""


@dataclass
class Block:
    where: str
    commands: list = field(default_factory=list)
    files: dict = field(default_factory=dict)


def strip_comment(line):
    """The line without a trailing `# comment` (a # at a word start, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def joined(lines, start):
    """One command from lines[start:], backslash continuations joined: (text, next index)."""
    text, i = "", start
    while i < len(lines):
        line = strip_comment(lines[i]).strip()
        i += 1
        if line.endswith("\\"):
            text += line[:-1].rstrip() + " "
            continue
        return (text + line).strip(), i
    return text.strip(), i


def sh_commands(body, where):
    out, i = [], 0
    while i < len(body):
        first = i
        text, i = joined(body, i)
        if text:
            out.append(Command(f"{where}+{first + 1}", text))
    return out


def console_commands(body, where):
    out, i = [], 0
    while i < len(body):
        if not body[i].startswith("$ "):
            i += 1
            continue
        first = i
        text, i = joined([body[i][2:]] + body[i + 1:], 0)
        i = first + i
        shown = []
        while i < len(body) and not body[i].startswith("$ "):
            shown.append(body[i])
            i += 1
        while shown and not shown[-1].strip():
            shown.pop()
        out.append(Command(f"{where}+{first + 1}", text, shown))
    return out


def blocks(path):
    lines = path.read_text().splitlines()
    rel = path.relative_to(SRC)
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while not lines[end].startswith("```"):
            end += 1
        if m.group(1) in ("sh", "console"):
            before = lines[i - 1] if i else ""
            where = f"{rel}:{i + 1}"
            parse = sh_commands if m.group(1) == "sh" else console_commands
            b = Block(where, parse(lines[i + 1:end], where))
            if s := SKIP.search(before):
                for c in b.commands:
                    c.skip = s.group(1)
            if f := FILES.search(before):
                b.files = dict((w.split("=", 1) if "=" in w else (w, w)) for w in f.group(1).split())
            yield b
        i = end + 1


def rule_skip(text):
    words = shlex.split(text, comments=False, posix=True) if text else []
    while words and (words[0] == "exec" or re.match(r"^\w+=", words[0])):
        words.pop(0)
    if not words:
        return "not a command"
    if words[0] in NOT_ON_A_CPU_HOST:
        return f"{words[0]}: {NOT_ON_A_CPU_HOST[words[0]]}"
    if "..." in words:
        return "a fragment (`...` stands for the rest)"
    return ""


ALL = [b for doc in DOCS for b in blocks(doc)]
for _b in ALL:
    for _c in _b.commands:
        _c.skip = _c.skip or rule_skip(_c.text)


def line_pattern(line):
    """`...` = any text, a run of spaces = one or more spaces, the rest literally."""
    out = []
    for part in re.split(r"(\.\.\.| +)", line):
        out.append(".*?" if part == "..." else " +" if part.startswith(" ") and part.strip() == ""
                   else re.escape(part))
    return "".join(out)


def output_matches(shown, got):
    pattern = "".join("(?:.*\n)*?" if s.strip() == "..." else line_pattern(s) + "\n"
                      for s in shown)
    text = got if got.endswith("\n") or not got else got + "\n"
    return re.fullmatch(pattern, text) is not None


@pytest.fixture(scope="module")
def bindir(tmp_path_factory):
    d = tmp_path_factory.mktemp("bin")
    (d / "trainvisor").symlink_to(tvtest.BIN)
    return d


def environment(bindir, home):
    return {"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            tvtest.MARKER: tvtest.SESSION}


def run_block(block, bindir, tmp_path):
    for name, rel in block.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SRC / rel, tmp_path / name)
    results, prelude = [], []
    for c in block.commands:
        if c.skip:
            results.append((c, None))
            continue
        p = subprocess.run(["bash", "-c", "\n".join(prelude + [c.text])], cwd=tmp_path,
                           env=environment(bindir, tmp_path), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S)
        results.append((c, p))
        if c.text.split()[0] in ("export", "cd"):  # what the shell of the doc keeps
            prelude.append(c.text)
    return results


def check(c, p):
    if c.output is None:
        assert p.returncode == 0, f"{c.where}: `{c.text}` exited {p.returncode}:\n{p.stdout[-3000:]}"
        return
    assert output_matches(c.output, p.stdout), (
        f"{c.where}: `{c.text}` printed\n{p.stdout}\nwhere the doc shows\n" + "\n".join(c.output))


RUNNABLE = [b for b in ALL if any(not c.skip for c in b.commands)]


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.where for b in RUNNABLE])
def test_doc_example_runs_as_written(block, bindir, tmp_path):
    for c, p in run_block(block, bindir, tmp_path):
        if p is not None:
            check(c, p)


def test_every_command_is_run_or_says_why_not(capsys):
    commands = [c for b in ALL for c in b.commands]
    run = [c for c in commands if not c.skip]
    shown = [c for c in run if c.output is not None]
    with capsys.disabled():
        print(f"\ndoc examples: {len(commands)} commands in {len(ALL)} sh/console blocks, "
              f"{len(run)} run, {len(shown)} with their output checked")
        for c in commands:
            if c.skip:
                print(f"  not run: {c.where}: {c.text[:60]} ({c.skip})")
    assert len(commands) >= 40 and len(run) >= 15, (len(commands), len(run))
    assert all(c.skip.strip() for c in commands if c.skip)


# The matcher itself: a doc that drifted must fail, a placeholder must not.
def test_the_output_check_catches_drift():
    assert output_matches(["master_port     21554   default, ... (env SLURM_JOB_ID)"],
                          "master_port     21554                     default, derived (env SLURM_JOB_ID)\n")
    assert not output_matches(["master_port     29500   default"], "master_port     21554   default\n")
    assert not output_matches(["NCCL_SOCKET_IFNAME  eth0"], "NCCL_SOCKET_IFNAMEeth0\n")
    assert output_matches(["first", "...", "last"], "first\na\nb\nlast\n")
    assert not output_matches(["first", "last"], "first\nextra\nlast\n")
    assert sh_commands(["a \\", "  b # note", "", "# only a comment", "c '#x'"], "f") == [
        Command("f+1", "a b"), Command("f+5", "c '#x'")]
    assert rule_skip("exec torchrun --nnodes 2 train.py").startswith("torchrun")
    assert rule_skip("trainvisor run train.py ...").startswith("a fragment")
