#!/usr/bin/env python3
"""The worker environment of `trainvisor run` beside torchrun's, on the torch this python imports
(the H200 machine's torch 2.11; docs/torchrun.md, "The environment").

Runs `python -m torch.distributed.run` and `trainvisor run` with the same one-node, two-worker
command line and a script that dumps os.environ, then prints, per variable either launcher set
or changed: torchrun's value, trainvisor's value, and whether they agree. Exit 0 when the names
are the same and every value agrees but the documented differences.

    python3 bench/torch_env_diff.py [--trainvisor PATH]      (default: .device/trainvisor)
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

DUMP = "import json, os, sys\nopen(os.path.join(sys.argv[1], os.environ['RANK'] + '.json'), 'w')" \
       ".write(json.dumps(dict(os.environ)))\n"
# Documented differences (docs/torchrun.md): per attempt / per run values, not contract.
DIFFERENT_BY_DESIGN = {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_ERROR_FILE",
                       "TORCHELASTIC_USE_AGENT_STORE"}
# Set by trainvisor only, on purpose: the flight recorder and the stacks hook (evidence on a hang,
# docs/supervision.md); a user's own value of any of them wins.
TRAINVISOR_ADDS = {"TORCH_FR_BUFFER_SIZE", "TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DUMP_ON_TIMEOUT",
                   "PYTHONPATH"}


def port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def launch(argv, out, env):
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"{argv[0]} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return {r: json.load(open(os.path.join(out, f"{r}.json"))) for r in ("0", "1")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainvisor", default=".device/trainvisor")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    script = os.path.join(tmp, "dump.py")
    open(script, "w").write(DUMP)
    tr_out, tv_out = os.path.join(tmp, "tr"), os.path.join(tmp, "tv")
    os.mkdir(tr_out)
    os.mkdir(tv_out)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PET_", "TORCHELASTIC_",
                                                                    "TRAINVISOR_"))}
    env["PYTHON_EXEC"] = sys.executable
    common = ["--nnodes", "1", "--node_rank", "0", "--master_addr", "127.0.0.1",
              "--nproc_per_node", "2", "--max_restarts", "2"]
    tr = launch([sys.executable, "-m", "torch.distributed.run", *common, "--master_port", port(),
                 script, tr_out], tr_out, env)
    tv = launch([a.trainvisor, "run", "--preflight", "none", *common, "--master_port", port(),
                 script, tv_out], tv_out, env)
    import torch
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}")
    bad = 0
    for rank in ("0", "1"):
        keys = sorted({k for k in tr[rank] if env.get(k) != tr[rank][k]} |
                      {k for k in tv[rank] if env.get(k) != tv[rank][k]})
        print(f"rank {rank}: {'variable':40} {'torchrun':30} {'trainvisor':30}")
        for k in keys:
            t, v = tr[rank].get(k, "<unset>"), tv[rank].get(k, "<unset>")
            if k.startswith("TRAINVISOR_"):
                verdict = "trainvisor's own"
            elif t == v:
                verdict = "same"
            elif k in DIFFERENT_BY_DESIGN and "<unset>" not in (t, v):
                verdict = "differs (documented)"
            elif k in TRAINVISOR_ADDS and t == "<unset>":
                verdict = "trainvisor adds (documented)"
            else:
                verdict = "DIFFERS"
                bad += 1
            print(f"  {k:40} {t[:30]:30} {v[:30]:30} {verdict}")
    print("result:", "OK" if bad == 0 else f"{bad} undocumented difference(s)")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
