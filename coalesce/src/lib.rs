//! Forced tokens without model calls, always in the canonical tokenization.
//!
//! In structured output much of the text is dictated by the grammar: keys,
//! punctuation, closing brackets. When the grammar allows exactly one
//! continuation for the next bytes (the *forced bytes*, computed by the
//! parser: `earley::Parser::forced_bytes`), those bytes can be appended
//! without asking the model. They must be appended as the tokens the
//! tokenizer itself would produce for the final text (the canonical
//! tokenization), or the model sees a sequence it was never trained on and
//! its distribution shifts (the .txt "coalescence" trap; SGLang's
//! jump-forward removed for that reason). This crate turns forced bytes into
//! such tokens, holding back the bytes that could still merge with what
//! follows (token healing), and does the same at the prompt boundary.
//!
//! # Example
//! ```
//! use std::sync::Arc;
//! use structgen_coalesce::{Coalescer, Next, Tail};
//!
//! let tok = Arc::new(bpe::Tokenizer::o200k_base());
//! let c = Coalescer::new(tok.clone());
//! let tail = Tail::new(); // nothing generated yet
//! // The grammar forces `{"name":"`, then a letter `J` or `P` follows.
//! let mut next = Next::default();
//! for b in [b'J', b'P'] {
//!     next.bytes[(b >> 6) as usize] |= 1 << (b & 63);
//! }
//! let f = c.forced_tokens(&tail, br#"{"name":""#, &next);
//! assert_eq!(tok.decode_to_string(&f.tokens).unwrap(), r#"{"name":""#);
//! assert_eq!(f.tokens, tok.encode(r#"{"name":"Paul"}"#)[..f.tokens.len()]);
//! ```
//!
//! # Algorithm (and why it is canonical)
//! Canonical BPE tokenization (tiktoken, Hugging Face byte-level) first cuts
//! the text into *pieces* with the vocabulary's split pattern, then encodes
//! each piece on its own. So the tokens of a piece depend on that piece's
//! bytes only, and the question "are these tokens certain?" reduces to "is
//! this piece certain?".
//!
//! 1. **Final boundaries** (`pieces.rs`). A piece boundary of a known text
//!    is *final* when no appended text can move it (nor any boundary before
//!    it). For the built-in patterns the piece from a true boundary `s` to
//!    `e` reads past `e` only to see a greedy run end (one character), to
//!    scan a whitespace run the piece starts with, to try a contraction
//!    (`'ll`: three characters from the apostrophe), or to backtrack over a
//!    non-ASCII letter-or-mark run (o200k's two letter classes overlap). So
//!    `e` is final when a character follows it, those runs end inside the
//!    text, and three characters exist from the last apostrophe. A
//!    property test checks the rule
//!    against splitting random extensions; `DESIGN.md` (beside this crate's
//!    `Cargo.toml`) has the details.
//! 2. **The tail** ([`Tail`]). The generated text is tracked from its last
//!    final boundary that is also a token boundary: everything before it is
//!    settled forever, and pre-tokenizing from there gives the true pieces.
//! 3. **Forced tokens** ([`Coalescer::forced_tokens`]). Take the tail
//!    followed by the forced bytes, find its last final boundary `p`, and
//!    encode the pieces before `p`. The end of the text itself is final when
//!    every continuation the grammar allows next (EOS, a special token, or
//!    each allowed ASCII byte, one per class of bytes the split patterns
//!    treat alike) leaves all pieces in place. Those tokens are the
//!    canonical tokens of every final text, whatever the model generates
//!    later, because the pieces before `p` cannot change and each piece is
//!    encoded on its own. They must start with the tail's generated tokens
//!    (the join is itself canonical); if they do not, the generated tokens
//!    were not canonical in this context and nothing is forced. The bytes
//!    after `p` are held back: the next sampled token must cover them, which
//!    the grammar's mask already enforces.
//!
//! Nothing in this relies on BPE being stable under appending inside a
//! piece (it is not): a piece whose end may still move is never emitted,
//! except an ASCII word that no vocabulary token can straddle past its end
//! with an allowed byte ([`Coalescer::with_trie`]), where BPE provably
//! cannot merge across the end.
//! The price is holding back the whole last piece where llguidance holds
//! back only the tokens a grammar-allowed token could extend; the benchmark
//! `cargo xtask bench coalesce` measures both.
//!
//! **Prompt boundary** ([`Coalescer::process_prompt`]): the prompt's tail
//! and the grammar's forced prefix are tokenized together the same way; the
//! prompt bytes after the last final boundary are *healed* (removed from the
//! prompt, for the model to generate first).
//!
//! **Alternatives** ([`alternatives`]): every token path that spells a
//! forced text, fewest tokens first, for callers that want to choose among
//! them (the .txt framework). Canonical stays the default.
//!
//! # Complexity
//! `t` = bytes of the tail plus the forced bytes (a few pieces), `c` = the
//! classes of ASCII bytes the grammar allows next (at most 26).
//! [`Tail::push`] and [`Coalescer::forced_tokens`] cost `O(t)` for
//! pre-tokenization plus `O(c · t)` for the end check, plus BPE of the
//! certain pieces. No allocation beyond the result and a few small buffers.
//!
//! # Memory
//! The tail: a few dozen bytes and tokens (capped at 4 KiB; past that the
//! tail is cut at a final boundary and forcing pauses until it realigns).
//!
//! # Panics
//! None on any input.
//!
//! # Features
//! None.
//!
//! # Boundaries
//! Depends on `bpe` (pre-tokenization and canonical tokenization) and
//! `toktrie` (token paths for alternatives). Knows nothing about grammars:
//! the caller hands it the forced bytes and what may follow them.
#![forbid(unsafe_code)]

mod alternatives;
mod coalescer;
mod pieces;
mod tail;

pub use alternatives::alternatives;
pub use coalescer::{Coalescer, Forced, Next, NextBytes, Prompt, Refusal};
pub use tail::Tail;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_types_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Coalescer>();
        check::<Tail>();
        check::<Forced>();
        check::<Prompt>();
    }
}
