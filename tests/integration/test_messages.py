"""What a user sees when a command line is wrong (issue 53, item 8), from the real binary: every
error in one form, the logger's `[trainvisor HH:MM:SS.mmm E] message` (tvtest.error_messages),
whichever command wrote it (before: also `trainvisor:` and `trainvisor checkpoint:`); an unknown
option, command or config field named with the nearest known one; a duration given with a unit
told what it is in seconds; `checkpoint latest --format` naming its own option, once."""
import json
import subprocess

import tvtest

TIMEOUT = 60  # only against a hang: every command here ends at once


def tv(*args):
    return subprocess.run([str(tvtest.BIN), *map(str, args)], env=tvtest.base_env(),
                          capture_output=True, text=True, timeout=TIMEOUT)


def one_error(r, code):
    """The one error line of `r`, which exited `code` and printed no other prefix."""
    assert r.returncode == code, (r.returncode, r.stderr)
    said = tvtest.error_messages(r.stderr)
    assert len(said) == 1, r.stderr
    assert "trainvisor:" not in r.stderr and "trainvisor checkpoint:" not in r.stderr, r.stderr
    return said[0]


def test_an_unknown_option_or_command_gets_the_nearest_name_in_the_one_error_form(tmp_path):
    assert one_error(tv("run", "--max-restart", 2, "--", "/bin/true"), 64) == (
        "unknown option --max-restart (did you mean --max-restarts?) (see --help)")
    assert one_error(tv("checkpoint", "latest", "--dir", tmp_path, "--setle", 0), 64) == (
        "unknown option --setle (did you mean --settle?) (see --help)")
    assert one_error(tv("topology", "--jsn"), 64).startswith(
        "unknown option --jsn (did you mean --json?)")
    r = tv("stcks")
    assert one_error(r, 64) == "unknown command 'stcks' (did you mean stacks?)"
    assert "usage: trainvisor COMMAND" in r.stderr  # the list of commands still follows


def test_an_unknown_config_field_gets_the_nearest_field(tmp_path):
    config = tmp_path / "job.json"
    config.write_text(json.dumps({"name": "job-a", "image": "img:1", "nodes": 2,
                                  "gpus_per_nod": 8, "command": ["train.py"]}))
    said = one_error(tv("render", "--config", config, "--target", "slurm"), 78)
    assert "gpus_per_nod: unknown field (did you mean gpus_per_node?)" in said, said


def test_checkpoint_format_names_its_own_option_once(tmp_path):
    r = tv("checkpoint", "latest", "--dir", tmp_path, "--format", "skrll")
    said = one_error(r, 78)
    # before: "--checkpoint-format" (run's option), and the message twice
    assert said.startswith("--format: 'skrll' (did you mean skrl?): expected one of auto, skrl"), said
    assert r.stderr.count("skrll") == 1, r.stderr
    assert "--checkpoint-format" not in r.stderr


def test_a_duration_with_a_unit_is_told_in_seconds(tmp_path):
    said = one_error(tv("run", "--hang-timeout", "5m", "--", "/bin/true"), 78)
    assert said == ('--hang-timeout="5m": expected a number of seconds from 0 to 604800 (as 90 or '
                    '0.5, no unit), or auto: 5m is 300 seconds'), said
    said = one_error(tv("checkpoint", "watch", "--dir", tmp_path, "--poll-interval", "2s"), 78)
    assert said.startswith('--poll-interval="2s": expected a number of seconds'), said
    assert said.endswith("2s is 2 seconds"), said
