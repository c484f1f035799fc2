"""A logits processor for Hugging Face transformers' ``generate``.

>>> from transformers import AutoModelForCausalLM, AutoTokenizer
>>> import structgen, structgen.hf
>>> hf_tok = AutoTokenizer.from_pretrained(name)
>>> model = AutoModelForCausalLM.from_pretrained(name)
>>> grammar = structgen.Grammar.json_schema({"type": "object", ...})
>>> processor = structgen.hf.LogitsProcessor(grammar, hf_tok)
>>> out = model.generate(**hf_tok(prompts, return_tensors="pt", padding=True),
...                      logits_processor=[processor], max_new_tokens=200)

The processor keeps one :class:`structgen.Matcher` per row of the batch.
On the first call it notes the prompt length; on every later call it hands
each row's newly sampled token to that row's matcher, fills the batch's
bitmask rows on a thread pool with the GIL released, and sets the scores of
disallowed tokens to ``-inf``. Rows whose matcher consumed a stop token are
left unmasked (transformers keeps computing finished rows and pads them).

Forced tokens are not used here: ``generate`` samples one token per step,
and the masks alone keep every row inside the grammar. Beam search reorders
rows between steps, which a matcher per row cannot follow; use sampling or
greedy decoding. A processor serves one ``generate`` call: make a new one
(cheap: the grammar and tokenizer are shared) or call :meth:`reset`.

torch is needed only for tensors that live on an accelerator; on the CPU the
scores are masked in place through DLPack, and numpy arrays work too (which
is how the tests drive it without torch).
"""

from typing import Any, List, Optional, Union

import numpy as np

from ._lib import (
    Grammar,
    Matcher,
    Tokenizer,
    accept_token_batch,
    apply_token_bitmask_inplace,
    fill_next_token_bitmask_batch,
)

__all__ = ["LogitsProcessor"]


class LogitsProcessor:
    """Constrains every row of a ``generate`` batch to ``grammar``.

    ``tokenizer`` is a :class:`structgen.Tokenizer` or a transformers fast
    tokenizer (read with :meth:`structgen.Tokenizer.from_hf`; pass a
    ``structgen.Tokenizer`` to build it once for many processors).
    ``grammar`` is a :class:`structgen.Grammar`, or a JSON Schema (``dict``
    or JSON text) compiled with :meth:`structgen.Grammar.json_schema`.
    ``stop_tokens`` replaces the tokenizer's (the model's
    ``generation_config.eos_token_id``, say).
    """

    def __init__(
        self,
        grammar: Union[Grammar, Any],
        tokenizer: Union[Tokenizer, Any],
        *,
        stop_tokens: Optional[List[int]] = None,
        num_threads: Optional[int] = None,
    ) -> None:
        if not isinstance(tokenizer, Tokenizer):
            tokenizer = Tokenizer.from_hf(tokenizer)
        if not isinstance(grammar, Grammar):
            grammar = Grammar.json_schema(grammar)
        self.tokenizer = tokenizer
        self.grammar = grammar
        self.stop_tokens = stop_tokens
        self.num_threads = num_threads
        self.reset()

    def reset(self) -> None:
        """Forgets the batch: the next call starts new sequences."""
        self.matchers: List[Matcher] = []
        self.prompt_len: Optional[int] = None
        self.steps = 0
        self._bitmask: Optional[np.ndarray] = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """``input_ids``: ``(batch, length)`` ids so far (prompt and
        generated); ``scores``: ``(batch, vocab)`` logits, masked in place
        and returned. torch tensors or numpy arrays."""
        ids = _to_numpy(input_ids)
        batch, length = ids.shape
        if self.prompt_len is None:
            self.prompt_len = length
            self.matchers = [
                Matcher(self.tokenizer, self.grammar, stop_tokens=self.stop_tokens)
                for _ in range(batch)
            ]
        elif len(self.matchers) != batch or length != self.prompt_len + self.steps + 1:
            raise ValueError(
                f"structgen.hf.LogitsProcessor: expected {len(self.matchers)} rows of "
                f"{self.prompt_len + self.steps + 1} ids, got {batch} of {length}: "
                "a processor serves one generate() call without beam search (call reset() to reuse it)"
            )
        else:
            live = [(m, int(t)) for m, t in zip(self.matchers, ids[:, -1]) if not m.is_terminated()]
            accept_token_batch(
                [m for m, _ in live], [t for _, t in live], num_threads=self.num_threads
            )
            self.steps += 1
        vocab = scores.shape[-1]
        if self._bitmask is None or self._bitmask.shape != (batch, (vocab + 31) // 32):
            self._bitmask = np.empty((batch, (vocab + 31) // 32), dtype=np.int32)
        bitmask = self._bitmask
        fill_next_token_bitmask_batch(self.matchers, bitmask, num_threads=self.num_threads)
        for i, m in enumerate(self.matchers):
            # A finished row is padding from now on: leave its scores alone
            # (all -inf would make the sampler's probabilities NaN).
            if m.stop_reason == "stop_token":
                bitmask[i] = -1
        return _apply(scores, bitmask)


def _to_numpy(a: Any) -> np.ndarray:
    """A host copy (or view) of ``a``, a torch tensor or an array."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "detach"):  # torch
        return a.detach().cpu().numpy()
    return np.asarray(a)


def _apply(scores: Any, bitmask: np.ndarray) -> Any:
    """Masks ``scores`` in place (host memory) or on its device (torch)."""
    device = getattr(scores, "device", None)
    if device is None or getattr(device, "type", "cpu") == "cpu":
        apply_token_bitmask_inplace(scores, bitmask)
        return scores
    import torch  # an accelerator tensor: expand the bits there

    words = torch.from_numpy(bitmask).to(device)
    shifts = torch.arange(32, device=device, dtype=torch.int32)
    bits = ((words.unsqueeze(-1) >> shifts) & 1).bool().flatten(1)
    vocab = scores.shape[-1]
    allowed = bits[:, :vocab]
    if allowed.shape[1] < vocab:
        pad = torch.zeros(allowed.shape[0], vocab - allowed.shape[1], dtype=torch.bool, device=device)
        allowed = torch.cat([allowed, pad], dim=1)
    return scores.masked_fill_(~allowed, float("-inf"))
