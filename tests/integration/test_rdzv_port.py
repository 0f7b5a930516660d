"""The coordinator's rendezvous port under hostile traffic (docs/coordination.md, "Security"),
against the real binary on 127.0.0.1.

Covered: a flood of 300+ idle unauthenticated connections, re-opened as soon as the coordinator
closes one (an attacker holding the port), does not keep a real 2-node job from starting and
finishing; a slowloris stranger (a valid-looking header, one byte at a time) is closed by the
handshake deadline, not by the rendezvous timeout; with no --rdzv-token and no platform job id,
`run` warns that the key is public and names the fix; a peer's text (exit codes, summaries) is
never trusted: a key holder's hostile failure report lands escaped and bounded in the failure
file, its exit code range-checked.

No timed assertions: timeouts only stop hangs. Environment (set by ctest): TRAINVISOR_BIN,
TV_HELPERS, TV_SOURCE_DIR, TV_PYTHON.
"""
import hashlib
import hmac
import json
import os
import socket
import struct
import subprocess
import threading
import time

import pytest

from test_multinode import TIMEOUT_S, expect_rc, jobs, output, worker  # noqa: F401 (fixture)

FLOOD = 320


def wait_listening(port, proc):
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, output(proc)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail("the coordinator never listened")


class Flood:
    """FLOOD idle connections to a port, each re-opened as soon as the peer closes it."""

    def __init__(self, port, count=FLOOD):
        self.port, self.count = port, count
        self.stop = threading.Event()
        self.reopened = 0
        self.threads = [threading.Thread(target=self.hold, daemon=True) for _ in range(8)]

    def connect(self):
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            s.setblocking(False)
            return s
        except OSError:
            return None

    def hold(self):
        socks = [self.connect() for _ in range(self.count // len(self.threads))]
        while not self.stop.is_set():
            for i, s in enumerate(socks):
                if s is None:
                    socks[i] = self.connect()
                    continue
                try:
                    data = s.recv(4096)  # the hello; b"" once the coordinator closes us
                    if data:
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                s.close()
                socks[i] = self.connect()
                self.reopened += 1
            time.sleep(0.02)
        for s in socks:
            if s:
                s.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)


def test_a_flood_of_idle_connections_does_not_lock_the_nodes_out(jobs):
    job = jobs(2, peer_timeout=30, rdzv_timeout=90)
    node0 = job.start(0, worker(job, "ok"))
    wait_listening(job.rdzv_port, node0)
    with Flood(job.rdzv_port):
        time.sleep(2)  # the flood is in place before node 1 arrives (order only)
        node1 = job.start(1, worker(job, "ok"))
        expect_rc(job, node0, 0)
        expect_rc(job, node1, 0)
    assert sorted(job.records(0)) == [0, 1]
    log = output(node0)
    assert "rendezvous timed out" not in log, log


def slowloris(port, results):
    """A valid-looking frame header sent one byte a second; records when it was cut off."""
    start = time.monotonic()
    header = bytes.fromhex("54565244") + b"\x01\x10\x00\x00" + bytes(12) + b"\x00\x00\x00\x02"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            for b in header:
                s.sendall(bytes([b]))
                time.sleep(1.0)
            s.settimeout(60)
            while s.recv(4096):
                pass
    except OSError:
        pass
    results.append(time.monotonic() - start)


def garbage(port, count):
    """count connections that each send a burst of non-protocol bytes and hang up."""
    for _ in range(count):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"\x16\x03\x01\x02\x00" + bytes(range(256)) * 4)
        except OSError:
            pass


def test_slowloris_strangers_are_cut_off_by_the_handshake_deadline(jobs):
    # peer timeout 120 s: the old handshake timeout (10 s, checked every 30 s) would hold them
    job = jobs(2, peer_timeout=120, rdzv_timeout=120)
    node0 = job.start(0, worker(job, "ok"))
    wait_listening(job.rdzv_port, node0)
    cut = []
    slow = [threading.Thread(target=slowloris, args=(job.rdzv_port, cut)) for _ in range(20)]
    for t in slow:
        t.start()
    garbage(job.rdzv_port, 50)
    for t in slow:
        t.join(timeout=TIMEOUT_S)
    node1 = job.start(1, worker(job, "ok"))
    expect_rc(job, node0, 0)
    expect_rc(job, node1, 0)
    # The header trickles in over 24 s; the handshake deadline cuts every stranger off well before.
    assert len(cut) == 20 and max(cut) < 20, cut
    assert "logging every 1000th" in output(node0)  # the log stays bounded too


# --- a key holder: the public key of a job with no --rdzv-token and no platform job id ---------

PUBLIC_KEY = hashlib.sha256(b"trainvisor-rdzv-v1:").hexdigest().encode()
HEADER = ">IBBHiiII"


class RogueAgent:
    """Speaks the rendezvous protocol (docs/coordination.md, "Protocol") with a known key."""

    def __init__(self, port, rank, nnodes, key=PUBLIC_KEY):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.key, self.rank, self.nnodes = key, rank, nnodes
        self.seq_out = self.seq_in = 0
        self.buf = b""
        self.ctx = bytes(32)
        hello = self.recv()
        assert hello["type"] == 1, hello
        self.coord_nonce = bytes.fromhex(hello["body"]["nonce"])
        self.ctx = self.coord_nonce + bytes(16)
        my_nonce = os.urandom(16)
        self.send(16, {"nonce": my_nonce.hex(), "nnodes": nnodes, "node_id": os.urandom(16).hex()})
        self.ctx = self.coord_nonce + my_nonce

    def tag(self, direction, header, payload):
        return hmac.new(self.key, direction + self.ctx + header + payload, hashlib.sha256).digest()

    def send(self, msg_type, body, generation=0):
        payload = json.dumps(body).encode()
        header = struct.pack(HEADER, 0x54565244, 2, msg_type, 0, self.rank, generation,
                             self.seq_out, len(payload))
        self.seq_out += 1
        self.sock.sendall(header + payload + self.tag(b"C", header, payload))

    def recv(self):
        while True:
            if len(self.buf) >= 24:
                _, _, t, _, rank, gen, seq, n = struct.unpack(HEADER, self.buf[:24])
                if len(self.buf) >= 24 + n + 32:
                    payload = self.buf[24:24 + n]
                    assert self.buf[24 + n:56 + n] == self.tag(b"A", self.buf[:24], payload)
                    self.buf = self.buf[56 + n:]
                    self.seq_in += 1
                    return {"type": t, "generation": gen, "body": json.loads(payload)}
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data

    def recv_type(self, wanted):
        while True:
            m = self.recv()
            if m is None or m["type"] in wanted:
                return m


def public_job_argv(job, rank, command):
    argv = job.argv(rank, command)
    i = argv.index("--rdzv-token")
    return argv[:i] + argv[i + 2:]


def test_no_token_and_no_job_id_warns_that_the_key_is_public(jobs):
    job = jobs(2)
    procs = []
    for rank in range(2):
        log = open(job.tmp / f"node{rank}.log", "wb")
        p = subprocess.Popen(public_job_argv(job, rank, worker(job, "ok")), env=job.env(),
                             cwd=job.tmp, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        p.log_path = job.tmp / f"node{rank}.log"
        job.procs[f"node{rank}"] = p
        procs.append(p)
    for p in procs:
        expect_rc(job, p, 0)
    for p in procs:
        log = output(p)
        assert "public" in log and "--rdzv-token" in log and "TRAINVISOR_RDZV_TOKEN" in log, log


def node0_for_a_rogue(job):
    """Node 0 of a public job, listening. The rogue agent sends no node fingerprint
    (docs/coordination.md, "Node fingerprint"), which node 0 would refuse before any start: these
    tests are about what a started peer may claim, so node 0 runs with --node-fingerprint off."""
    log = open(job.tmp / "node0.log", "wb")
    argv = public_job_argv(job, 0, worker(job, "sleep"))
    at = argv.index("--no-python")
    argv[at:at] = ["--node-fingerprint", "off"]
    node0 = subprocess.Popen(argv, env=job.env(), cwd=job.tmp, stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    node0.log_path = job.tmp / "node0.log"
    job.procs["node0"] = node0
    wait_listening(job.rdzv_port, node0)
    return node0


def test_a_peers_exit_code_and_text_are_untrusted(jobs):
    job = jobs(2, max_restarts=0)
    node0 = node0_for_a_rogue(job)
    # Exit code 0 in a failure report would end a failed job with "success": refused.
    rogue = RogueAgent(job.rdzv_port, 1, 2)
    assert rogue.recv_type({2})["type"] == 2  # welcome
    start = rogue.recv_type({3})
    rogue.send(18, {"exit_code": 0, "summary": "all good"}, start["generation"])
    cut_off = rogue.recv_type({4, 6, 7})  # no stop: the rogue is cut off as a bad peer
    assert cut_off is None or cut_off["type"] == 7, cut_off
    expect_rc(job, node0, 75)
    assert "all good" not in output(node0)

    # Text: control characters and a forged log line arrive escaped, bounded.
    job2 = jobs(2, max_restarts=0)
    node0 = node0_for_a_rogue(job2)
    rogue = RogueAgent(job2.rdzv_port, 1, 2)
    start = rogue.recv_type({3})
    evil = "boom\n2026-01-01 00:00:00 [info] every node succeeded\x1b[2J\x07" + "x" * 4000
    rogue.send(18, {"exit_code": 3, "summary": evil}, start["generation"])
    assert rogue.recv_type({4})["type"] == 4  # stop
    rogue.send(19, {}, start["generation"])  # stopped
    assert rogue.recv_type({6})["type"] == 6  # give up
    expect_rc(job2, node0, 3)
    text = output(node0) + (job2.tmp / "failure0").read_text(errors="replace")
    assert "\x1b" not in text and "\x07" not in text, text
    assert "\n2026-01-01 00:00:00 [info] every node succeeded" not in text, text
    assert "boom\\n2026-01-01" in text, text
