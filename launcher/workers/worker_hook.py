# trainvisor's worker hook (docs/supervision.md, "Evidence on hang"). Compiled into the binary
# (CMakeLists.txt, like the warm-standby bootstrap) and written once per run as
# <work dir>/.trainvisor/python/sitecustomize.py, a directory of trainvisor's own
# (common/own_dir.h), which trainvisor puts first on a Python worker's PYTHONPATH.
#
# Python's `site` imports it before the script: it registers faulthandler on the stacks signal
# (TRAINVISOR_STACKS_SIGNAL, a real-time signal; SIGUSR1/SIGUSR2 belong to users and Slurm) to
# append every thread's stack to TRAINVISOR_STACKS_FILE, after one header line naming the pid and
# the main thread (trainvisor signals only a worker whose header it has read). Then it undoes
# itself: PYTHONPATH and sys.path lose its directory (the script, its children and
# os.environ see the user's own), and the next `sitecustomize` on the path (the user's, or
# Debian's /etc/python3.11/sitecustomize.py) is imported in its place, so nothing is shadowed.
# argv, __main__ and the script's own imports are untouched. Nothing happens without both
# variables (warm standbys get no TRAINVISOR_STACKS_FILE: the bootstrap calls register() when the
# standby becomes a worker). Any error here is swallowed: the hook must never stop a worker.


def _tv_worker_hook():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    state = {}

    def register():  # also what a warm standby calls with its worker's environment
        value = os.environ.get("PYTHONPATH", "")
        if value == here:
            del os.environ["PYTHONPATH"]
        elif value.startswith(here + os.pathsep):
            os.environ["PYTHONPATH"] = value[len(here) + 1:]
        sys.path[:] = [p for p in sys.path if p != here]
        path = os.environ.get("TRAINVISOR_STACKS_FILE")
        sig = os.environ.get("TRAINVISOR_STACKS_SIGNAL")
        if not path or not sig:
            return
        import _thread
        import faulthandler

        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, 0o644)
        header = "# trainvisor stacks: pid %d main thread 0x%016x\n" % (os.getpid(),
                                                                         _thread.get_ident())
        os.write(fd, header.encode())
        faulthandler.register(int(sig), file=fd, all_threads=True, chain=False)
        old = state.get("fd")
        state["fd"] = fd  # faulthandler keeps the number, not a file object
        if old is not None:
            os.close(old)

    try:
        register()
    except Exception:  # noqa: BLE001 - no stacks on demand, the worker runs as it would
        pass

    import types

    hook = types.ModuleType("_trainvisor_worker_hook")
    hook.register = register
    sys.modules["_trainvisor_worker_hook"] = hook
    me = sys.modules.pop("sitecustomize")
    try:
        import sitecustomize  # noqa: F401 - the next one on the path, as if we were not here
    except ImportError as e:
        sys.modules["sitecustomize"] = me  # site's import of us must find a module
        if e.name != "sitecustomize":
            raise


_tv_worker_hook()
del _tv_worker_hook
