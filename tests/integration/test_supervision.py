"""`trainvisor run` supervising real child processes: exit codes, signals, grace period, no
process left behind, restarts, hangs, root cause files, output integrity, PID 1 duties.

Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import os
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

import tvtest
from tvtest import free_port

TRAINVISOR = tvtest.BIN
HELPERS = tvtest.HELPERS
PYTHON = tvtest.PYTHON
MARKER = tvtest.MARKER  # conftest.py's no_leftovers kills this run's processes after each test
SESSION = tvtest.SESSION
TIMEOUT = 120


base_env = tvtest.own_env


def helper(name, *args):
    return [str(HELPERS / name), *map(str, args)]


def tv(*args, env=None, timeout=TIMEOUT, **kw):
    """Runs trainvisor to completion; returns CompletedProcess with text output."""
    cmd = [str(TRAINVISOR), "run", "--preflight", "none", *map(str, args)]
    return subprocess.run(cmd, env=env or base_env(), capture_output=True, text=True,
                           timeout=timeout, **kw)


def start(*args, env=None, **kw):
    cmd = [str(TRAINVISOR), "run", "--preflight", "none", *map(str, args)]
    return subprocess.Popen(cmd, env=env or base_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def procs_with(marker_value):
    """Pids of live processes whose environment carries this test's marker."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if f"{MARKER}={marker_value}".encode() in (p / "environ").read_bytes():
                stat = (p / "stat").read_text()
                if stat[stat.rfind(")") + 2] not in "ZX":
                    found.append(int(p.name))
        except OSError:
            pass
    return found


def wait_for_line(stream, pattern, timeout=30):
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        if re.search(pattern, line):
            return seen
    raise AssertionError(f"{pattern!r} not seen in: {seen}")


@pytest.mark.parametrize("code", [0, 1, 2, 3, 42, 100, 254, 255])
def test_exit_code_of_the_failing_worker(code):
    r = tv("--nproc-per-node", 2, "--max-restarts", 0, "--no-python", *helper("tv_exit", code))
    assert r.returncode == code, r.stderr


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGTERM, signal.SIGUSR1])
def test_signal_death_maps_to_128_plus_n(sig):
    r = tv("--nproc-per-node", 1, "--max-restarts", 0, "--no-python", *helper("tv_die", int(sig)))
    assert r.returncode == 128 + int(sig), r.stderr


def test_one_failure_stops_the_others_and_names_the_root_cause(tmp_path):
    script = tmp_path / "w.sh"
    script.write_text('if [ "$LOCAL_RANK" = 2 ]; then echo "dying rank $RANK" >&2; exit 7; fi\nexec sleep 100\n')
    t0 = time.monotonic()
    r = tv("--nproc-per-node", 3, "--max-restarts", 0, "--grace-period", 5, "--", "/bin/sh", script)
    assert r.returncode == 7, r.stderr
    assert time.monotonic() - t0 < 30  # the sleepers were stopped, not waited for
    assert "rank 2 (node 0, local 2): exit 7: dying rank 2" in r.stderr


def test_command_not_found_and_not_executable(tmp_path):
    r = tv("--", "no-such-command-anywhere")
    assert r.returncode == 127 and "no-such-command-anywhere" in r.stderr
    f = tmp_path / "data.txt"
    f.write_text("x")
    f.chmod(0o644)
    r = tv("--", str(f))
    assert r.returncode == 126 and str(f) in r.stderr


def test_usage_and_config_errors_name_the_option():
    r = tv("--nproc-per-node", 1, "--no-such-option", "--", "/bin/true")
    assert r.returncode == 64 and "--no-such-option" in r.stderr
    r = tv("--max-restarts", "many", "--", "/bin/true")
    assert r.returncode == 78 and "--max-restarts" in r.stderr and "many" in r.stderr
    r = tv("--", env=base_env())
    assert r.returncode == 64


@pytest.mark.parametrize("args,env,needle", [
    (["--log-format", "xml"], {}, '--log-format="xml": expected one of text|json'),
    (["--warm-standby", "yes"], {}, '--warm-standby="yes": expected one of on|off|auto'),
    ([], {"TRAINVISOR_STANDALONE": "maybe"}, 'TRAINVISOR_STANDALONE="maybe": expected 1|true'),
    ([], {"TRAINVISOR_PREFLIGHT": "fast"}, 'TRAINVISOR_PREFLIGHT="fast": expected one of'),
    (["--metrics-address", "not-an-ip"], {}, '--metrics-address="not-an-ip": expected an IPv4'),
    (["--max-restarts", "1001"], {}, '--max-restarts="1001": expected an integer from 0 to 1000'),
], ids=["log-format", "warm-standby", "standalone-env", "preflight-env", "metrics-address",
        "max-restarts"])
def test_every_option_value_is_checked_with_exit_78_and_one_line(args, env, needle):
    r = subprocess.run([str(TRAINVISOR), "run", *args, "--no-python", "/bin/true"],
                       env=base_env(**env), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 78, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--metrics-port" not in r.stderr


def test_env_fallback_for_options():
    env = base_env(TRAINVISOR_MAX_RESTARTS="0", TRAINVISOR_NPROC_PER_NODE="3")
    r = tv("--no-python", "/bin/sh", "-c", 'echo "ws=$WORLD_SIZE mr=$TORCHELASTIC_MAX_RESTARTS"', env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("ws=3 mr=0") == 3


def test_sigterm_is_forwarded_then_sigkill_after_grace():
    p = start("--nproc-per-node", 2, "--grace-period", 1, "--no-python", *helper("tv_ignore_term"))
    marker = None
    try:
        wait_for_line(p.stdout, r"\[rank\d\]: ready")
        wait_for_line(p.stdout, r"\[rank\d\]: ready")
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=30)
        elapsed = time.monotonic() - t0
    finally:
        p.kill()
    _, err = p.communicate()
    assert rc == 128 + signal.SIGTERM, err
    assert elapsed >= 0.9, "workers ignoring SIGTERM must get the whole grace period"
    assert "SIGKILL" in err


def test_workers_that_handle_sigterm_exit_within_grace(tmp_path):
    script = tmp_path / "w.sh"
    script.write_text("trap 'echo got-term; exit 0' TERM\necho ready\nwhile :; do sleep 0.05; done\n")
    p = start("--nproc-per-node", 2, "--grace-period", 30, "--", "/bin/sh", script)
    wait_for_line(p.stdout, "ready")
    wait_for_line(p.stdout, "ready")
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 128 + signal.SIGTERM
    assert out.count("got-term") == 2, out


def test_second_sigterm_kills_at_once():
    p = start("--nproc-per-node", 1, "--grace-period", 600, "--no-python", *helper("tv_ignore_term"))
    try:
        wait_for_line(p.stdout, "ready")
        p.send_signal(signal.SIGTERM)
        # The second TERM only after the first was taken: two sent while neither is taken yet
        # are one pending signal (a sleep here raced with a loaded machine).
        wait_for_line(p.stderr, "received SIGTERM")
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=20)  # far below the 600 s grace period
    finally:
        p.kill()
    assert rc == 128 + signal.SIGTERM


def test_sigusr1_is_forwarded_without_stopping(tmp_path):
    script = tmp_path / "w.sh"
    script.write_text("trap 'echo got-usr1; exit 0' USR1\necho ready\nwhile :; do sleep 0.05; done\n")
    p = start("--nproc-per-node", 2, "--", "/bin/sh", script)
    wait_for_line(p.stdout, "ready")
    wait_for_line(p.stdout, "ready")
    p.send_signal(signal.SIGUSR1)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    assert out.count("got-usr1") == 2


def test_setsid_grandchild_does_not_outlive_the_job(tmp_path):
    env = base_env()
    pidfile = tmp_path / "gc.pid"
    r = tv("--nproc-per-node", 1, "--no-python", *helper("tv_grandchild", pidfile, "exit"), env=env)
    assert r.returncode == 0, r.stderr
    gc = int(pidfile.read_text())
    assert not Path(f"/proc/{gc}").exists() or "Z" in Path(f"/proc/{gc}/stat").read_text().split(")")[1][:3]
    assert procs_with(env[MARKER]) == []


def test_nothing_left_after_sigterm(tmp_path):
    env = base_env()
    p = start("--nproc-per-node", 2, "--grace-period", 1, "--no-python",
              *helper("tv_grandchild", tmp_path / "gc.pid"), env=env)
    deadline = time.monotonic() + 30
    while not (tmp_path / "gc.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    assert procs_with(env[MARKER]) == []


def test_restart_then_success_with_new_restart_count(tmp_path):
    script = tmp_path / "w.sh"
    script.write_text('echo "rank=$RANK count=$TORCHELASTIC_RESTART_COUNT err=$TORCHELASTIC_ERROR_FILE"\n'
                      '[ "$TORCHELASTIC_RESTART_COUNT" -ge 2 ] || { [ "$RANK" = 1 ] && { sleep 0.3; exit 5; }; sleep 30; }\n')
    r = tv("--nproc-per-node", 2, "--max-restarts", 3, "--", "/bin/sh", script)
    assert r.returncode == 0, r.stderr
    for count in (0, 1, 2):
        assert f"rank=0 count={count}" in r.stdout and f"rank=1 count={count}" in r.stdout
    errs = set(re.findall(r"err=(\S+)", r.stdout))
    assert len(errs) == 6, "a fresh error file per worker and attempt"


def test_every_one_node_restart_gets_a_fresh_free_master_port(tmp_path):
    # One node runs the same job state machine as many: each restart gets a port the kernel
    # reports free (the old one may still be held by a dying TCPStore or by another job). Each
    # attempt's worker binds its MASTER_PORT (as the first rank's TCPStore would) before saying so.
    base = free_port()
    script = tmp_path / "w.py"
    script.write_text(textwrap.dedent("""
        import os, socket, sys
        port, count = int(os.environ["MASTER_PORT"]), int(os.environ["TORCHELASTIC_RESTART_COUNT"])
        s = socket.socket()
        s.bind(("0.0.0.0", port))
        s.listen()
        print(f"bound attempt={count} port={port}", flush=True)
        sys.exit(0 if count == 2 else 1)
    """))
    r = tv("--nproc-per-node", 1, "--max-restarts", 2, "--master-port", base, str(script))
    assert r.returncode == 0, r.stderr
    ports = {int(a): int(p) for a, p in re.findall(r"bound attempt=(\d) port=(\d+)", r.stdout)}
    assert sorted(ports) == [0, 1, 2], r.stdout + r.stderr
    assert ports[0] == base
    assert len({ports[0], ports[1], ports[2]}) == 3, ports


def test_first_restart_is_immediate_quick_failures_back_off():
    # Every attempt fails at once: the first restart starts without a pause, the next ones (quick
    # succession) wait 100 ms, then 200 ms.
    r = tv("--nproc-per-node", 1, "--max-restarts", 3, "--no-python", *helper("tv_exit", 3))
    assert r.returncode == 3
    pauses = [int(ms) for ms in re.findall(r"restart \d in (\d+) ms", r.stderr)]
    assert pauses == [0, 100, 200], r.stderr


def test_restarts_exhausted_exit_with_root_cause_code():
    r = tv("--nproc-per-node", 2, "--max-restarts", 2, "--no-python", *helper("tv_exit", 9))
    assert r.returncode == 9
    assert len(re.findall(r"generation \d: starting", r.stderr)) == 3


def test_silent_worker_is_a_hang_and_exits_124():
    r = tv("--nproc-per-node", 2, "--max-restarts", 1, "--hang-timeout", 1, "--no-python",
           *helper("tv_silent", 60))
    assert r.returncode == 124, r.stderr
    assert "hung" in r.stderr


def test_slow_printer_and_heartbeat_are_alive():
    r = tv("--nproc-per-node", 1, "--max-restarts", 0, "--hang-timeout", 1, "--no-python",
           *helper("tv_slow_printer", 250, 12))
    assert r.returncode == 0, r.stderr
    r = tv("--nproc-per-node", 1, "--max-restarts", 0, "--hang-timeout", 1, "--no-python",
           *helper("tv_heartbeat", 200, 15))
    assert r.returncode == 0, r.stderr


def test_root_cause_in_failure_file_and_termination_log(tmp_path):
    failure, tlog = tmp_path / "failure", tmp_path / "termination-log"
    r = tv("--nproc-per-node", 2, "--max-restarts", 0, "--failure-file", failure,
           "--termination-log", tlog, "--no-python", *helper("tv_error_file", "ValueError: boom", 3))
    assert r.returncode == 3
    for f in (failure, tlog):
        assert "ValueError: boom" in f.read_text()
        assert f.read_text().endswith("\n") and not f.read_text().endswith("\n\n")  # a text file
    # SageMaker keeps the first reason: an existing failure file is never replaced.
    failure.write_text("earlier reason")
    tv("--max-restarts", 0, "--failure-file", failure, "--termination-log", tlog,
       "--no-python", *helper("tv_exit", 4))
    assert failure.read_text() == "earlier reason"
    assert "exit 4" in tlog.read_text()
    # No directory: nothing is written, nothing fails.
    r = tv("--max-restarts", 0, "--failure-file", tmp_path / "nodir" / "f", "--no-python", *helper("tv_exit", 4))
    assert r.returncode == 4 and not (tmp_path / "nodir").exists()


def test_output_lines_are_whole_prefixed_and_complete():
    n = 20000
    r = tv("--nproc-per-node", 3, "--no-python", *helper("tv_spam", n, 200))
    assert r.returncode == 0, r.stderr[-2000:]
    seen = {}
    for line in r.stdout.splitlines():
        m = re.fullmatch(r"\[rank(\d)\]: rank=(\d) line=(\d+) x+", line)
        assert m, f"broken or interleaved line: {line[:120]!r}"
        assert m.group(1) == m.group(2)
        seen.setdefault(m.group(1), []).append(int(m.group(3)))
    assert sorted(seen) == ["0", "1", "2"]
    for lines in seen.values():
        assert len(lines) == n and len(set(lines)) == n


def test_a_stalled_reader_never_blocks_the_workers(tmp_path):
    # Nobody reads trainvisor's stdout until it has exited: workers must still finish.
    r_fd, w_fd = os.pipe()
    p = subprocess.Popen([str(TRAINVISOR), "run", "--preflight", "none", "--nproc-per-node", "2",
                          "--no-python", *helper("tv_spam", 200000, 200)],
                         env=base_env(), stdout=w_fd, stderr=subprocess.PIPE, text=True)
    os.close(w_fd)
    try:
        rc = p.wait(timeout=90)
    finally:
        p.kill()
        os.close(r_fd)
    assert rc == 0


def test_no_descriptor_leaks_into_workers():
    r = tv("--nproc-per-node", 2, "--no-python", *helper("tv_fd_check"))
    assert r.returncode == 0, r.stderr


def test_log_dir_has_one_file_per_rank_and_attempt(tmp_path):
    script = tmp_path / "w.sh"
    # Rank 1 finishes at once; rank 0 fails the first attempt only after both have written, so
    # no worker is stopped before its lines are out.
    script.write_text('echo "out $RANK $TORCHELASTIC_RESTART_COUNT"; echo "err $RANK" >&2\n'
                      '[ "$TORCHELASTIC_RESTART_COUNT$RANK" = 00 ] && { sleep 0.5; exit 2; }\nexit 0\n')
    r = tv("--nproc-per-node", 2, "--max-restarts", 1, "--log-dir", tmp_path / "logs", "--", "/bin/sh", script)
    assert r.returncode == 0, r.stderr
    for attempt in (0, 1):
        for rank in (0, 1):
            d = tmp_path / "logs" / f"attempt_{attempt}" / f"rank_{rank}"
            assert (d / "stdout.log").read_text() == f"out {rank} {attempt}\n"
            assert (d / "stderr.log").read_text() == f"err {rank}\n"


def test_json_log_format():
    r = tv("--log-format", "json", "--max-restarts", 0, "--no-python", *helper("tv_exit", 3))
    assert r.returncode == 3
    lines = [l for l in r.stderr.splitlines() if l.startswith("{")]
    assert lines
    for l in lines:
        obj = json.loads(l)
        assert {"time", "level", "msg"} <= obj.keys()


def test_root_cause_is_the_error_file_written_first_even_when_that_worker_exits_last(tmp_path):
    # As with torch and gloo: rank 1 raises, @record writes its error file, and rank 1 then spends
    # a while in teardown; its closed sockets fail rank 0 ("Connection closed by peer"), whose
    # error file is written later but whose process exits first. The error files' own timestamps
    # are whole seconds and tie. The root cause is rank 1, with rank 1's own exit code: trainvisor
    # leaves a worker that has written its error file to exit by itself (no SIGTERM).
    script = tmp_path / "worker.sh"
    script.write_text(textwrap.dedent('''\
        #!/bin/sh
        err() { printf '{"message": {"message": "%s", "extraInfo": {"py_callstack": "tb", "timestamp": "%s"}}}' "$1" "$(date +%s)" > "$TORCHELASTIC_ERROR_FILE"; }
        if [ "$RANK" = 1 ]; then err "ValueError: the real cause"; sleep 0.3; exit 7; fi
        peer="$(dirname "$(dirname "$TORCHELASTIC_ERROR_FILE")")/rank_1/error.json"
        while [ ! -s "$peer" ]; do sleep 0.01; done
        sleep 0.05
        err "RuntimeError: Connection closed by peer"
        exit 1
        '''))
    script.chmod(0o755)
    for i in range(3):
        failure = tmp_path / f"failure{i}"
        r = tv("--nproc-per-node", 2, "--max-restarts", 0, "--failure-file", failure,
               "--no-python", script)
        assert r.returncode == 7, r.stderr
        assert "rank 1 (node 0, local 1): exit 7: ValueError: the real cause" in failure.read_text()


def test_a_root_cause_stuck_after_its_error_file_gets_sigterm_soon_not_after_the_grace(tmp_path):
    # Rank 1 writes its error file and then hangs in "teardown"; rank 0 fails because of it. Rank 1
    # is waited for 2 s, then SIGTERMed like the others, not left for the 30 s grace period.
    script = tmp_path / "worker.sh"
    script.write_text(textwrap.dedent('''\
        #!/bin/sh
        if [ "$RANK" = 1 ]; then
          printf '{"message": "ValueError: the real cause"}' > "$TORCHELASTIC_ERROR_FILE"
          exec sleep 60
        fi
        peer="$(dirname "$(dirname "$TORCHELASTIC_ERROR_FILE")")/rank_1/error.json"
        while [ ! -s "$peer" ]; do sleep 0.01; done
        sleep 0.05
        exit 1
        '''))
    script.chmod(0o755)
    failure = tmp_path / "failure"
    t0 = time.monotonic()
    r = tv("--nproc-per-node", 2, "--max-restarts", 0, "--grace-period", 30,
           "--failure-file", failure, "--no-python", script)
    took = time.monotonic() - t0
    assert r.returncode == 143, r.stderr
    assert "rank 1 has not exited since writing its error file: SIGTERM" in r.stderr
    assert "rank 1 (node 0, local 1): signal 15 (SIGTERM): ValueError: the real cause" in failure.read_text()
    assert took < 25, f"waited {took:.1f} s: the grace period, not the 2 s window"


def test_an_error_file_left_in_the_log_dir_is_not_taken_for_this_run(tmp_path):
    logs = tmp_path / "logs"
    stale = logs / "attempt_0" / "rank_0" / "error.json"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"message": "RuntimeError: from last week"}')
    failure = tmp_path / "failure"
    r = tv("--max-restarts", 0, "--log-dir", logs, "--failure-file", failure,
           "--no-python", *helper("tv_exit", 4))
    assert r.returncode == 4
    assert "last week" not in failure.read_text() and "exit 4" in failure.read_text()


def test_real_pytorch_record_failure_restarts_and_finishes(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent('''
        import os, torch, torch.distributed as dist
        from torch.distributed.elastic.multiprocessing.errors import record
        @record
        def main():
            dist.init_process_group("gloo", init_method="env://")
            if dist.get_rank() == 1 and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
                raise ValueError("rank one exploded on purpose")
            t = torch.ones(1)
            dist.all_reduce(t)
            assert t.item() == dist.get_world_size()
            print("ALLREDUCE_OK", os.environ["TORCHELASTIC_RESTART_COUNT"], flush=True)
            dist.destroy_process_group()
        main()
    '''))
    failure = tmp_path / "failure"
    r = tv("--nproc-per-node", 2, "--max-restarts", 1, "--grace-period", 5, "--master-port", free_port(),
           "--failure-file", failure, script, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("ALLREDUCE_OK 1") == 2
    assert "ValueError: rank one exploded on purpose" in r.stderr  # the root-cause table
    r = tv("--nproc-per-node", 2, "--max-restarts", 0, "--grace-period", 5, "--master-port", free_port(),
           "--failure-file", failure, script, timeout=300)
    assert r.returncode == 1
    assert "ValueError: rank one exploded on purpose" in failure.read_text()




def can_unshare_pid():
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def test_pid1_in_a_pid_namespace_reaps_orphans(tmp_path):
    if not can_unshare_pid():
        pytest.skip("this machine does not allow `unshare --pid --fork --mount-proc` (needs root / CAP_SYS_ADMIN)")
    # Each worker orphans a short-lived process and notes its pid; once its parent is gone it
    # belongs to PID 1, which must reap it: the worker waits (up to 60 s, a guard against a hang
    # only) until that pid is gone from the namespace's /proc. Only its own orphan is looked at:
    # the other rank's processes may be zombies for a moment, waited for by their own shell.
    script = tmp_path / "w.sh"
    script.write_text(textwrap.dedent('''
        orphan=$(sh -c 'sleep 0.2 >/dev/null & echo $!')
        n=0
        while [ -e "/proc/$orphan" ]; do
          n=$((n + 1))
          if [ "$n" -gt 1200 ]; then echo "not reaped: $(cat /proc/$orphan/stat)"; exit 9; fi
          sleep 0.05
        done
        echo "pid1=$(cat /proc/1/comm)"
    '''))
    cmd = ["unshare", "--pid", "--fork", "--mount-proc", str(TRAINVISOR), "run", "--preflight", "none",
           "--nproc-per-node", 2, "--max-restarts", 0, "--", "/bin/sh", str(script)]
    r = subprocess.run(list(map(str, cmd)), env=base_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("pid1=trainvisor") == 2
