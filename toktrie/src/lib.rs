//! The tokenizer's vocabulary as a flat trie, token sets, and the mask walk.
//!
//! A token mask is the set of token ids a constrained decoder may sample next.
//! It is computed by walking the trie of all token byte strings depth-first
//! while a [`Recognizer`] says, byte by byte, whether the text so far can still
//! be extended; a rejected byte skips its whole subtree in O(1).
//!
//! # What lives here
//! - [`TokenId`]: the newtype for token ids.
//! - [`Recognizer`]: the small trait at the boundary between the walk and the
//!   grammar engine (lexer + parser); this crate knows nothing about grammars.
//! - `TokenSet` (bitset over the vocabulary) and `TokTrie` (flat, depth-first
//!   node array, at most 8 bytes a node) arrive with the toktrie issue; see
//!   `DESIGN.md` beside this crate's `Cargo.toml` once it lands.
//!
//! # Boundaries
//! This crate does no I/O and depends on nothing: vocabularies are handed to
//! it as byte strings per token id by the `bpe` crate or the umbrella crate.
//!
//! # Panics
//! None on any input.
#![forbid(unsafe_code)]

/// A token id in a tokenizer's vocabulary.
///
/// Ids are dense: a vocabulary of size `V` uses `0..V`; models may pad their
/// logits beyond `V`, and those ids are never allowed.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct TokenId(pub u32);

impl TokenId {
    /// The id as an index into per-token arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Decides, byte by byte, whether the text being built can still be extended.
///
/// The trie walk keeps the recognizer's state in lock-step with its position:
/// every accepted [`try_push_byte`](Recognizer::try_push_byte) is undone by a
/// later [`pop_bytes`](Recognizer::pop_bytes) before the walk returns, so an
/// implementation can keep its states on a stack and pop by moving a pointer.
pub trait Recognizer {
    /// Called once before a walk starts, with nothing pushed.
    fn trie_started(&mut self) {}

    /// Called once after a walk ends, with everything popped again.
    fn trie_finished(&mut self) {}

    /// Tries to extend the text by `byte`: on success pushes the new state and
    /// returns `true`; otherwise leaves the state as it was and returns `false`.
    fn try_push_byte(&mut self, byte: u8) -> bool;

    /// Undoes the last `n` successful pushes.
    fn pop_bytes(&mut self, n: usize);

    /// Whether the special token `token` (EOS, a chat marker) is allowed at
    /// the current position. Special tokens are never reached by ordinary
    /// bytes; the walk asks about them here instead.
    fn special_allowed(&mut self, token: TokenId) -> bool {
        let _ = token;
        false
    }
}
