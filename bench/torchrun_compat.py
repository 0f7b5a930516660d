#!/usr/bin/python3
"""Run Debian 12's torchrun (torch 1.13, /usr/lib/python3/dist-packages) on Python 3.11.

torch 1.13's ``Std.from_str("0")`` looks the value up by iterating over the ``Std`` IntFlag, and
since Python 3.11 iterating a Flag skips its zero member (``Std.NONE``), so the default
``--redirects 0`` / ``--tee 0`` turn into ``None`` and torchrun crashes before starting a worker.
This wrapper replaces ``from_str`` with a version that builds members by value, then calls
``torch.distributed.run.main()`` with the command line unchanged.

Usage (torchrun 1.13 spells its flags with underscores):
    /usr/bin/python3 bench/torchrun_compat.py --standalone --nproc_per_node 2 train.py
    /usr/bin/python3 bench/torchrun_compat.py --nproc_per_node 4 --no_python /bin/true
"""
import re
import sys

from torch.distributed.elastic.multiprocessing import api as mp_api


def _std_from_str(cls, vm):
    """Std.from_str as torch documents it: "0" -> Std.NONE, "0:3,1:0" -> {0: ALL, 1: NONE}."""
    if re.match(mp_api._VALUE_REGEX, vm):
        return cls(int(vm))
    if re.match(mp_api._MAPPING_REGEX, vm):
        return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError(f"{vm} does not match: <{mp_api._VALUE_REGEX}> or <{mp_api._MAPPING_REGEX}>")


def patch():
    """Applies the fix only where it is needed (Std.from_str("0") is not Std.NONE)."""
    if mp_api.Std.from_str("0") is not mp_api.Std.NONE:
        mp_api.Std.from_str = classmethod(_std_from_str)


def main():
    patch()
    from torch.distributed.run import main as torchrun_main

    sys.argv[0] = "torchrun"
    torchrun_main()


if __name__ == "__main__":
    main()
