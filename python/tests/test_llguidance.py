"""Differential test against llguidance's own wheel (the ``llguidance``
package, pinned in xtask/src/registry.rs): on a subset of the MaskBench dev
split with the Llama-3 ``tokenizer.json``, for every schema both compile,
at every step of every valid instance, our ``Matcher.fill_next_token_bitmask``
writes the same bitmask row as llguidance's ``LLMatcher`` through
``llguidance.numpy.fill_next_token_bitmask``.

The differences the Rust differential documents (compare/tests/it/
maskbench-documented.tsv, each reason a test that shows which side is
right) are honoured: those schemas are walked but a difference there is
not a failure.

One difference is llguidance's Python matcher's own: where the grammar
forces bytes, its mask allows only the first token of their canonical
tokenization (``compute_ff_tokens()[0]``), where ours allows every token the
grammar allows (and offers the canonical tokens through
``Matcher.forced_tokens()``). At such a step llguidance's row must be that
one token and our row must contain it.

``STRUCTGEN_MASKBENCH_STRIDE=K`` changes the subset (every K-th schema) and
``STRUCTGEN_MASKBENCH_WALKS=N`` the valid instances walked per schema.
"""

import json
import os

import numpy as np
import pytest

import structgen
from structgen import Grammar, Matcher

import numpy as np

from conftest import REPO, bits, read_data

STRIDE = int(os.environ.get("STRUCTGEN_MASKBENCH_STRIDE", "40"))
WALKS = int(os.environ.get("STRUCTGEN_MASKBENCH_WALKS", "2"))
DOCUMENTED = REPO / "compare" / "tests" / "it" / "maskbench-documented.tsv"


def documented():
    names = {}
    for line in DOCUMENTED.read_text().splitlines():
        if line and not line.startswith("#"):
            name, reason = line.split("\t")
            names[name] = reason
    return names


def non_control_escape(token):
    """Whether a token spells (part of) a ``\\uXXXX`` escape of a character
    that is not a control character: llguidance allows those in the keys of
    additional properties, we do not (compare's
    ``unicode_escapes_in_additional_keys`` test)."""
    text = token.decode("utf-8", "replace")
    i = text.find("\\u")
    while i >= 0:
        hexd = ""
        for c in text[i + 2 : i + 6]:
            if c not in "0123456789abcdefABCDEF":
                break
            hexd += c
        hexd = hexd.lower()
        if not any(hexd[: min(len(hexd), len(c))] == c[: min(len(hexd), len(c))] for c in ("000", "001", "007f")):
            return True
        i = text.find("\\u", i + 2)
    return False


def ip_future_upper_case(token):
    """Whether a token opens an upper-case ``[V`` IP-future URI host, which
    RFC 3986 allows and llguidance does not (compare's
    ``uri_ip_future_upper_case`` test)."""
    return b"[V" in token


@pytest.fixture(scope="module")
def engines(tmp_path_factory, llama3_json, llama3):
    llguidance = pytest.importorskip("llguidance", reason="SKIPPED: the llguidance wheel is not installed")
    import llguidance.numpy

    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    path.write_text(llama3_json)
    theirs = llguidance.LLTokenizer(str(path))
    ours = llama3
    assert theirs.vocab_size == ours.vocab_size
    return llguidance, theirs, ours


def first_difference(engines, grammar, their_start, text, counts):
    llguidance, ltok, tok = engines
    eos = ltok.eos_tokens
    ids = tok.encode(text)
    mine = Matcher(tok, grammar, stop_tokens=eos)
    theirs = their_start.deep_copy()
    b = structgen.allocate_token_bitmask(2, tok.vocab_size)
    for step in range(len(ids) + 1):
        mine.fill_next_token_bitmask(b, 0)
        llguidance.numpy.fill_next_token_bitmask(theirs, b, 1)
        if theirs.is_error() or mine.error:
            return None
        if not (b[0] == b[1]).all():
            mine_bits, theirs_bits = bits(b[0], tok.vocab_size), bits(b[1], tok.vocab_size)
            ff = theirs.compute_ff_tokens()
            if theirs_bits.sum() == 1 and ff and theirs_bits[ff[0]] and mine_bits[ff[0]]:
                # llguidance's canonical forcing, in our row too.
                counts["forced"] += 1
                counts["forced_same_first"] += mine.forced_tokens()[:1] == ff[:1]
                ours_only = theirs_only = []
            else:
                ours_only = [
                    int(t)
                    for t in np.flatnonzero(mine_bits & ~theirs_bits)
                    if not ip_future_upper_case(tok.decode_bytes([int(t)]))
                ]
                theirs_only = [
                    int(t)
                    for t in np.flatnonzero(theirs_bits & ~mine_bits)
                    if not non_control_escape(tok.decode_bytes([int(t)]))
                ]
            if ours_only or theirs_only:
                return (
                    f"step {step} after ...{tok.decode(ids[:step])[-60:]!r}: "
                    f"llguidance only {[tok.decode([t]) for t in theirs_only[:8]]} ({len(theirs_only)}), "
                    f"ours only {[tok.decode([t]) for t in ours_only[:8]]} ({len(ours_only)})"
                )
        if step == len(ids):
            break
        t = ids[step]
        if not mine.accept_token(t) or not theirs.consume_token(t):
            return None
    return None


def test_masks_equal_llguidance_on_maskbench(engines):
    llguidance = engines[0]
    docs = documented()
    lines = read_data("maskbench differential", "maskbench/dev.jsonl.gz").splitlines()
    schemas = both = walks = 0
    counts = {"forced": 0, "forced_same_first": 0}
    differences = []
    for line in lines[::STRIDE]:
        rec = json.loads(line)
        schemas += 1
        request = {"grammars": [{"json_schema": rec["schema"]}]}
        try:
            ours = Grammar.from_llguidance(request)
        except ValueError:
            continue
        their_grammar = llguidance.LLMatcher.grammar_from_json_schema(rec["schema"])
        theirs = llguidance.LLMatcher(engines[1], their_grammar, log_level=0)
        if theirs.is_error():
            continue
        both += 1
        valid = [t for t in rec.get("tests", []) if t.get("valid") is True]
        for t in valid[:WALKS]:
            walks += 1
            d = first_difference(engines, ours, theirs, json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False), counts)
            if d is not None:
                if rec["name"] not in docs:
                    differences.append(f"{rec['name']}: {d}")
                break
    print(
        f"maskbench differential (Python): {schemas} schemas, {both} compiled by both, "
        f"{walks} valid instances walked, {len(differences)} differing; "
        f"{counts['forced']} steps where llguidance allowed only its canonical forced token "
        f"(ours forced the same first token at {counts['forced_same_first']})"
    )
    assert both > schemas // 2
    assert not differences, "\n".join(differences)
