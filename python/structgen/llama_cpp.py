"""A logits processor for llama-cpp-python's ``logits_processor`` hook.

>>> from llama_cpp import Llama, LogitsProcessorList
>>> import structgen, structgen.llama_cpp
>>> llm = Llama(model_path="model.gguf")
>>> tok = structgen.Tokenizer.from_json("tokenizer.json")  # the model's
>>> grammar = structgen.Grammar.json_schema({"type": "object", ...})
>>> processor = structgen.llama_cpp.LogitsProcessor(grammar, tok)
>>> out = llm.create_completion(prompt, max_tokens=200,
...                             logits_processor=LogitsProcessorList([processor]))

llama-cpp-python calls the processor before sampling each token with the
whole sequence so far (``input_ids``, 1-D ``intc``: prompt, then generated)
and the next token's logits (``scores``, 1-D ``single``). On the first call
the processor notes the prompt length; on every call it hands the tokens
generated since to its :class:`structgen.Matcher`, fills the mask, and sets
the scores of disallowed tokens to ``-inf`` in place. Stop tokens are
allowed exactly when the grammar accepts, so the model ends the text
itself; llama.cpp stops at its end-of-generation token.

The tokenizer must be the model's: its ``tokenizer.json``
(:meth:`structgen.Tokenizer.from_json`, or ``from_hf``), or the token bytes
of its GGUF vocabulary (:func:`tokenizer_from_llama`; no forced tokens, which
this processor does not use anyway). A processor serves one
completion: make a new one per call, or :meth:`reset` it.
"""

from typing import Any, Optional, Sequence

import numpy as np

from ._lib import Grammar, Matcher, Tokenizer, apply_token_bitmask_inplace

__all__ = ["LogitsProcessor", "tokenizer_from_llama"]


def tokenizer_from_llama(llm: Any) -> Tokenizer:
    """The vocabulary of a loaded ``llama_cpp.Llama`` (its GGUF's tokens),
    for when the model's ``tokenizer.json`` is not at hand: each id's bytes
    through ``llm.detokenize``; an id that reads as nothing unless special
    tokens are rendered is a special token, and ``llm.token_eos()`` is the
    stop token. Built with :meth:`structgen.Tokenizer.from_vocab`: masks are
    exact, forced tokens are off."""
    n = llm.n_vocab()
    tokens = []
    specials = {}
    for i in range(n):
        plain = llm.detokenize([i], special=False)
        if plain:
            tokens.append(plain)
        else:
            name = llm.detokenize([i], special=True)
            tokens.append(b"")
            if name:
                specials[i] = name.decode("utf-8", "replace")
    return Tokenizer.from_vocab(tokens, [llm.token_eos()], specials, vocab_size=n)


class LogitsProcessor:
    """Constrains one llama-cpp-python completion to ``grammar`` (a
    :class:`structgen.Grammar`, or a JSON Schema compiled with
    :meth:`structgen.Grammar.json_schema`) over ``tokenizer``.
    ``stop_tokens`` replaces the tokenizer's (the model's end-of-generation
    token, say)."""

    def __init__(
        self,
        grammar: Any,
        tokenizer: Tokenizer,
        *,
        stop_tokens: Optional[Sequence[int]] = None,
    ) -> None:
        if not isinstance(grammar, Grammar):
            grammar = Grammar.json_schema(grammar)
        self.matcher = Matcher(tokenizer, grammar, stop_tokens=stop_tokens)
        self.prompt_len: Optional[int] = None
        self._bitmask: Optional[np.ndarray] = None

    def reset(self) -> None:
        """Back to the start of the grammar: the next call starts a new
        completion."""
        self.matcher.reset()
        self.prompt_len = None

    def __call__(self, input_ids: Any, scores: np.ndarray) -> np.ndarray:
        ids = np.asarray(input_ids).reshape(-1)
        if self.prompt_len is None:
            self.prompt_len = len(ids)
        generated = ids[self.prompt_len + self.matcher.num_tokens :]
        m = self.matcher
        for t in generated:
            if m.is_terminated() or not m.accept_token(int(t)):
                break
        vocab = scores.shape[-1]
        if self._bitmask is None or self._bitmask.shape[0] * 32 < vocab:
            self._bitmask = np.empty((vocab + 31) // 32, dtype=np.int32)
        m.fill_next_token_bitmask(self._bitmask)
        if scores.flags["C_CONTIGUOUS"]:
            apply_token_bitmask_inplace(scores, self._bitmask)
        else:
            # llama-cpp-python 0.3 passes the `logit` field of its candidate
            # records (a stride of 12 bytes): mask a contiguous copy and
            # write it back. (An exception here would not stop generation:
            # llama-cpp-python reports it and samples unconstrained.)
            dense = np.ascontiguousarray(scores)
            apply_token_bitmask_inplace(dense, self._bitmask)
            scores[...] = dense
        return scores
