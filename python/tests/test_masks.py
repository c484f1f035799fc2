"""Masks through the binding: the bitmask layout against a per-token oracle
(the matcher's own consume path), batches against one by one, several
Python threads against a sequential run, and the batch call running without
the GIL."""

import sys
import threading

import numpy as np
import pytest

import structgen
from structgen import Grammar, Matcher

from conftest import allowed

SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string", "maxLength": 12},
        "tags": {"type": "array", "items": {"enum": ["a", "bc", "d e"]}},
    },
    "required": ["id", "name"],
}
DOCS = ['{"id": 12, "name": "Ann", "tags": ["bc"]}', '{"id":-3,"name":"x y z"}', '{ "id": 0, "name": "" }']


def oracle(m, vocab_size):
    """The allowed ids as the consume path sees them: token by token."""
    return [t for t in range(vocab_size) if m.validate_tokens([t]) == 1]


def test_bitmask_layout_equals_the_per_token_oracle():
    # A byte-level vocabulary: every byte, some multi-byte tokens, holes,
    # a special, and a model vocabulary padded past it (ids 300..330).
    tokens = [bytes([b]) for b in range(256)] + [b'{"', b'":', b", ", b"", b'"id', b"na", b"me"]
    tokens += [b"<eos>"]
    eos = len(tokens) - 1
    tok = structgen.Tokenizer.from_vocab(tokens, [eos], [eos], vocab_size=331)
    g = Grammar.json_schema(SCHEMA)
    for doc in DOCS:
        m = Matcher(tok, g)
        bitmask = structgen.allocate_token_bitmask(2, 331)
        for i, byte in enumerate(doc.encode()):
            m.fill_next_token_bitmask(bitmask, i % 2)
            row = bitmask[i % 2]
            assert allowed(row, 10**9) == oracle(m, 263 + 1), (doc, i)
            # Bits past the vocabulary (and the padding) are 0.
            assert all(int(w) == 0 for w in row[(263 + 1 + 31) // 32 :])
            assert m.accept_token(byte)
            assert m.validate_tokens([259]) == 0 and m.error is None  # a hole
        m.fill_next_token_bitmask(bitmask, 0)
        assert allowed(bitmask[0], 331) == [eos]


def test_bitmask_layout_on_llama3(llama3):
    g = Grammar.json_schema(SCHEMA)
    m = Matcher(llama3, g)
    ids = llama3.encode(DOCS[0])
    bitmask = structgen.allocate_token_bitmask(1, llama3.vocab_size)
    rng = np.random.default_rng(11)
    for step in range(0, len(ids), 3):
        m.fill_next_token_bitmask(bitmask)
        got = set(allowed(bitmask[0], llama3.vocab_size))
        # Every allowed id, and a sample of the others, against the oracle.
        probe = sorted(got | set(rng.integers(0, llama3.vocab_size, 3000).tolist()))
        assert ids[step] in got
        for t in probe:
            assert (m.validate_tokens([t]) == 1) == (t in got), (step, t)
        assert m.accept_tokens(ids[step : step + 3]) == len(ids[step : step + 3])


def walks(tok, n):
    """``n`` matchers, each walking one of DOCS, and their token lists."""
    out = []
    for i in range(n):
        ids = tok.encode(DOCS[i % len(DOCS)])
        out.append((Matcher(tok, Grammar.json_schema(SCHEMA)), ids))
    return out


def sequential_masks(tok, n):
    """Every row of every step, one matcher at a time."""
    rows = []
    for m, ids in walks(tok, n):
        mine = []
        b = structgen.allocate_token_bitmask(1, tok.vocab_size)
        for t in ids:
            m.fill_next_token_bitmask(b)
            mine.append(b[0].copy())
            assert m.accept_token(t)
        rows.append(mine)
    return rows


def test_batch_equals_one_by_one(llama3):
    n = 7
    expected = sequential_masks(llama3, n)
    ms = walks(llama3, n)
    steps = max(len(ids) for _, ids in ms)
    b = structgen.allocate_token_bitmask(n + 2, llama3.vocab_size)
    for step in range(steps):
        live = [(i, m, ids) for i, (m, ids) in enumerate(ms) if step < len(ids)]
        # Rows in reverse order, two spare rows untouched.
        indices = [n + 1 - i for i, _, _ in live]
        b[:] = 7
        structgen.fill_next_token_bitmask_batch([m for _, m, _ in live], b, indices, num_threads=2)
        for (i, m, ids), row in zip(live, indices):
            assert (b[row] == expected[i][step]).all(), (i, step)
            assert m.accept_token(ids[step])
        assert (b[0] == 7).all()


def test_python_threads_give_the_sequential_masks(llama3):
    n = 6
    expected = sequential_masks(llama3, n)
    got = [None] * n
    errors = []

    def run(i, m, ids):
        try:
            b = structgen.allocate_token_bitmask(1, llama3.vocab_size)
            mine = []
            for t in ids:
                m.fill_next_token_bitmask(b)
                mine.append(b[0].copy())
                assert m.accept_token(t)
            got[i] = mine
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i, m, ids)) for i, (m, ids) in enumerate(walks(llama3, n))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(n):
        assert len(got[i]) == len(expected[i])
        for a, e in zip(got[i], expected[i]):
            assert (a == e).all()


def test_batch_accept_equals_one_by_one(llama3):
    # Fills and accepts both through the pool, as an engine's step does;
    # every third step a matcher is handed a token its grammar refuses.
    n = 7
    expected = sequential_masks(llama3, n)
    ms = walks(llama3, n)
    steps = max(len(ids) for _, ids in ms)
    b = structgen.allocate_token_bitmask(n, llama3.vocab_size)
    refused = {}
    for step in range(steps):
        live = [(i, m, ids) for i, (m, ids) in enumerate(ms) if step < len(ids) and i not in refused]
        if not live:
            break
        structgen.fill_next_token_bitmask_batch([m for _, m, _ in live], b, [i for i, _, _ in live], num_threads=2)
        tokens = []
        for i, m, ids in live:
            assert (b[i] == expected[i][step]).all(), (i, step)
            bad = step == 3 and i % 3 == 0
            tokens.append(llama3.encode("}}")[0] if bad else ids[step])
        out = structgen.accept_token_batch([m for _, m, _ in live], tokens, num_threads=2)
        for (i, m, _), ok in zip(live, out):
            bad = step == 3 and i % 3 == 0
            assert ok == (not bad), (i, step)
            if bad:
                assert m.error is not None
                refused[i] = step
    assert refused and all(ms[i][0].is_accepting() for i in range(n) if i not in refused)


def test_batch_accept_checks_its_arguments():
    tok = structgen.Tokenizer.from_vocab([b"a", b"b"])
    m = Matcher(tok, Grammar.regex("a*"))
    with pytest.raises(ValueError, match="2 tokens"):
        structgen.accept_token_batch([m], [0, 0])
    with pytest.raises(RuntimeError, match="in use"):
        structgen.accept_token_batch([m, m], [0, 0])
    with pytest.raises(TypeError, match="not a structgen.Matcher"):
        structgen.accept_token_batch([m, 3], [0, 0])
    assert structgen.accept_token_batch([], []) == []


def test_one_matcher_twice_in_a_batch_is_an_error():
    tok = structgen.Tokenizer.from_vocab([b"a", b"b"])
    m = Matcher(tok, Grammar.regex("a*"))
    b = structgen.allocate_token_bitmask(2, 2)
    with pytest.raises(RuntimeError, match="in use"):
        structgen.fill_next_token_bitmask_batch([m, m], b)


def test_the_batch_call_runs_without_the_gil(llama3):
    # A Python thread counts while the batch call runs; with the GIL held
    # for the call it could not run at all in between (the switch interval
    # is raised so that the interpreter does not hand it the GIL by itself).
    schema = {"type": "object", "properties": {f"k{i}": {"type": "string"} for i in range(40)}}
    ms = [Matcher(llama3, Grammar.json_schema(schema)) for _ in range(48)]
    # Inside a string, where the mask is the largest.
    prefix = llama3.encode('{"k0": "ab')
    for m in ms:
        assert m.accept_tokens(prefix) == len(prefix)
    b = structgen.allocate_token_bitmask(len(ms), llama3.vocab_size)
    inside = [False]
    seen_inside = [0]
    stop = [False]

    def spin():
        while not stop[0]:
            if inside[0]:
                seen_inside[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.05)
    t = threading.Thread(target=spin)
    try:
        t.start()
        for _ in range(3):
            inside[0] = True
            structgen.fill_next_token_bitmask_batch(ms, b, num_threads=1)
            inside[0] = False
    finally:
        stop[0] = True
        t.join()
        sys.setswitchinterval(old)
    assert seen_inside[0] > 0, "no other Python thread ran during fill_next_token_bitmask_batch"
