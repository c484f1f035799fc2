"""Type stubs and documentation of structgen's extension module.

Arrays: every ``bitmask`` and ``logits`` argument is a numpy array or a CPU
torch tensor (anything with ``__dlpack__`` in host memory), 1-D (one row) or
2-D, contiguous along its last dimension. Bitmasks are int32 (or uint32);
logits float16, bfloat16, float32 or float64. They are written in place. Two
threads must not write the same row at the same time, and nobody may resize
an array while a call that writes it runs (the GIL is released meanwhile).
"""

from os import PathLike
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__version__: str

_Json = Union[str, bytes, Mapping[str, Any], Sequence[Any], int, float, bool, None]
_Path = Union[str, PathLike]

class GrammarError(ValueError):
    """A grammar, schema or request that cannot be compiled.

    ``str(e)`` is ``location: kind: message`` (with the source line and a
    caret for text grammars). The attributes are ``None`` where they do not
    apply.
    """

    kind: str
    """``syntax``, ``unsupported``, ``invalid``, ``unsatisfiable``, ``limit``,
    ``request`` or ``vocabulary``."""
    message: str
    """What went wrong, without the location."""
    line: Optional[int]
    """1-based line, for errors in a text (Lark, GBNF, regex, JSON text)."""
    column: Optional[int]
    """1-based column in characters, for errors in a text."""
    offset: Optional[int]
    """Byte offset from the start of the text."""
    pointer: Optional[str]
    """JSON pointer (RFC 6901), for errors in a schema or a request."""
    keyword: Optional[str]
    """The JSON Schema keyword at fault (``"uniqueItems"``), when one is."""
    grammar_index: Optional[int]
    """The grammar at fault in an llguidance request with several."""
    location: Optional[str]
    """``line:column`` or the quoted pointer, as printed."""

class Tokenizer:
    """A tokenizer's vocabulary as matchers see it, built once and shared:
    the vocabulary trie, the stop tokens (by default every end-of-turn and
    end-of-text special the vocabulary has, such as ``<|eot_id|>`` and
    ``<|end_of_text|>``), the model's vocabulary size (bitmask rows cover
    it), the JSON slicer, and, for BPE tokenizers structgen reproduces
    exactly, forced tokens in the canonical tokenization.

    Every constructor takes ``vocab_size`` (the model's, when its embedding
    is padded past the tokenizer's ids: ids past the tokenizer's are never
    allowed) and ``stop_tokens`` (replacing the default set). Building one
    takes tens of milliseconds to a second (the JSON slicer); keep it.

    Raises ``ValueError`` for a vocabulary that cannot be used (with the
    line, token or component at fault) and ``OSError`` for an unreadable
    file.
    """

    @staticmethod
    def from_json(
        text_or_path: Union[str, bytes, PathLike],
        *,
        vocab_size: Optional[int] = None,
        stop_tokens: Optional[Iterable[int]] = None,
    ) -> "Tokenizer":
        """A Hugging Face ``tokenizer.json``: its text (a ``str`` starting
        with ``{``, or ``bytes``) or a path to it. BPE models (byte-level as
        Llama-3, GPT-2 and Qwen, or SentencePiece-style with byte fallback)."""

    @staticmethod
    def from_hf(
        tokenizer: Any,
        *,
        vocab_size: Optional[int] = None,
        stop_tokens: Optional[Iterable[int]] = None,
    ) -> "Tokenizer":
        """A transformers fast tokenizer (``PreTrainedTokenizerFast``), read
        through ``tokenizer.backend_tokenizer.to_str()`` (added tokens
        included). The stop tokens default to the usual set plus
        ``tokenizer.eos_token_id``."""

    @staticmethod
    def from_tiktoken(
        path_or_ranks: Union[_Path, bytes, Mapping[bytes, int]],
        pattern: str,
        specials: Optional[Mapping[str, int]] = None,
        *,
        vocab_size: Optional[int] = None,
        stop_tokens: Optional[Iterable[int]] = None,
    ) -> "Tokenizer":
        """A tiktoken vocabulary: a ``.tiktoken`` rank file (path or its
        bytes) or tiktoken's ``mergeable_ranks`` dict; ``pattern``, the
        split regex, by name (``"cl100k"``, ``"o200k"``, ``"qwen2"``,
        ``"gpt2"``) or as the regex of one of those (other patterns raise
        ``ValueError``: the exact BPE implements these four); ``specials``,
        name to id."""

    @staticmethod
    def o200k_base(
        *, vocab_size: Optional[int] = None, stop_tokens: Optional[Iterable[int]] = None
    ) -> "Tokenizer":
        """OpenAI's ``o200k_base`` (embedded in the wheel)."""

    @staticmethod
    def cl100k_base(
        *, vocab_size: Optional[int] = None, stop_tokens: Optional[Iterable[int]] = None
    ) -> "Tokenizer":
        """OpenAI's ``cl100k_base`` (embedded in the wheel)."""

    @staticmethod
    def from_vocab(
        tokens: Sequence[Union[bytes, str]],
        stop_tokens: Optional[Iterable[int]] = None,
        special_tokens: Optional[Union[Mapping[int, str], Iterable[int]]] = None,
        *,
        vocab_size: Optional[int] = None,
    ) -> "Tokenizer":
        """A vocabulary from the bytes of each token, indexed by id (an
        engine's id-to-bytes table; empty entries are holes, never allowed).
        ``special_tokens`` are matched by id, never by text: a dict id to
        name, or ids whose entry in ``tokens`` is the name. Without
        ``stop_tokens``, the specials with the usual end-of-sequence names.

        There is no BPE: ``encode`` and ``count`` raise ``ValueError``, and
        matchers compute no forced tokens (``forced_tokens()`` is always
        empty)."""

    @property
    def vocab_size(self) -> int:
        """The number of ids a bitmask row covers (the model's vocabulary
        size when given, else the tokenizer's)."""
    @property
    def stop_tokens(self) -> List[int]:
        """The default stop tokens of matchers over this vocabulary."""
    @property
    def special_tokens(self) -> List[Tuple[str, int]]:
        """The special tokens, ``(name, id)``."""
    @property
    def supports_forced_tokens(self) -> bool:
        """Whether matchers compute forced tokens (a BPE tokenizer whose
        canonical tokenization structgen reproduces)."""
    def encode(self, text: str) -> List[int]:
        """The ids of ``text`` in the canonical BPE tokenization (the
        tokenizer's own ids; special-token names in ``text`` are text)."""
    def count(self, text: str) -> int:
        """``len(encode(text))``, without building the list."""
    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (invalid UTF-8 replaced by U+FFFD; special
        tokens as their names unless skipped)."""
    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of ``ids``."""

class Grammar:
    """A compiled grammar: immutable, shared by every matcher made from it.

    Every constructor compiles through one process-wide cache (256 MiB,
    least recently used out first; errors are cached too), so the same
    schema sent again costs a look-up; the GIL is released while compiling.
    A failure raises :class:`GrammarError` with its location.
    """

    @staticmethod
    def json_schema(
        schema: _Json,
        *,
        whitespace: str = "bounded",
        whitespace_pattern: Optional[str] = None,
        separators: Optional[Tuple[str, str]] = None,
        any_order: bool = False,
        forbid_additional_properties: bool = False,
        max_string_length: Optional[int] = None,
        max_number_length: Optional[int] = None,
        max_key_length: Optional[int] = None,
        max_additional_properties: Optional[int] = None,
        integer_zero_fraction: bool = True,
        coerce_one_of: bool = False,
        lenient: bool = False,
    ) -> "Grammar":
        """A JSON Schema (draft 2020-12, draft-07; a ``dict`` or its JSON
        text) and how its JSON is laid out.

        - ``whitespace``: ``"bounded"`` (a few spaces or tabs, optionally one
          line break and an indentation of at most 64, around each
          structural character: a model cannot loop on whitespace),
          ``"unbounded"`` (any JSON whitespace, as llguidance), ``"compact"``
          (none); ``whitespace_pattern``: a regex of your own instead.
        - ``separators``: ``(item, key)`` regexes, default ``(",", ":")``.
        - ``any_order``: object properties in any order (each at most once,
          the required ones always) instead of schema order.
        - ``forbid_additional_properties``: ``additionalProperties`` is
          ``false`` where the schema leaves it unspecified.
        - ``max_string_length``: a cap on strings without ``maxLength``;
          ``max_number_length``: on numbers (not ``const``/``enum`` ones);
          ``max_key_length``: on keys any text may be
          (``additionalProperties``); ``max_additional_properties``: on the
          members of an object beyond its listed properties. Each makes the
          grammar stricter (what it accepts is still valid) and keeps a
          sampling model from writing one value, key or object forever.
        - ``integer_zero_fraction``: accept ``1.0`` as an integer.
        - ``coerce_one_of``: treat ``oneOf`` as ``anyOf``.
        - ``lenient``: ignore unsupported keywords (see ``warnings``).
        """

    @staticmethod
    def lark(text: str) -> "Grammar":
        """A grammar in llguidance's Lark dialect (``%json { ... }`` embeds
        a schema)."""
    @staticmethod
    def gbnf(text: str) -> "Grammar":
        """A grammar in llama.cpp's GBNF."""
    @staticmethod
    def regex(pattern: str) -> "Grammar":
        """An anchored regular expression (the Rust ``regex`` syntax, no
        look-around or back-references)."""
    @staticmethod
    def choice(options: Sequence[str]) -> "Grammar":
        """Exactly one of ``options``."""
    @staticmethod
    def from_llguidance(request: _Json) -> "Grammar":
        """A request in llguidance's top-level format (a ``dict`` or its JSON
        text): ``{"grammars": [{"json_schema": ...} | {"lark_grammar": ...}],
        "max_tokens": ...}``, with ``x-guidance`` settings in schemas.
        Unknown fields are errors with their pointer."""

    @property
    def kind(self) -> str:
        """``json_schema``, ``lark``, ``gbnf``, ``regex``, ``choice`` or
        ``llguidance``."""
    @property
    def warnings(self) -> List[str]:
        """What compilation ignored and said so (lenient mode)."""
    @property
    def max_tokens(self) -> Optional[int]:
        """The most tokens a matcher may consume (llguidance's
        ``max_tokens``), if set."""
    def accepts(self, text: Union[str, bytes]) -> bool:
        """Whether the grammar accepts ``text`` (byte by byte, no tokenizer)."""

class Matcher:
    """One sequence's state under one grammar: masks, consumed tokens,
    forced tokens.

    Errors are sticky and never raised by the token methods: a rejected
    token, a token after a stop token or a parser limit stops the matcher
    in an error (``error``, ``is_terminated()``); its rows then allow its
    stop tokens only, so a sampler still ends the sequence. ``reset()``
    clears it. Array and argument mistakes (a wrong dtype, shape or index)
    raise ``TypeError``/``ValueError``.

    Matchers are independent: each may be used from its own thread, and one
    failed matcher never affects another. One matcher used by two threads at
    once raises ``RuntimeError`` (it is never silently shared).
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        grammar: Grammar,
        *,
        stop_tokens: Optional[Iterable[int]] = None,
    ) -> None:
        """A matcher at the start of ``grammar``; ``stop_tokens`` replaces
        the tokenizer's for this request (a chat model's end-of-turn token
        only, say). Raises ``ValueError`` when the grammar names a special
        token the vocabulary lacks."""

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None:
        """Writes the mask of the next token into row ``index`` of
        ``bitmask`` (2-D ``(batch, words)``, or 1-D as one row), with the GIL
        released. Every word of the row is written: token ``i`` is bit
        ``i % 32`` of word ``i // 32``; bits past the vocabulary are 0. Rows
        may be wider than ``ceil(vocab_size / 32)`` (a model's padded
        vocabulary), not narrower."""
    def accept_token(self, token: int) -> bool:
        """Consumes ``token``. ``False`` when the grammar does not allow it:
        the matcher is then stopped in that error."""
    def accept_tokens(self, tokens: Iterable[int]) -> int:
        """Consumes the longest prefix of ``tokens`` the grammar allows (a
        speculative draft, forced tokens) and returns its length; the
        matcher stays usable after a rejected token."""
    def validate_tokens(self, tokens: Iterable[int]) -> int:
        """How many of ``tokens``, from the first, the grammar allows in a
        row; nothing is consumed and the matcher stays usable (an id that
        names no token, such as model padding, ends the count)."""
    def rollback(self, n: int) -> None:
        """Undoes the last ``n`` consumed tokens (at most all). Errors stay."""
    def reset(self) -> None:
        """Back to the start of the grammar, errors cleared, settings kept."""
    def fork(self) -> "Matcher":
        """An independent copy at the same position (``copy.copy`` and
        ``copy.deepcopy`` do the same)."""
    def is_accepting(self) -> bool:
        """Whether the text so far is a sentence of the grammar: a stop
        token is allowed now."""
    def is_terminated(self) -> bool:
        """Whether the matcher accepts no more tokens: a stop token was
        consumed, or it is stopped in an error."""
    def forced_tokens(self) -> List[int]:
        """The tokens the grammar forces next, in the tokenizer's canonical
        tokenization whatever follows (append them without a model call,
        then ``accept_tokens`` them). Empty when nothing is forced, for
        ``Tokenizer.from_vocab`` vocabularies, and in an error."""
    @property
    def error(self) -> Optional[str]:
        """Why the matcher is stopped in an error, if it is."""
    @property
    def stop_reason(self) -> Optional[str]:
        """``None`` while text may come; else ``"stop_token"`` (one was
        consumed), ``"no_extension"`` (only a stop token may come),
        ``"max_tokens"`` (the grammar's limit), or ``"error"``."""
    @property
    def stop_tokens(self) -> List[int]:
        """This matcher's stop tokens."""
    @property
    def num_tokens(self) -> int:
        """The number of tokens consumed."""

def fill_next_token_bitmask_batch(
    matchers: Sequence[Matcher],
    bitmask: Any,
    indices: Optional[Sequence[int]] = None,
    *,
    num_threads: Optional[int] = None,
) -> None:
    """Fills row ``indices[i]`` (default ``i``) of ``bitmask`` for
    ``matchers[i]``, in one call that releases the GIL and computes the rows
    in parallel on ``num_threads`` threads: the calling thread and
    ``num_threads - 1`` helpers kept for the process (by default one thread
    per core, or ``RAYON_NUM_THREADS``). Rows not named are left untouched. A matcher that fails
    gets its stop tokens in its row and its error in ``error``; the other
    rows are filled as usual. Raises ``ValueError`` for an index out of
    range or given twice and ``RuntimeError`` for a matcher listed twice."""

def accept_token_batch(
    matchers: Sequence[Matcher],
    tokens: Sequence[int],
    *,
    num_threads: Optional[int] = None,
) -> List[bool]:
    """Hands ``tokens[i]`` to ``matchers[i]`` (as :meth:`Matcher.accept_token`)
    for every ``i``, in one call that releases the GIL and runs on the same
    thread pool as :func:`fill_next_token_bitmask_batch`; returns whether
    each token was accepted (a refused one stops its matcher in an error,
    as ``accept_token`` does). Raises ``ValueError`` when the lengths differ and
    ``RuntimeError`` for a matcher listed twice."""

def apply_token_bitmask_inplace(
    logits: Any, bitmask: Any, indices: Optional[Sequence[int]] = None
) -> None:
    """Sets ``logits[b, i]`` to negative infinity wherever bit ``i`` of
    ``bitmask[b]`` is 0, for every row ``b`` (or those in ``indices``), with
    the GIL released. ``logits`` is ``(batch, vocab)`` or ``(vocab,)``;
    ``bitmask`` has as many rows. Logits past ``32 * words`` (a model's
    padded vocabulary) are masked too."""

def grammar_cache_stats() -> Dict[str, int]:
    """The process-wide compile cache's counters: ``hits``, ``misses``,
    ``evictions``, ``entries``, ``bytes``, ``max_bytes``."""

def clear_grammar_cache() -> None:
    """Drops every grammar of the process-wide compile cache."""
