"""structgen: fast, exact structured generation for large language models.

An inference engine builds a :class:`Tokenizer` once per model, compiles a
:class:`Grammar` per request (JSON Schema, Lark, GBNF, regex, a choice of
strings, or llguidance's request format; compiled once per process through a
shared cache), and keeps one :class:`Matcher` per sequence. On every
decoding step it fills the sequence's row of a ``(batch, ceil(vocab / 32))``
int32 bitmask (:meth:`Matcher.fill_next_token_bitmask`, or
:func:`fill_next_token_bitmask_batch` for the whole batch on a thread pool
with the GIL released), masks its logits with it
(:func:`apply_token_bitmask_inplace`), samples, and hands the token back
(:meth:`Matcher.accept_token`, or :func:`accept_token_batch` on the same
thread pool). Stop tokens are allowed exactly when the grammar accepts.

>>> import structgen
>>> tok = structgen.Tokenizer.o200k_base()
>>> grammar = structgen.Grammar.json_schema({"type": "integer"})
>>> m = structgen.Matcher(tok, grammar)
>>> bitmask = structgen.allocate_token_bitmask(1, tok.vocab_size)
>>> m.fill_next_token_bitmask(bitmask, 0)
>>> t = tok.encode("42")[0]
>>> bool(bitmask[0, t // 32] >> (t % 32) & 1)
True
>>> m.accept_token(t), m.is_accepting()
(True, True)

Bitmasks and logits are numpy arrays or CPU torch tensors (read and written
in place through DLPack). Integrations (import them by name; neither imports
its library until used): :mod:`structgen.hf` (a logits processor for
transformers' ``generate``) and :mod:`structgen.llama_cpp` (one for
llama-cpp-python).
"""

from typing import Tuple

import numpy as np

from ._lib import (
    Grammar,
    GrammarError,
    Matcher,
    Tokenizer,
    __version__,
    accept_token_batch,
    apply_token_bitmask_inplace,
    clear_grammar_cache,
    fill_next_token_bitmask_batch,
    grammar_cache_stats,
)

__all__ = [
    "Grammar",
    "GrammarError",
    "Matcher",
    "Tokenizer",
    "__version__",
    "accept_token_batch",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "bitmask_shape",
    "clear_grammar_cache",
    "fill_next_token_bitmask_batch",
    "grammar_cache_stats",
]


def bitmask_shape(batch_size: int, vocab_size: int) -> Tuple[int, int]:
    """The shape of a bitmask for ``batch_size`` sequences over
    ``vocab_size`` token ids: ``(batch_size, ceil(vocab_size / 32))``."""
    return (batch_size, (vocab_size + 31) // 32)


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A C-contiguous int32 bitmask of :func:`bitmask_shape`, every bit set
    (a row nobody fills allows every token). Token ``i`` of row ``b`` is bit
    ``i % 32`` of ``bitmask[b, i // 32]``, the layout of XGrammar and
    llguidance. For a torch tensor, ``torch.from_numpy`` shares its memory."""
    return np.full(bitmask_shape(batch_size, vocab_size), -1, dtype=np.int32)
