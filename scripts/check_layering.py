#!/usr/bin/env python3
"""Fails on an #include that crosses the module layering (docs/architecture.md, "Modules").

Usage: check_layering.py [ROOT]   (ROOT: the source tree, default: this script's repository)

Each module may include its own headers and those of the modules listed for it below; any other
project include is reported as FILE:LINE: MODULE may not include TARGET (allowed: ...), and the
exit status is 1. System and third-party headers (<...>) are not checked.
"""
import pathlib
import re
import sys

# module folder -> the modules it may include (besides itself)
ALLOWED = {
    "common": [],
    "checkpoint": ["common"],
    "health": ["common"],
    "launcher/topology": ["common"],
    # what the whole job decides (job state, root-cause judge, culprit, the Cluster interface)
    "launcher/job": ["common"],
    # the worker processes, their roster, standbys, spawner and evidence
    "launcher/workers": ["common", "launcher/job"],
    # this node's run (NodeRun), the Supervisor adapter and the node's owners
    "launcher/node": ["common", "launcher/job", "launcher/workers"],
    "launcher/rendezvous": ["common", "launcher/job"],
    "launcher/observability": ["common"],
    # composes the other modules' types into run's plan; none of them includes it (no cycle)
    "launcher/plan": ["common", "checkpoint", "health", "launcher/topology", "launcher/job",
                      "launcher/workers", "launcher/node", "launcher/rendezvous",
                      "launcher/observability"],
    # run's steps and the observers it wires: every module but render and cli
    "launcher/run": ["common", "checkpoint", "health", "launcher/topology", "launcher/job",
                     "launcher/workers", "launcher/node", "launcher/rendezvous",
                     "launcher/observability", "launcher/plan"],
    "render": ["common"],
    "cli": ["common", "checkpoint", "health", "launcher/topology", "launcher/job",
            "launcher/workers", "launcher/node", "launcher/rendezvous", "launcher/observability",
            "launcher/plan", "launcher/run", "render", "cli"],
}
# Longest prefix first, so launcher/topology/x.h is launcher/topology, not launcher.
MODULES = sorted(ALLOWED, key=len, reverse=True)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def module_of(path: str):
    for m in MODULES:
        if path == m or path.startswith(m + "/"):
            return m
    return None


def violations(root: pathlib.Path):
    for m in ALLOWED:
        folder = root / m
        if not folder.is_dir():
            continue
        for f in sorted(folder.rglob("*")):
            if f.suffix not in (".h", ".cc") or not f.is_file():
                continue
            rel = f.relative_to(root).as_posix()
            if module_of(rel) != m:
                continue  # a nested module's file is checked under its own module
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                hit = INCLUDE.match(line)
                if not hit:
                    continue
                target = module_of(hit.group(1))
                if target is None and hit.group(1).startswith("launcher/"):
                    target = "launcher"  # a header at launcher/ top level: no module owns it
                if target is None or target == m or target in ALLOWED[m]:
                    continue
                allowed = ", ".join(ALLOWED[m]) or "none"
                yield f"{rel}:{n}: {m} may not include {hit.group(1)} (allowed: {allowed})"


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    found = list(violations(root))
    for v in found:
        print(v)
    if found:
        print(f"check_layering: {len(found)} include(s) cross the module layering")
        return 1
    print("check_layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
