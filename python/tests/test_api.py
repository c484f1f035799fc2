"""The Python API and its error paths: tokenizers, grammars and their
errors, matchers, arrays, and panics turned into exceptions."""

import copy
import json

import numpy as np
import pytest

import structgen
from structgen import Grammar, GrammarError, Matcher, Tokenizer

from conftest import allowed


# A small vocabulary whose masks are known by construction: digits, letters,
# punctuation, and an end-of-sequence special at id 40.
SMALL = [str(d) for d in range(10)] + list("abcdefghijklmnopqrstuvwxyz") + ['"', "{", "}", ":"]
EOS = 40


@pytest.fixture(scope="module")
def small():
    return Tokenizer.from_vocab(SMALL + ["<eos>"], stop_tokens=[EOS], special_tokens=[EOS])


# --- Tokenizer -------------------------------------------------------------


def test_o200k_encodes_counts_and_decodes(o200k):
    text = "Hello, world! 12345"
    ids = o200k.encode(text)
    assert o200k.count(text) == len(ids) > 0
    assert o200k.decode(ids) == text
    assert o200k.decode_bytes(ids) == text.encode()
    assert o200k.vocab_size >= 200_000
    assert ("<|endoftext|>", 199999) in o200k.special_tokens
    assert o200k.stop_tokens == [199999]
    assert o200k.supports_forced_tokens
    assert o200k.decode([199999]) == "<|endoftext|>"
    assert o200k.decode([199999], skip_special_tokens=True) == ""


def test_tokenizer_settings_and_errors():
    cl = Tokenizer.cl100k_base(vocab_size=100_352, stop_tokens=[100257])
    assert cl.vocab_size == 100_352
    assert cl.stop_tokens == [100257]
    with pytest.raises(ValueError, match="smaller than"):
        Tokenizer.cl100k_base(vocab_size=10)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        Tokenizer.cl100k_base(stop_tokens=[10**7])
    with pytest.raises(ValueError, match="past the vocabulary"):
        cl.decode([10**7])
    with pytest.raises(OSError, match="cannot read"):
        Tokenizer.from_json("/nonexistent/tokenizer.json")
    with pytest.raises(ValueError, match="tokenizer.json"):
        Tokenizer.from_json('{"model": 3}')
    with pytest.raises(TypeError, match="path"):
        Tokenizer.from_json(12)


def test_from_json_takes_text_bytes_and_paths(tmp_path, llama3_json, llama3):
    path = tmp_path / "tokenizer.json"
    path.write_text(llama3_json)
    for source in (str(path), path, llama3_json.encode()):
        t = Tokenizer.from_json(source)
        assert t.vocab_size == llama3.vocab_size == 128_256
    # Llama-3's default stop set: every end-of-turn and end-of-text special.
    assert set(llama3.stop_tokens) == {128001, 128009}  # <|end_of_text|>, <|eot_id|>
    assert llama3.encode("Hello world") == [9906, 1917]


def test_from_tiktoken_takes_a_rank_dict():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    tok = Tokenizer.from_tiktoken(ranks, "gpt2", {"<|end|>": 257})
    assert tok.encode("ab a") == [256, 32, 97]
    assert tok.stop_tokens == [257]
    with pytest.raises(ValueError, match="unsupported split pattern"):
        Tokenizer.from_tiktoken(ranks, r"\w+")
    with pytest.raises(ValueError, match="tiktoken file"):
        Tokenizer.from_tiktoken(b"not base64 at all\n", "gpt2")


def test_from_vocab(small):
    assert small.vocab_size == 41
    assert small.stop_tokens == [EOS]
    assert not small.supports_forced_tokens
    assert small.decode([1, 2, EOS]) == "12<eos>"
    with pytest.raises(ValueError, match="no BPE"):
        small.encode("12")
    named = Tokenizer.from_vocab([b"x", b"", b"y"], special_tokens={5: "</s>"}, vocab_size=8)
    assert named.vocab_size == 8
    assert named.stop_tokens == [5]  # `</s>` is a default stop name
    with pytest.raises(TypeError, match="token 1"):
        Tokenizer.from_vocab([b"a", 3])


# --- Grammar and GrammarError ----------------------------------------------


def test_grammar_kinds_compile_and_accept():
    g = Grammar.json_schema({"type": "integer", "minimum": 3})
    assert g.kind == "json_schema" and g.accepts("7") and not g.accepts("2")
    assert Grammar.json_schema('{"type": "string"}').accepts(b'"x"')
    assert Grammar.lark('start: "a" | "b"').accepts("b")
    assert Grammar.gbnf('root ::= "x" [0-9]+').accepts("x12")
    assert Grammar.regex("[a-z]{2}").accepts("ab")
    assert Grammar.choice(["yes", "no"]).accepts("no")
    req = {"grammars": [{"json_schema": {"type": "boolean"}}], "max_tokens": 5}
    g = Grammar.from_llguidance(req)
    assert g.kind == "llguidance" and g.max_tokens == 5 and g.accepts("true")
    assert Grammar.from_llguidance(json.dumps(req)).max_tokens == 5
    assert repr(g) == "<structgen.Grammar llguidance>"


def test_json_schema_layout_options():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    assert Grammar.json_schema(schema).accepts('{"a": 1, "b": 2}')
    assert not Grammar.json_schema(schema, whitespace="compact").accepts('{"a": 1, "b": 2}')
    assert Grammar.json_schema(schema, whitespace="compact").accepts('{"a":1,"b":2}')
    assert not Grammar.json_schema(schema).accepts('{"b":2,"a":1}')
    assert Grammar.json_schema(schema, any_order=True).accepts('{"b":2,"a":1}')
    assert Grammar.json_schema(schema, separators=(", ", ": ")).accepts('{"a": 1, "b": 2}')
    assert not Grammar.json_schema(schema, forbid_additional_properties=True).accepts(
        '{"a":1,"b":2,"c":3}'
    )
    assert Grammar.json_schema({"type": "string"}, max_string_length=2).accepts('"ab"')
    assert not Grammar.json_schema({"type": "string"}, max_string_length=2).accepts('"abc"')
    num = Grammar.json_schema({"type": "number"}, max_number_length=3)
    assert num.accepts("1.5") and not num.accepts("1.25")
    obj = Grammar.json_schema(
        {"type": "object"}, whitespace="compact", max_key_length=2, max_additional_properties=1
    )
    assert obj.accepts('{"ab":1}')
    assert not obj.accepts('{"abc":1}')
    assert not obj.accepts('{"a":1,"b":2}')
    assert Grammar.json_schema({"type": "integer"}).accepts("1.0")
    assert not Grammar.json_schema({"type": "integer"}, integer_zero_fraction=False).accepts("1.0")
    with pytest.raises(ValueError, match="whitespace must be"):
        Grammar.json_schema(schema, whitespace="wide")


def test_grammar_errors_carry_their_location():
    with pytest.raises(GrammarError) as e:
        Grammar.lark('start: "a" foo')
    assert isinstance(e.value, ValueError)
    assert (e.value.line, e.value.column) == (1, 12)
    assert e.value.location == "1:12" and e.value.pointer is None
    assert e.value.kind == "invalid" and "foo" in e.value.message

    with pytest.raises(GrammarError) as e:
        Grammar.json_schema({"type": "object", "properties": {"a": {"minLength": "x"}}})
    assert e.value.pointer == "/properties/a" and e.value.line is None
    assert e.value.keyword == "minLength"

    with pytest.raises(GrammarError) as e:
        Grammar.json_schema('{"type":\n  "integer",,}')
    assert e.value.kind == "syntax" and (e.value.line, e.value.column) == (2, 13)

    with pytest.raises(GrammarError) as e:
        Grammar.from_llguidance({"grammars": [{"json_schema": {}, "bogus": 1}]})
    assert e.value.kind == "request" and e.value.pointer == "/grammars/0/bogus"

    with pytest.raises(GrammarError) as e:
        Grammar.choice([])
    assert e.value.kind == "unsatisfiable"

    with pytest.raises(GrammarError, match="unclosed group"):
        Grammar.regex("(a")

    with pytest.raises(TypeError, match=r'a set at "/enum"'):
        Grammar.json_schema({"enum": {1, 2}})


def test_the_compile_cache_is_shared_by_the_process():
    structgen.clear_grammar_cache()
    before = structgen.grammar_cache_stats()
    schema = {"type": "array", "items": {"type": "string", "maxLength": 7}}
    Grammar.json_schema(schema)
    Grammar.json_schema(json.loads(json.dumps(schema)))
    after = structgen.grammar_cache_stats()
    assert after["misses"] - before["misses"] == 1
    assert after["hits"] - before["hits"] == 1
    assert after["entries"] == 1 and 0 < after["bytes"] <= after["max_bytes"]
    # Errors are cached too.
    for _ in range(2):
        with pytest.raises(GrammarError):
            Grammar.lark("start: nope")
    assert structgen.grammar_cache_stats()["hits"] - after["hits"] == 1


# --- Matcher ---------------------------------------------------------------


def row_of(m, vocab_size):
    bitmask = structgen.allocate_token_bitmask(1, vocab_size)
    m.fill_next_token_bitmask(bitmask)
    return allowed(bitmask[0], vocab_size)


def test_matcher_walks_a_grammar(small):
    m = Matcher(small, Grammar.regex("[0-9]{2}"))
    assert row_of(m, small.vocab_size) == list(range(10))
    assert m.accept_token(4) and m.accept_token(2)
    assert m.is_accepting() and m.num_tokens == 2
    assert row_of(m, small.vocab_size) == [EOS]
    assert m.stop_reason == "no_extension" and not m.is_terminated()
    assert m.accept_token(EOS)
    assert m.is_terminated() and m.stop_reason == "stop_token"
    assert row_of(m, small.vocab_size) == []
    m.reset()
    assert m.num_tokens == 0 and m.stop_reason is None
    assert row_of(m, small.vocab_size) == list(range(10))


def test_rejection_is_sticky_until_reset(small):
    m = Matcher(small, Grammar.regex("[0-9]+"))
    assert not m.accept_token(12)  # "c"
    assert m.error is not None and "not allowed" in m.error
    assert m.is_terminated() and m.stop_reason == "error" and not m.is_accepting()
    assert not m.accept_token(1)
    assert m.validate_tokens([1, 2]) == 0
    assert row_of(m, small.vocab_size) == [EOS]  # the stop tokens only
    m.rollback(1)
    assert m.error is not None
    m.reset()
    assert m.error is None and m.accept_token(1)
    assert not m.accept_token(10**6)  # an id past the vocabulary is a rejection too


def test_validate_accept_rollback_and_fork(small):
    m = Matcher(small, Grammar.regex("[0-9]{3}"))
    assert m.validate_tokens([1, 2, 3, 4]) == 3 and m.num_tokens == 0
    assert m.accept_tokens(np.array([1, 2, 12])) == 2 and m.error is None
    f = m.fork()
    assert f.accept_token(3) and f.is_accepting()
    assert not m.is_accepting() and m.num_tokens == 2
    m.rollback(1)
    assert m.num_tokens == 1
    assert copy.deepcopy(f).num_tokens == copy.copy(f).num_tokens == 3


def test_per_request_stop_tokens(llama3):
    g = Grammar.json_schema({"type": "boolean"})
    m = Matcher(llama3, g, stop_tokens=[128009])
    assert m.stop_tokens == [128009]
    assert m.accept_token(llama3.encode("true")[0])
    assert row_of(m, llama3.vocab_size) == [128009]
    with pytest.raises(ValueError, match="not in the vocabulary"):
        Matcher(llama3, g, stop_tokens=[10**7])


def test_forced_tokens(o200k, small):
    g = Grammar.json_schema(
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        whitespace="compact",
    )
    m = Matcher(o200k, g)
    forced = m.forced_tokens()
    # The forced bytes are `{"name":"`; the tokens cover them up to the last
    # boundary no continuation can move.
    assert forced and '{"name":"'.startswith(o200k.decode(forced))
    assert m.accept_tokens(forced) == len(forced)
    assert Matcher(small, Grammar.regex("abc")).forced_tokens() == []


def test_grammar_naming_an_unknown_special_token(small):
    with pytest.raises(ValueError, match="cannot start a matcher"):
        Matcher(small, Grammar.lark("start: <|nope|>"))


# --- Arrays ----------------------------------------------------------------


def test_bitmask_argument_errors(small):
    m = Matcher(small, Grammar.regex("[0-9]"))
    words = (small.vocab_size + 31) // 32
    with pytest.raises(TypeError, match="numpy array or a CPU torch tensor"):
        m.fill_next_token_bitmask([[0] * words])
    with pytest.raises(TypeError, match="int32"):
        m.fill_next_token_bitmask(np.zeros((1, words), dtype=np.float32))
    with pytest.raises(ValueError, match="needs 2"):
        m.fill_next_token_bitmask(np.zeros((1, 1), dtype=np.int32))
    with pytest.raises(ValueError, match="out of range"):
        m.fill_next_token_bitmask(np.zeros((2, words), dtype=np.int32), 2)
    with pytest.raises(ValueError, match="1 or 2 dimensions"):
        m.fill_next_token_bitmask(np.zeros((1, 1, words), dtype=np.int32))
    with pytest.raises(ValueError, match="contiguous"):
        m.fill_next_token_bitmask(np.zeros((1, 2 * words), dtype=np.int32)[:, ::2])
    ro = np.zeros((1, words), dtype=np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="DLPack"):
        m.fill_next_token_bitmask(ro)
    with pytest.raises(OverflowError):
        m.fill_next_token_bitmask(np.zeros((1, words), dtype=np.int32), -1)


def test_rows_of_other_layouts(small):
    m = Matcher(small, Grammar.regex("[0-9]"))
    words = (small.vocab_size + 31) // 32
    # 1-D, uint32, strided rows (every other row of a larger array), wider rows.
    one = np.zeros(words, dtype=np.uint32)
    m.fill_next_token_bitmask(one)
    assert allowed(one, small.vocab_size) == list(range(10))
    big = np.full((4, words + 3), 7, dtype=np.int32)
    m.fill_next_token_bitmask(big[::2], 1)
    assert allowed(big[2], 10**6) == list(range(10))
    assert list(big[0]) == [7] * (words + 3) and list(big[1]) == [7] * (words + 3)


def test_apply_token_bitmask_inplace():
    vocab = 70
    bitmask = np.zeros((2, 3), dtype=np.int32)
    bitmask[0, 0] = 0b101  # tokens 0 and 2
    bitmask[1, 2] = 1 << 3  # token 67
    for dtype in (np.float32, np.float64, np.float16):
        logits = np.ones((2, vocab + 40), dtype=dtype)  # padded past 3 words
        structgen.apply_token_bitmask_inplace(logits, bitmask)
        assert list(np.flatnonzero(np.isfinite(logits[0]))) == [0, 2]
        assert list(np.flatnonzero(np.isfinite(logits[1]))) == [67]
        assert np.isneginf(logits[0, 1]) and logits.dtype == dtype
    logits = np.ones((2, vocab), dtype=np.float32)
    structgen.apply_token_bitmask_inplace(logits, bitmask, indices=[1])
    assert np.isfinite(logits[0]).all()
    one = np.ones(vocab, dtype=np.float32)
    structgen.apply_token_bitmask_inplace(one, bitmask[1])
    assert list(np.flatnonzero(np.isfinite(one))) == [67]
    with pytest.raises(ValueError, match="rows"):
        structgen.apply_token_bitmask_inplace(np.ones((3, vocab), dtype=np.float32), bitmask)
    with pytest.raises(TypeError, match="float"):
        structgen.apply_token_bitmask_inplace(np.ones((2, vocab), dtype=np.int32), bitmask)


def test_allocate_token_bitmask():
    b = structgen.allocate_token_bitmask(3, 65)
    assert b.shape == (3, 3) and b.dtype == np.int32 and (b == -1).all()
    assert structgen.bitmask_shape(2, 64) == (2, 2)


# --- Panics ----------------------------------------------------------------


@pytest.mark.parametrize("in_pool", [False, True])
def test_a_panic_is_an_exception_not_an_abort(in_pool):
    with pytest.raises(BaseException, match="a test panic") as e:
        structgen._lib._test_panic(in_pool)
    assert type(e.value).__name__ == "PanicException"
    # The interpreter is fine, and so is the pool.
    structgen._lib._test_panic.__name__
