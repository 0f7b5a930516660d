"""Node ranks that no option and no platform gives (docs/coordination.md, "Node ranks"): the
torchrun line of a Batch-like job, `--nnodes 2 --rdzv-backend c10d --rdzv-endpoint HOST:PORT`
with no `--node-rank`, run as two `trainvisor run` processes on loopback. The one that binds the
endpoint hosts the coordinator and is rank 0; the other asks it and is assigned rank 1 in join
order. Also: two nodes that claim one rank both exit 78, each told why (node rank 0 too: the
second cannot listen on the coordinator's port and joins the first's coordinator); PET_RDZV_ENDPOINT alone
names the endpoint (torchrun's env action)."""
import subprocess

from tvtest import base_env, free_ports
from torchrun_cli import recorder, records, run_argv

TIMEOUT = 90  # only against a hang: every run here ends by itself in seconds


def start(tmp_path, tag, *opts, env=None):
    return subprocess.Popen(run_argv(tmp_path, "--rdzv-timeout", 60, "--peer-timeout", 5,
                                     "--rdzv-token", "t0k3n", "--max-restarts", 0,
                                     *opts, tag=tag),
                            env=env or base_env(), cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def ended(procs):
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=TIMEOUT)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return [(p.returncode, out) for p, out in zip(procs, outs)]


def assert_one_world_of_4(out_dir, results):
    for code, out in results:
        assert code == 0, out[-3000:]
    recs = records(out_dir)
    assert sorted(recs) == [0, 1, 2, 3], sorted(recs)
    for rank, r in recs.items():
        e = r["env"]
        assert (e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"]) == ("4", "2"), e
        assert e["GROUP_RANK"] == str(rank // 2) and e["LOCAL_RANK"] == str(rank % 2), e
    assert {recs[r]["env"]["GROUP_RANK"] for r in recs} == {"0", "1"}
    said = "\n".join(out for _, out in results)
    assert "start: node rank: 0 (from this node hosts the coordinator on 127.0.0.1:" in said, said
    assert ("start: node rank: 1 (from assigned by node 0 in join order (no --node-rank, no "
            "platform rank))") in said, said


def test_batch_like_line_without_node_rank_gets_ranks_in_join_order(tmp_path):
    script, out = recorder(tmp_path)
    (rdzv_port,) = free_ports(1)
    line = ["--nnodes", 2, "--nproc-per-node", 2, "--rdzv-backend", "c10d",
            "--rdzv-endpoint", f"127.0.0.1:{rdzv_port}", "--rdzv-id", "j1", script]
    env = base_env(TV_RECORD_DIR=out)
    procs = [start(tmp_path, i, *line, env=env) for i in range(2)]
    assert_one_world_of_4(out, ended(procs))


def test_pet_rdzv_endpoint_alone_names_the_coordinator(tmp_path):
    script, out = recorder(tmp_path)
    (rdzv_port,) = free_ports(1)
    env = base_env(TV_RECORD_DIR=out, PET_RDZV_ENDPOINT=f"127.0.0.1:{rdzv_port}",
                   PET_RDZV_BACKEND="c10d", PET_RDZV_ID="j2")
    procs = [start(tmp_path, i, "--nnodes", 2, "--nproc-per-node", 2, script, env=env)
             for i in range(2)]
    results = ended(procs)
    assert_one_world_of_4(out, results)
    said = "\n".join(out for _, out in results)
    assert "master: 127.0.0.1 (from env PET_RDZV_ENDPOINT)" in said, said


def test_two_nodes_claiming_one_rank_both_exit_78_naming_it(tmp_path):
    script, out = recorder(tmp_path)
    (rdzv_port,) = free_ports(1)
    common = ["--nnodes", 3, "--rdzv-endpoint", f"127.0.0.1:{rdzv_port}",
              "--nproc-per-node", 1, script]
    env = base_env(TV_RECORD_DIR=out)
    procs = [start(tmp_path, 0, "--node-rank", 0, *common, env=env),
             start(tmp_path, 1, "--node-rank", 1, *common, env=env),
             start(tmp_path, 2, *common, env=base_env(TV_RECORD_DIR=out, TRAINVISOR_NODE_RANK=1))]
    results = ended(procs)
    assert results[0][0] == 78, results[0][1]  # node 0: the job does not start
    for code, said in results[1:]:
        assert code == 78, said  # before: only the second to join was refused
        assert "node rank 1 is claimed by two nodes: host " in said, said
        assert "at 127.0.0.1, pid " in said, said
        assert "rank from --node-rank" in said and "rank from TRAINVISOR_NODE_RANK" in said, said
    assert not list(out.glob("rank_*.json"))  # no worker started anywhere


def test_two_nodes_claiming_node_rank_0_on_one_host_both_exit_78_naming_it(tmp_path):
    script, out = recorder(tmp_path)
    (rdzv_port,) = free_ports(1)
    common = ["--nnodes", 2, "--node-rank", 0, "--rdzv-endpoint", f"127.0.0.1:{rdzv_port}",
              "--nproc-per-node", 1, script]
    env = base_env(TV_RECORD_DIR=out)
    results = ended([start(tmp_path, i, *common, env=env) for i in range(2)])
    for code, said in results:
        # before: one "coordinator cannot listen ... Address already in use" (75), the other
        # waiting out --rdzv-timeout (75)
        assert code == 78, said[-3000:]
        assert "node rank 0 is claimed by two nodes: host " in said, said[-3000:]
    assert "joining the coordinator there as node 0" in "\n".join(s for _, s in results)
    assert not list(out.glob("rank_*.json"))  # no worker started anywhere
