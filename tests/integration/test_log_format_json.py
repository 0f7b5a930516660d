"""`--log-format json` against the real binary: trainvisor's own lines and the workers' forwarded
lines are one JSON object per line (docs/observability.md, "JSON lines").

A real worker (python) prints to stdout and stderr, including a byte that is not UTF-8, a control
character and a progress bar redrawn with '\\r'; every line trainvisor writes on its stdout and
stderr parses as JSON, and each worker line carries its rank, its stream, a time and its text.
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import json
import subprocess

import tvtest

WORKER = r'''
import os, sys
rank = os.environ["RANK"]
sys.stdout.buffer.write(b"rank " + rank.encode() + b" bad byte \xff here\n")
sys.stdout.write("bar 10%\rbar 50%\rbar 100%\n")
sys.stdout.flush()
sys.stderr.write("warning from " + rank + " \x07 bell\n")
sys.stderr.write("no newline at the end")
'''


def run(tmp_path, log_format="json"):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    argv = [str(tvtest.BIN), "run", "--nproc-per-node", "2", "--preflight", "none",
            "--log-format", log_format, "--failure-file", str(tmp_path / "failure"),
            "--termination-log", str(tmp_path / "termlog"), "--", tvtest.PYTHON,
            str(script)]
    return subprocess.run(argv, env=tvtest.base_env(TMPDIR=tmp_path), cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)


def records(raw):
    lines = raw.split(b"\n")
    assert lines[-1] == b"", raw[-200:]
    out = []
    for line in lines[:-1]:
        try:
            out.append(json.loads(line))
        except ValueError as e:
            raise AssertionError(f"not one JSON object: {line!r}: {e}") from None
        assert isinstance(out[-1], dict), line
    return out


def test_every_line_is_json_with_rank_stream_and_time(tmp_path):
    r = run(tmp_path)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    out, err = records(r.stdout), records(r.stderr)
    workers_out = [x for x in out if x.get("logger") == "worker"]
    workers_err = [x for x in err if x.get("logger") == "worker"]
    assert len(workers_out) == len(out)  # nothing but worker lines on stdout
    assert any(x.get("logger") == "trainvisor" for x in err)  # trainvisor's own lines, as JSON
    for x in workers_out + workers_err:
        assert set(x) == {"time", "logger", "rank", "stream", "line"}, x
        assert x["time"][:2] == "20" and x["time"][10] == "T", x
    for rank in (0, 1):
        mine = [x["line"] for x in workers_out if x["rank"] == rank]
        assert f"rank {rank} bad byte \ufffd here" in mine, mine
        assert "bar 10%\rbar 50%\rbar 100%" in mine, mine
        assert all(x["stream"] == "stdout" for x in workers_out)
        errs = [x["line"] for x in workers_err if x["rank"] == rank]
        assert errs == [f"warning from {rank} \x07 bell", "no newline at the end"], errs
        assert all(x["stream"] == "stderr" for x in workers_err)
    # The raw bytes: control characters escaped, never a bare '\r' or BEL in the output.
    assert b"\r" not in r.stdout and b"\x07" not in r.stderr


def test_text_format_keeps_the_rank_prefix(tmp_path):
    r = run(tmp_path, "text")
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    assert b"[rank0]: bar 10%\rbar 50%\rbar 100%\n" in r.stdout, r.stdout
