"""The integrations: structgen.hf.LogitsProcessor and
structgen.llama_cpp.LogitsProcessor.

Their calling conventions are driven here with numpy arrays, as
transformers' ``generate`` and llama-cpp-python call them, so CI (which has
neither library) checks their logic. The tests with the real libraries skip
loudly when torch + transformers or llama-cpp-python are not installed.
"""

import importlib.util
import json
import os

import numpy as np
import pytest

import structgen
import structgen.hf
import structgen.llama_cpp
from structgen import Grammar, Tokenizer

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 99}, "ok": {"type": "boolean"}},
    "required": ["n", "ok"],
    "additionalProperties": False,
}


def optional(*modules):
    """Skips (always, even under STRUCTGEN_REQUIRE_DATA=1) when a module is
    missing: CI does not install these libraries."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"SKIPPED: {', '.join(missing)} not installed (CI does not install it)")


def sample(scores, rng):
    """A token drawn uniformly from the finite scores (a model that knows
    nothing: the grammar alone shapes the text)."""
    ok = np.flatnonzero(np.isfinite(scores))
    assert len(ok) > 0, "every token masked"
    return int(rng.choice(ok))


def test_hf_processor_drives_a_batch(o200k):
    rng = np.random.default_rng(7)
    grammar = Grammar.json_schema(SCHEMA, whitespace="compact")
    proc = structgen.hf.LogitsProcessor(grammar, o200k)
    batch, vocab = 3, o200k.vocab_size + 50  # a model vocabulary padded past the tokenizer's
    eos = o200k.stop_tokens[0]
    ids = np.full((batch, 4), 1, dtype=np.int64)  # a padded prompt
    done = [False] * batch
    for _ in range(80):
        scores = np.zeros((batch, vocab), dtype=np.float32)
        out = proc(ids, scores)
        assert out is scores
        nxt = []
        for b in range(batch):
            if done[b]:
                # transformers pads finished rows; their scores are left alone.
                assert np.isfinite(scores[b]).all()
                nxt.append(0)
                continue
            assert np.isneginf(scores[b, o200k.vocab_size :]).all()
            t = sample(scores[b], rng)
            done[b] = t == eos
            nxt.append(t)
        ids = np.concatenate([ids, np.array(nxt)[:, None]], axis=1)
        if all(done):
            break
    assert all(done), "the grammar ends every row within 80 tokens"
    for b, m in enumerate(proc.matchers):
        # The last row to finish never hands its stop token to the
        # processor (generate ends first).
        assert m.error is None and (m.stop_reason == "stop_token" or m.is_accepting())
        row = list(ids[b, 4:])
        text = o200k.decode(row[: row.index(eos)] if eos in row else row)
        v = json.loads(text)
        assert set(v) == {"n", "ok"} and 0 <= v["n"] <= 99
    with pytest.raises(ValueError, match="one generate"):
        proc(ids[:, :-3], np.zeros((batch, vocab), dtype=np.float32))
    proc.reset()
    proc(ids[:2], np.zeros((2, vocab), dtype=np.float32))
    assert len(proc.matchers) == 2


def test_hf_processor_takes_a_schema_dict(o200k):
    proc = structgen.hf.LogitsProcessor({"type": "boolean"}, o200k)
    scores = np.zeros((1, o200k.vocab_size), dtype=np.float32)
    proc(np.zeros((1, 2), dtype=np.int64), scores)
    allowed = {o200k.decode([t]) for t in np.flatnonzero(np.isfinite(scores[0]))}
    assert allowed and all("true".startswith(a) or "false".startswith(a) for a in allowed)


def test_llama_cpp_processor_drives_a_completion(o200k):
    rng = np.random.default_rng(3)
    proc = structgen.llama_cpp.LogitsProcessor(Grammar.regex("[0-9]{2,4}"), o200k)
    eos = o200k.stop_tokens[0]
    ids = np.array([5, 6, 7], dtype=np.intc)  # the prompt
    for _ in range(10):
        scores = np.zeros(o200k.vocab_size, dtype=np.single)
        assert proc(ids, scores) is scores
        t = sample(scores, rng)
        if t == eos:
            break
        ids = np.append(ids, np.intc(t))
    else:
        pytest.fail("no stop token within 10 tokens")
    text = o200k.decode(ids[3:])
    assert text.isdigit() and 2 <= len(text) <= 4
    proc.reset()
    scores = np.zeros(o200k.vocab_size, dtype=np.single)
    proc(np.array([1], dtype=np.intc), scores)
    assert not np.isfinite(scores[eos])


class FakeLlama:
    """The part of llama_cpp.Llama that tokenizer_from_llama reads."""

    def __init__(self, pieces, specials, eos):
        self.pieces, self.specials, self.eos = pieces, specials, eos

    def n_vocab(self):
        return len(self.pieces)

    def detokenize(self, ids, special=False):
        (i,) = ids
        if i in self.specials:
            return self.specials[i].encode() if special else b""
        return self.pieces[i]

    def token_eos(self):
        return self.eos


def test_tokenizer_from_llama():
    pieces = [b"a", b"b", b" ab", b"", b"{"]
    tok = structgen.llama_cpp.tokenizer_from_llama(FakeLlama(pieces, {3: "<|im_end|>"}, 3))
    assert tok.vocab_size == 5 and tok.stop_tokens == [3]
    assert tok.special_tokens == [("<|im_end|>", 3)]
    m = structgen.Matcher(tok, Grammar.regex("a+"))
    assert m.validate_tokens([0, 0, 1]) == 2


def test_hf_transformers_end_to_end():
    optional("torch", "transformers")
    import torch
    from transformers import LogitsProcessorList

    # No model download in tests: a hand-made "model" of uniform logits,
    # run through transformers' own LogitsProcessorList.
    tok = Tokenizer.o200k_base()
    proc = structgen.hf.LogitsProcessor(Grammar.json_schema({"type": "boolean"}), tok)
    procs = LogitsProcessorList([proc])
    ids = torch.zeros((2, 3), dtype=torch.long)
    for _ in range(6):
        scores = procs(ids, torch.zeros((2, tok.vocab_size)))
        nxt = scores.argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
    for row in ids[:, 3:].tolist():
        assert tok.decode(row, skip_special_tokens=True) in ("true", "false")


def test_llama_cpp_python_end_to_end():
    optional("llama_cpp")
    model = os.environ.get("STRUCTGEN_MODEL")
    if not model:
        pytest.skip("SKIPPED: STRUCTGEN_MODEL (cargo xtask model) not set")
    from llama_cpp import Llama, LogitsProcessorList

    llm = Llama(model_path=model, n_ctx=256, verbose=False)
    tok = structgen.llama_cpp.tokenizer_from_llama(llm)
    # Integers without a zero fraction (`4.0` is an integer to JSON Schema,
    # not to `int`), bounded so that the answer ends within the budget.
    schema = {"type": "integer", "minimum": 0, "maximum": 1000}
    grammar = Grammar.json_schema(schema, integer_zero_fraction=False)
    proc = structgen.llama_cpp.LogitsProcessor(grammar, tok)
    out = llm.create_completion(
        "Seven times six is ", max_tokens=8, logits_processor=LogitsProcessorList([proc])
    )
    assert 0 <= int(out["choices"][0]["text"]) <= 1000
