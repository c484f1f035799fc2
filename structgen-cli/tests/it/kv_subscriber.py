"""A KV-event subscriber written from vLLM's documented protocol alone.

It shares no code with the Rust publisher: it decodes the messages with
`msgpack`, talks ZeroMQ through `pyzmq` (libzmq), recomputes every block hash
from the chained-hash definition in structgen-kv-events' manual (SipHash-2-4
written out here from the paper), keeps a block-level index of the cache, and
after every batch compares the index's prefix answers with the expectations
the Rust test computed from `RadixCache::prefix_len_in`.

Usage: python kv_subscriber.py CONFIG.json  (the Rust test drives stdin/out:
this prints "ready", later "joined", and exits 0 when every check passed).
"""

import gzip
import json
import sys
import time

import msgpack
import zmq

MASK = (1 << 64) - 1
DEADLINE = time.monotonic() + 100.0


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK


def sipround(v0, v1, v2, v3):
    v0 = (v0 + v1) & MASK
    v1 = rotl(v1, 13) ^ v0
    v0 = rotl(v0, 32)
    v2 = (v2 + v3) & MASK
    v3 = rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & MASK
    v3 = rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & MASK
    v1 = rotl(v1, 17) ^ v2
    v2 = rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(k0, k1, data):
    """SipHash-2-4 (Aumasson and Bernstein, 2012) of `data` under (k0, k1)."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    end = len(data) - len(data) % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
        v0 ^= m
    b = ((len(data) & 0xFF) << 56) | int.from_bytes(data[end:], "little")
    v3 ^= b
    v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
    v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
    v0 ^= b
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


# The paper's test vectors (appendix A): key 00..0f, messages 00..(n-1).
_K0 = int.from_bytes(bytes(range(8)), "little")
_K1 = int.from_bytes(bytes(range(8, 16)), "little")
assert siphash24(_K0, _K1, b"") == 0x726FDB47DD0E0E31
assert siphash24(_K0, _K1, bytes(range(15))) == 0xA129CA6149BE45E5

_memo = {}


def block_hash(key, parent, namespace, tokens):
    """The documented chained block hash."""
    memo_key = (parent, namespace, tokens)
    h = _memo.get(memo_key)
    if h is None:
        head = b"\x00" if parent is None else b"\x01" + parent.to_bytes(8, "little")
        body = namespace.to_bytes(8, "little") + b"".join(t.to_bytes(4, "little") for t in tokens)
        h = siphash24(key[0], key[1], head + body)
        _memo[memo_key] = h
    return h


STORED_KEYS = ["type", "block_hashes", "parent_block_hash", "token_ids", "block_size",
               "lora_id", "medium", "lora_name"]
REMOVED_KEYS = ["type", "block_hashes", "medium"]


def normalize(event, layout):
    """The event as a dict, checking it has exactly vLLM's layout."""
    if layout == "map":
        if not isinstance(event, dict):
            fail(f"expected a tagged map, got {event!r:.80}")
        keys = list(event.keys())
        want = {"BlockStored": STORED_KEYS, "BlockRemoved": REMOVED_KEYS,
                "AllBlocksCleared": ["type"]}.get(event.get("type"))
        if keys != want:
            fail(f"map keys {keys} are not vLLM's {want}")
        return event
    if not isinstance(event, list) or not event:
        fail(f"expected a tagged array, got {event!r:.80}")
    want = {"BlockStored": STORED_KEYS, "BlockRemoved": REMOVED_KEYS,
            "AllBlocksCleared": ["type"]}.get(event[0])
    if want is None or len(event) != len(want):
        fail(f"array event {event!r:.80} does not have vLLM's fields")
    return dict(zip(want, event))


class Subscriber:
    def __init__(self, name, ctx, cfg, probes, drop_one_live=False):
        self.name = name
        self.cfg = cfg
        self.probes = probes
        self.key = cfg["hash_key"]
        self.index = set()
        self.last = -1
        self.gaps = 0
        self.replays = 0
        self.live = 0
        self.drop_one_live = drop_one_live
        self.dropped = False
        self.sub = ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.SUBSCRIBE, cfg["topic"].encode())
        self.sub.connect(cfg["endpoint"])
        self.replay_socket = ctx.socket(zmq.DEALER)
        self.replay_socket.connect(cfg["replay_endpoint"])

    def done(self):
        return self.last >= self.cfg["batches"] - 1

    def apply(self, seq, payload):
        batch = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        if not (isinstance(batch, list) and len(batch) == 3 and isinstance(batch[0], float)):
            fail(f"{self.name}: batch {seq} is not [ts, events, rank]: {batch!r:.80}")
        if batch[2] != 0:
            fail(f"{self.name}: data_parallel_rank {batch[2]!r}")
        b = self.cfg["block_size"]
        for raw in batch[1]:
            ev = normalize(raw, self.cfg["layout"])
            kind = ev["type"]
            if kind == "BlockStored":
                ns = ev["lora_id"] or 0
                want_name = self.cfg["lora_names"].get(str(ns))
                if ev["lora_name"] != want_name or ev["medium"] != "GPU" or ev["block_size"] != b:
                    fail(f"{self.name}: bad BlockStored fields {ev!r:.200}")
                tokens = ev["token_ids"]
                hashes = ev["block_hashes"]
                if len(tokens) != b * len(hashes):
                    fail(f"{self.name}: {len(tokens)} tokens for {len(hashes)} blocks")
                parent = ev["parent_block_hash"]
                if parent is not None and parent not in self.index:
                    fail(f"{self.name}: parent {parent} unknown at batch {seq}")
                for k, h in enumerate(hashes):
                    want = block_hash(self.key, parent, ns, tuple(tokens[k * b : (k + 1) * b]))
                    if h != want:
                        fail(f"{self.name}: block hash {h} != recomputed {want} at batch {seq}")
                    if h in self.index:
                        fail(f"{self.name}: block {h} stored twice")
                    self.index.add(h)
                    parent = h
            elif kind == "BlockRemoved":
                if ev["medium"] != "GPU":
                    fail(f"{self.name}: bad medium {ev!r:.80}")
                for h in ev["block_hashes"]:
                    if h not in self.index:
                        fail(f"{self.name}: removal of unknown block {h} at batch {seq}")
                    self.index.remove(h)
            else:
                self.index.clear()
        self.last = seq
        self.check(seq)

    def check(self, seq):
        expected = self.cfg["expected"][seq]
        for i, (ns, chain) in enumerate(self.probes):
            got = 0
            for h in chain:
                if h not in self.index:
                    break
                got += 1
            if got != expected[i]:
                fail(f"{self.name}: after batch {seq}, prompt {i} matches {got} blocks "
                     f"in the index, the cache says {expected[i]}")

    def replay_from(self, start):
        """Asks the ROUTER for everything from `start`, applies it."""
        self.replays += 1
        self.replay_socket.send_multipart([b"", start.to_bytes(8, "big")])
        while True:
            if not self.replay_socket.poll(10_000):
                fail(f"{self.name}: no replay answer within 10 s")
            frames = self.replay_socket.recv_multipart()
            if len(frames) != 3 or frames[0] != b"":
                fail(f"{self.name}: bad replay frames {frames!r:.80}")
            seq = int.from_bytes(frames[1], "big", signed=True)
            if seq == -1:
                if frames[2] != b"":
                    fail(f"{self.name}: end marker with a payload")
                return
            if seq > self.last + 1:
                fail(f"{self.name}: replay skipped from {self.last} to {seq}")
            if seq == self.last + 1:
                self.apply(seq, frames[2])

    def poll_live(self, timeout_ms):
        """One live message (or, after an idle wait, a replay of the tail)."""
        if not self.sub.poll(timeout_ms):
            if not self.done():
                self.replay_from(self.last + 1)
            return
        frames = self.sub.recv_multipart()
        if len(frames) != 3 or frames[0] != self.cfg["topic"].encode() or len(frames[1]) != 8:
            fail(f"{self.name}: not vLLM's three frames: {frames!r:.80}")
        seq = int.from_bytes(frames[1], "big")
        self.live += 1
        if self.drop_one_live and not self.dropped and seq < self.cfg["batches"] - 1:
            self.dropped = True  # simulated loss: the next message shows a gap
            return
        if seq <= self.last:
            return
        if seq > self.last + 1:
            self.gaps += 1
            self.replay_from(self.last + 1)
            if seq <= self.last:
                return
        self.apply(seq, frames[2])


def prompts(cfg):
    """The probe prompts' chained hashes, from the trace file itself."""
    out = []
    b = cfg["block_size"]
    with gzip.open(cfg["trace"], "rt") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    lines.sort(key=lambda r: r["timestamp"])  # stable, like the Rust reader
    for i, r in enumerate(lines[: cfg["requests"]]):
        tokens = [h * 512 + j for h in r["hash_ids"] for j in range(512)][: r["input_length"]]
        ns = cfg["namespaces"][i]
        chain, parent = [], None
        for k in range(len(tokens) // b):
            parent = block_hash(cfg["hash_key"], parent, ns, tuple(tokens[k * b : (k + 1) * b]))
            chain.append(parent)
        out.append((ns, chain))
    return out


def main():
    cfg = json.load(open(sys.argv[1]))
    probes = prompts(cfg)
    ctx = zmq.Context()
    early = Subscriber("early", ctx, cfg, probes)
    print("ready", flush=True)
    half = cfg["batches"] // 2
    while early.last < half - 1:
        if time.monotonic() > DEADLINE:
            fail("early subscriber: deadline passed in the first half")
        early.poll_live(200)
    # The late joiner: replay from 0, then follow live (losing one message).
    late = Subscriber("late", ctx, cfg, probes, drop_one_live=True)
    late.replay_from(0)
    if late.last != half - 1:
        fail(f"late joiner replayed up to {late.last}, expected {half - 1}")
    print("joined", flush=True)
    while not (early.done() and late.done()):
        if time.monotonic() > DEADLINE:
            fail(f"deadline passed: early at {early.last}, late at {late.last}")
        for s in (early, late):
            if not s.done():
                s.poll_live(50)
    if early.index != late.index:
        fail("the late joiner's index differs from the early subscriber's")
    if not late.dropped or late.gaps < 1:
        fail(f"the late joiner saw {late.live} live messages and {late.gaps} gaps: "
             "the simulated loss was not detected")
    print(f"ok: {cfg['batches']} batches, {len(early.index)} blocks at the end, "
          f"early {early.gaps} gaps {early.replays} replays, "
          f"late {late.gaps} gaps {late.replays} replays", flush=True)


main()
