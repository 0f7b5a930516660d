# trainvisor's warm standby (docs/standby.md). Embedded into the binary at build time
# (CMakeLists.txt: file(READ) into a generated header) and passed on the command line: trainvisor
# starts it as `PYTHON -u -c <this code> MODE TARGET IMPORTS`, so no file that another user could
# replace is ever run (docs/supervision.md, "Files trainvisor creates").
#
# fd 0 is a Unix socket to trainvisor (the control channel). The standby lowers its own CPU and
# I/O priority, imports IMPORTS (comma-separated; `torch` by default) with the rank's
# import-time environment and sys.path[0], says "R" (ready) or "E <reason>" (and exits 3), then
# waits, ignoring SIGUSR1/SIGUSR2 (trainvisor starts it so). Where importing anything before the
# script runs is not safe (Isaac Sim: the script must start Kit first; docs/standby.md, "Isaac
# Sim"), it imports nothing and says "N <reason>" before "R". trainvisor restores its priority and
# sends "<length>\n<json>": {"env", "launch_env", "argv", "orig_argv", "cwd"}. The standby resets
# SIGUSR1/SIGUSR2, puts /dev/null on fd 0, applies them and runs the script (argv[0] a path) or
# module (argv ["-m", MODULE, ...]) as __main__, in this process's real __main__ module, the way
# `python3 -u script.py` / `python3 -u -m module` would (CPython's Modules/main.c
# pymain_run_module: sys.argv ["-m", ARGS...], then runpy._run_module_as_main puts the module's
# file in sys.argv[0]). EOF on fd 0 = exit 0 quietly.
#
# Everything lives inside _tv_standby() so that nothing of the bootstrap stays in __main__.


def _tv_standby():
    import os
    import sys

    bootstrap_file = sys._getframe().f_code.co_filename  # "<string>" under -c
    mode, target, imports = sys.argv[1], sys.argv[2], [m for m in sys.argv[3].split(",") if m]
    # The interpreter as it was really started, before our `-u -c CODE MODE TARGET IMPORTS`: an
    # interpreter wrapper (`exec python3 "$@"`) makes that its real python and its own flags, and a
    # cold worker's sys.orig_argv starts the same way.
    own = list(getattr(sys, "orig_argv", []))
    interpreter = own[: len(own) - len(sys.argv) - 2] if len(own) >= len(sys.argv) + 2 else []

    def lower_priority():
        os.setpriority(os.PRIO_PROCESS, 0, 19)  # threads started later inherit it
        numbers = {"x86_64": 251, "aarch64": 30}  # ioprio_set
        nr = numbers.get(os.uname().machine)
        if nr is None:
            return
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall(nr, 1, 0, 3 << 13)  # IOPRIO_WHO_PROCESS, self, IOPRIO_CLASS_IDLE

    def send(text):
        os.write(0, text.encode())

    def read_exact(n):
        chunks = []
        while n > 0:
            b = os.read(0, n)
            if not b:
                os._exit(0)  # trainvisor is done with this standby
            chunks.append(b)
            n -= len(b)
        return b"".join(chunks)

    def read_message():
        header = b""
        while not header.endswith(b"\n"):
            header += read_exact(1)
            if len(header) > 20:
                os._exit(2)
        import json

        return json.loads(read_exact(int(header)))

    def script_dir(path):  # sys.path[0] of `python3 path`: the script's directory, links resolved
        return os.path.dirname(os.path.realpath(path))

    def kit_first():
        """Why nothing may be imported before the script runs, or None (docs/standby.md, "Isaac
        Sim"): a script under Isaac Sim creates its SimulationApp/AppLauncher before it imports
        torch, and Kit then puts its own packages (its torch among them) first on sys.path."""
        for var in ("ISAAC_PATH", "CARB_APP_PATH", "EXP_PATH"):
            if var in os.environ:
                return "the interpreter runs in Isaac Sim's environment (%s is set)" % var
        import importlib.util

        for name in ("isaacsim", "isaaclab"):
            try:
                found = importlib.util.find_spec(name) is not None  # a top-level name: runs nothing
            except (ImportError, ValueError):
                found = False
            if found:
                return "%s is importable by the workers' interpreter" % name
        if mode == "script":
            import re

            try:
                with open(target, "rb") as f:
                    source = f.read().decode("utf-8", "replace")
            except OSError:
                return None
            m = re.search(r"^\s*(?:from|import)\s+(isaacsim|isaaclab\w*|omni|carb|pxr)\b", source,
                          re.M)
            if m:
                return "%s imports %s" % (target, m.group(1))
        return None

    lower_priority()
    sys.path[0] = os.getcwd() if mode == "module" else script_dir(target)
    why_nothing = kit_first()
    if why_nothing:
        send("N %s: the standby imports nothing before the script runs\n" % why_nothing)
        imports = []
    try:
        for m in imports:
            __import__(m)
    except BaseException as e:  # noqa: BLE001 - any failure means "no standby", told once
        send("E import %s failed: %s: %s\n" % (m, type(e).__name__, str(e).replace("\n", " ")))
        os._exit(3)
    send("R\n")

    msg = read_message()
    # A worker now: the user signals trainvisor started it ignoring (a step-wide SIGUSR1 under
    # Slurm reaches standbys too) are the worker's again, as in a cold start.
    import signal

    for s in (signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(s, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)

    # The environment: the rank's, plus every change between the environment trainvisor started
    # this standby with (launch_env) and the one it has now, added, changed or removed: what an
    # interpreter wrapper exported (Isaac Sim's python.sh: ISAAC_PATH, CARB_APP_PATH, EXP_PATH,
    # PYTHONPATH, LD_LIBRARY_PATH, LD_PRELOAD), what the worker hook took out of PYTHONPATH, what
    # the imports set. A cold start of the same command makes the same changes (the import-time
    # environment was checked equal). os.environ's writes are putenv/unsetenv: the C level too.
    launch, now = msg["launch_env"], dict(os.environ)
    env = dict(msg["env"])
    for k, v in now.items():
        if launch.get(k) != v:
            env[k] = v
    for k in launch:
        if k not in now:
            env.pop(k, None)
    os.environ.clear()
    os.environ.update(env)
    hook = sys.modules.get("_trainvisor_worker_hook")  # worker_hook.py: this attempt's stacks file
    if hook is not None:
        try:
            hook.register()
        except Exception:  # noqa: BLE001 - no stacks on demand, the worker runs as it would
            pass
    os.chdir(msg["cwd"])
    argv = msg["argv"]  # without the interpreter and its flags, as sys.argv
    module = argv[0] == "-m" and len(argv) > 1
    sys.orig_argv = interpreter + msg["orig_argv"][1:] if interpreter else msg["orig_argv"]
    sys.path[0] = os.getcwd() if module else script_dir(argv[0])

    main = sys.modules["__main__"]
    keep = {"__builtins__", "__name__"}
    for k in list(vars(main)):
        if k not in keep:
            delattr(main, k)
    main.__doc__ = None
    main.__package__ = None
    main.__spec__ = None
    main.__annotations__ = {}

    def report(e):  # as an uncaught exception: without the bootstrap's own frames
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == bootstrap_file:
            tb = tb.tb_next
        e = e.with_traceback(tb)  # the hook prints the exception's own traceback
        sys.excepthook(type(e), e, tb)

    try:
        if module:
            import runpy

            sys.argv = ["-m"] + argv[2:]  # as `python -m MODULE ARGS` has it before runpy runs
            runpy._run_module_as_main(argv[1], True)  # what `python -m` itself calls
        else:
            sys.argv = argv
            path = os.path.abspath(argv[0])
            from importlib.machinery import SourceFileLoader

            main.__file__ = path
            main.__cached__ = None
            main.__loader__ = SourceFileLoader("__main__", path)
            with open(path, "rb") as f:
                code = compile(f.read(), path, "exec")
            exec(code, vars(main))
    except SystemExit:
        raise
    except KeyboardInterrupt as e:
        report(e)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException as e:  # noqa: BLE001 - reported as an uncaught exception would be
        report(e)
        raise SystemExit(1)


_tv_standby()
