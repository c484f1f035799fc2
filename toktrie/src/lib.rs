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
//!   [`StateRecognizer`] is the faster protocol for recognizers whose state is
//!   a small `Copy` value: the walk keeps one state per depth and calls only
//!   `step` ([`TokTrie::compute_mask_by_state`] and its variants; `DESIGN.md`,
//!   "The walk by state").
//! - [`SplitRecognizer`], [`TokTrie::split`] and
//!   [`TokTrie::compute_mask_split`]: masks where almost every token is
//!   allowed (free text) as a precomputed set plus the walks of a few
//!   frontier nodes (`DESIGN.md`, "Split masks");
//!   [`TokTrie::compute_mask_split_by_bytes`] walks the frontier with a
//!   [`Recognizer`] instead.
//! - [`TokenSet`]: a set of ids as a bitset of `u64` words over a possibly
//!   padded vocabulary; union, intersection, difference, popcount,
//!   iteration, and [`apply_to_logits`](TokenSet::apply_to_logits).
//! - [`TokTrie`], built by [`TokTrieBuilder`] (or
//!   [`TokTrie::from_token_bytes`]): the ordinary tokens as a flat depth-first
//!   array of 8-byte nodes, special tokens (EOS, chat markers, reserved ids)
//!   by id and name outside the node array, several EOS ids, tokens with
//!   equal bytes, empty tokens and gaps in the ids.
//! - [`TokTrie::compute_mask`] (and [`add_to_mask`](TokTrie::add_to_mask),
//!   [`add_extensions_to_mask`](TokTrie::add_extensions_to_mask) for one
//!   sub-trie, [`subset`](TokTrie::subset) for the trie of some ids), plus
//!   lookups: [`token_id`](TokTrie::token_id),
//!   [`greedy_tokenize`](TokTrie::greedy_tokenize),
//!   [`prefix_tokens`](TokTrie::prefix_tokens),
//!   [`tokens_with_prefix`](TokTrie::tokens_with_prefix),
//!   [`has_extension`](TokTrie::has_extension).
//!
//! # Example
//! ```
//! use structgen_toktrie::{Recognizer, TokTrie, TokenId, TokenSet};
//!
//! /// Accepts strings of ASCII digits.
//! struct Digits {
//!     depth: usize,
//! }
//! impl Recognizer for Digits {
//!     fn try_push_byte(&mut self, byte: u8) -> bool {
//!         let ok = byte.is_ascii_digit();
//!         self.depth += ok as usize;
//!         ok
//!     }
//!     fn pop_bytes(&mut self, n: usize) {
//!         self.depth -= n;
//!     }
//! }
//!
//! let trie = TokTrie::from_token_bytes(&["1", "12", "1a", "a", "345"]).unwrap();
//! let mut mask = TokenSet::new(8); // logits padded to 8
//! trie.compute_mask(&mut Digits { depth: 0 }, &mut mask);
//! let allowed: Vec<u32> = mask.iter().map(|t| t.0).collect();
//! assert_eq!(allowed, [0, 1, 4]);
//!
//! let mut logits = [0.0f32; 8];
//! mask.apply_to_logits(&mut logits);
//! assert_eq!(logits[1], 0.0);
//! assert_eq!(logits[3], f32::NEG_INFINITY);
//! ```
//!
//! # Algorithm
//! See `DESIGN.md` beside this crate's `Cargo.toml`: the node layout, the pop
//! accounting that lets the walk skip a subtree with one addition, and why
//! the loop is branch-light.
//!
//! # Complexity
//! With `V` ids, `B` total token bytes and `N <= B + 1` nodes (about `2V` for
//! BPE vocabularies): building sorts the tokens, O(B log V); a mask costs one
//! `try_push_byte` per visited node (at most `N`) plus O(V/64) to clear the
//! mask; `token_id`, `prefix_tokens`, `has_extension` are O(length × fan-out)
//! (the root's 256 children are found through a table).
//!
//! # Memory
//! 8 bytes a node, plus the token bytes (`B`), one offset and one kind byte
//! per id, the special-token table, and 1 KiB for the root table.
//!
//! # Boundaries
//! This crate does no I/O and depends on nothing: vocabularies are handed to
//! it as byte strings per token id by the `bpe` crate or the umbrella crate.
//!
//! # Panics
//! None on any input: bad vocabularies are [`BuildError`]s, a short mask is
//! grown, out-of-range ids are simply not members. A [`Recognizer`] that pops
//! more bytes than it pushed is a bug in that recognizer.
//!
//! # Features
//! None.
//!
//! # Unsafe
//! In the walks' loops only: the store of an accepted node's bit into the
//! mask skips its bounds check, and the walk by state reads and writes its
//! depth stack unchecked; the builder's and the walk's invariants make the
//! checks redundant (the `SAFETY` comments say which); the split walk
//! (`split.rs`) does the same. Measured: the checked store made the walk
//! 8–10% slower than llguidance's, and the checked split walk ran 16% more
//! instructions (see `DESIGN.md`, "Unsafe"). Everything else is
//! `#![deny(unsafe_code)]`.
#![deny(unsafe_code)]

mod build;
mod node;
mod split;
mod token_set;
mod trie;
mod walk;

pub use build::{BuildError, TokTrieBuilder};
pub use node::{MAX_NODES, MAX_TOKEN_LEN, MAX_VOCAB};
pub use split::{Derived, Split, SplitLimits, SplitRecognizer};
pub use token_set::{Iter, TokenSet};
pub use trie::{NoTokenAt, SPECIAL_MARKER, TokTrie, TokenKind};

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

/// A recognizer whose whole state at a position is a small `Copy` value: the
/// walk keeps one state per depth on its own stack, so there is no push or
/// pop call, only [`step`](StateRecognizer::step).
///
/// This is the faster protocol for recognizers that can afford it (the
/// Earley parser's state at a position is a lexer state and a row index):
/// the walk reads the parent's state from its stack by depth, so a subtree
/// skip or a climb of several levels costs nothing on the recognizer's side.
/// [`TokTrie::compute_mask_by_state`] and its variants use it; the answers
/// must be the same as those of a [`Recognizer`] over the same language.
///
/// The order of calls in one walk is: `start`, then per visited node one
/// `step` from its parent's state, then (for
/// [`TokTrie::compute_mask_by_state`] and [`TokTrie::add_to_mask_by_state`])
/// one `special_allowed` per special token, then `walk_finished`.
pub trait StateRecognizer {
    /// The state at one position; copied freely by the walk.
    type State: Copy;

    /// The state at the walk's starting position.
    fn start(&mut self) -> Self::State;

    /// The state after `byte` from `state`, or `None` when `byte` is
    /// rejected there. `state` is the start state or one this method returned
    /// during the same walk.
    fn step(&mut self, state: Self::State, byte: u8) -> Option<Self::State>;

    /// As [`Recognizer::special_allowed`], at the starting position.
    fn special_allowed(&mut self, token: TokenId) -> bool {
        let _ = token;
        false
    }

    /// Called once after a walk, back at the starting position.
    fn walk_finished(&mut self) {}
}

/// Decides, byte by byte, whether the text being built can still be extended.
///
/// The trie walk keeps the recognizer's state in lock-step with its position:
/// every accepted [`try_push_byte`](Recognizer::try_push_byte) is undone by a
/// later [`pop_bytes`](Recognizer::pop_bytes) before the walk returns, so an
/// implementation can keep its states on a stack and pop by moving a pointer.
///
/// The order of calls in one walk is: `trie_started`, then per visited node
/// `pop_bytes(k)` (often `k = 0`, so it must be cheap) and `try_push_byte`,
/// a final `pop_bytes` back to the starting position, then (for
/// [`TokTrie::compute_mask`] and [`TokTrie::add_to_mask`]) one
/// `special_allowed` per special token, then `trie_finished`. The walk never
/// pops more than it pushed.
pub trait Recognizer {
    /// Called once before a walk starts, at the walk's starting position.
    fn trie_started(&mut self) {}

    /// Called once after a walk ends, back at the starting position.
    fn trie_finished(&mut self) {}

    /// Tries to extend the text by `byte`: on success pushes the new state and
    /// returns `true`; otherwise leaves the state as it was and returns `false`.
    fn try_push_byte(&mut self, byte: u8) -> bool;

    /// Undoes the last `n` successful pushes (`n` may be 0).
    fn pop_bytes(&mut self, n: usize);

    /// Whether the special token `token` (EOS, a chat marker) is allowed at
    /// the current position. Special tokens are never reached by ordinary
    /// bytes; the walk asks about each of them here instead, with nothing
    /// pushed. The default allows none.
    fn special_allowed(&mut self, token: TokenId) -> bool {
        let _ = token;
        false
    }
}
