"""A master host name that resolves only to an IPv6 address (docs/coordination.md): node 0's
coordinator listens on the family the name resolves to, so both nodes join and the job ends 0
(before: it listened on 0.0.0.0, every node got "Connection refused" until --rdzv-timeout, 75).

The name is made in a hosts file bind-mounted over /etc/hosts in a mount namespace of each node's
own (`unshare -m`): nothing outside the test sees it. Needs root (skipped otherwise).
Environment (set by ctest): TRAINVISOR_BIN, TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import os
import subprocess

import pytest

from test_multinode import Job, expect_rc, output, worker

NAME = "tv-v6only-master"
IN_OWN_HOSTS = 'mount --bind "$0" /etc/hosts && exec "$@"'


def own_hosts_prefix(hosts):
    if os.geteuid() != 0:
        pytest.skip("skipped: a mount namespace with its own /etc/hosts needs root")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", IN_OWN_HOSTS, str(hosts), "getent",
                            "ahosts", NAME], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"skipped: no mount namespace here: {probe.stderr.strip()}")
    assert {l.split()[0] for l in probe.stdout.splitlines()} == {"::1"}, probe.stdout
    return ["unshare", "-m", "sh", "-c", IN_OWN_HOSTS, str(hosts)]


def test_a_master_name_that_resolves_only_to_ipv6_is_joined(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text(f"127.0.0.1 localhost\n::1 {NAME}\n")
    prefix = own_hosts_prefix(hosts)
    job = Job(tmp_path, 2, rdzv_timeout=60, master_addr=NAME)
    try:
        procs = job.start_all(worker(job, "ok"), prefix_of=lambda rank: prefix)
        for p in procs:
            expect_rc(job, p, 0)
        assert sorted(job.records(0)) == [0, 1]
        assert "coordinator listening on :::" in output(procs[0]), output(procs[0])
    finally:
        job.kill_all()
