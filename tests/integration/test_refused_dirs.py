"""trainvisor's own refusals are its own exit code, decided before any worker runs, never a
worker's failure that is retried (issue 32.3): a rank directory that is a planted link, another
user's directory, or under a read-only log dir is exit 78 naming the path, with --max-restarts
left unused. Real binary, real files, a read-only bind mount in a mount namespace.
"""
import os
import shutil
import subprocess

import pytest

import tvtest

TIMEOUT = 60  # every case ends well before this; a hang fails the test
H = tvtest.Hermetic("TV_REFUSED_DIRS_TEST", TIMEOUT)


@pytest.fixture(autouse=True)
def _kill_leftovers():
    yield
    H.kill_leftovers()


def run_args(tmp_path, logs):
    started = tmp_path / "started"
    return started, ["run", "--preflight", "none", "--max-restarts", "3", "--log-dir", str(logs),
                     "--failure-file", str(tmp_path / "failure"), "--no-python", "--",
                     "/bin/sh", "-c", f"touch {started}"]


def assert_refused(r, tmp_path, path, why):
    assert r.returncode == 78, r.stderr
    assert f"generation 0 not started: {path}: {why}" in r.stderr, r.stderr
    assert "exiting 78 (trainvisor's configuration, not retried)" in r.stderr, r.stderr
    assert "the worker's own exit code" not in r.stderr and "restart 1" not in r.stderr, r.stderr
    assert not (tmp_path / "started").exists(), "a worker ran"
    assert str(path) in (tmp_path / "failure").read_text()


def test_a_link_planted_at_the_attempt_directory_is_78_before_anything_runs(tmp_path):
    logs, elsewhere = tmp_path / "logs", tmp_path / "elsewhere"
    logs.mkdir()
    elsewhere.mkdir()
    (logs / "attempt_0").symlink_to(elsewhere)
    started, args = run_args(tmp_path, logs)
    r = H.trainvisor(*args)
    assert_refused(r, tmp_path, logs / "attempt_0", "a symbolic link, not a directory of its own")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to another user)")
def test_another_users_attempt_directory_is_78_before_anything_runs(tmp_path):
    logs = tmp_path / "logs"
    (logs / "attempt_0").mkdir(parents=True)
    os.chown(logs / "attempt_0", 65534, 65534)  # nobody's
    started, args = run_args(tmp_path, logs)
    r = H.trainvisor(*args)
    assert_refused(r, tmp_path, logs / "attempt_0",
                   f"owned by uid 65534, not by trainvisor (uid {os.geteuid()})")


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a read-only mount")
def test_a_read_only_log_dir_is_78_before_anything_runs(tmp_path):
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace here")
    logs = tmp_path / "logs"
    logs.mkdir()
    started, args = run_args(tmp_path, logs)
    inner = (f'mount --bind "{logs}" "{logs}" && mount -o remount,bind,ro "{logs}" && exec '
             + " ".join(f"'{a}'" for a in [str(tvtest.BIN), *args]))
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "/bin/sh", "-c", inner],
                       env=H.env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert_refused(r, tmp_path, logs / "attempt_0", "cannot create (Read-only file system)")


# --- RLIMIT_NOFILE below what trainvisor itself needs (issue 32.4) ------------------------------

@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit(1)")
@pytest.mark.parametrize("nofile", [5, 12])
def test_too_low_an_open_file_limit_is_one_line_and_71(tmp_path, nofile):
    started = tmp_path / "started"
    r = subprocess.run(["prlimit", f"--nofile={nofile}", str(tvtest.BIN), "run", "--preflight",
                        "none", "--nproc-per-node", "2", "--no-python", "--", "/bin/sh", "-c",
                        f"touch {started}"], env=H.env(), capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 71, r.stderr  # before: 134 (Boost's eventfd, std::terminate) or 126
    assert f"RLIMIT_NOFILE (ulimit -n) is {nofile}: trainvisor needs at least 32 open files " \
           "for 2 worker(s)" in r.stderr, r.stderr
    assert "terminate" not in r.stderr and "exit 126" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not started.exists()


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit(1)")
def test_another_command_out_of_descriptors_is_one_line_and_71():
    r = subprocess.run(["prlimit", "--nofile=5", str(tvtest.BIN), "version"], env=H.env(),
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 71, r.stderr
    assert "out of file descriptors" in r.stderr and "RLIMIT_NOFILE" in r.stderr, r.stderr
    assert "terminate" not in r.stderr
