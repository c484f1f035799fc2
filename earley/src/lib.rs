//! An Earley parser over lexemes that drives the token-mask walk.
//!
//! Rules live in one flat array; items are indices (dot position, origin row);
//! rows are ranges of one item vector. After a row is computed, the lexer is
//! restricted to the lexemes the parser allows next. During the trie walk a row
//! is pushed when a lexeme completes and popped on the way back up by moving a
//! pointer; when the same lexeme is scanned again at the same depth, the row
//! already computed is reused, so the parser touches a tiny share of the nodes.
//!
//! # Example
//! ```
//! use structgen_earley::{GrammarBuilder, Limits, Parser};
//! use lexer::LexemeSpec;
//!
//! // sum: INT ("+" INT)*
//! let mut b = GrammarBuilder::new();
//! let int = b.add_lexeme(LexemeSpec::regex("[0-9]+"));
//! let plus = b.literal("+");
//! let tail = b.add_nonterminal("tail");
//! b.add_rule(tail, &[plus, int]);
//! let tails = b.repeat(tail, 0, None).unwrap();
//! let sum = b.add_nonterminal("sum");
//! b.add_rule(sum, &[int, tails]);
//! let grammar = b.build(sum, Limits::default()).unwrap();
//!
//! let mut p = Parser::new(&grammar, &|_| None).unwrap();
//! for &byte in b"12+3" {
//!     assert!(p.try_consume_byte(byte).unwrap());
//! }
//! assert!(p.is_accepting().unwrap());
//! assert!(!p.try_consume_byte(b'x').unwrap()); // rejected, state unchanged
//! assert!(p.try_consume_byte(b'+').unwrap());
//! assert!(!p.is_accepting().unwrap());
//! ```
//!
//! # Lexing rules (the same as llguidance's)
//! - A greedy lexeme extends while the next byte keeps one of the live
//!   lexemes alive; when a byte kills them all, the lexeme ends before that
//!   byte if it matches (maximal munch, no backtracking), and the byte
//!   starts the next lexeme. A lazy lexeme ends at the first byte where it
//!   matches (only the lazy lexemes matching there are scanned).
//! - The lexer only considers the lexemes the parser allows next, plus
//!   `%ignore` (allowed at every boundary where a terminal may follow, before
//!   the first lexeme only with [`GrammarBuilder::allow_initial_ignore`],
//!   never after the end of the sentence); when several
//!   lexemes match at once, all of them are scanned.
//! - The text is accepted (EOS allowed) exactly when the current lexeme can
//!   end here and the grammar then accepts.
//!
//! # Lexeme options (Lark `stop=`, `stop=""`, `max_tokens=`)
//! A lexeme with a hidden stop ends where its stop text completes; unless
//! what follows starts with that text, the position is sealed until the
//! token is consumed, and [`Parser::take_hidden`] reports the hidden bytes.
//! [`Parser::eos_ends_lexeme`] and [`Parser::try_consume_eos_end`] let an
//! EOS token end a `stop=""` lexeme. [`Parser::apply_max_tokens`] applies a
//! token count the caller keeps. See `DESIGN.md`, "Lexeme options".
//!
//! # Permutation phrases
//! [`GrammarBuilder::add_permutation`] defines a nonterminal whose
//! members come in any order, each name at most once, with required names
//! and count bounds ([`Permutation`]): JSON object properties in any
//! order. The parser carries the set of names used in its items, so a
//! phrase over `p` names costs what the text costs, not `2^p` rules.
//!
//! # Forced bytes
//! [`Parser::forced_bytes`] returns the longest byte string every
//! continuation allowed from the current position starts with (one push and
//! pop per lexer byte class per byte; it stops at a branch, where EOS or a
//! special token is allowed, or at a limit) and what may follow it; the
//! parser is left unchanged. The `coalesce` crate turns it into tokens.
//!
//! # Algorithm
//! See `DESIGN.md` beside this crate's `Cargo.toml`: the grammar is
//! compiled to flat arrays ([`GrammarBuilder::build`]), items are packed
//! `u64`s, rows are ranges of one vector; prediction uses the
//! Aycock–Horspool treatment of nullable symbols.
//!
//! # Complexity and memory
//! A byte that stays inside a lexeme costs one lexer table look-up. A byte
//! that ends a lexeme costs one row: O(I · R) for `I` items in the row and
//! `R` the size of the rows completions look into (bounded by
//! [`Limits::max_items_per_row`]; a row of more than 64 items is indexed by
//! expected symbol, so `R` becomes `log R` plus the items advanced), or
//! O(1) when the row is reused. Memory:
//! 8 bytes per consumed byte (a [`Frame`]) plus 8 bytes per item; a mask walk
//! adds one frame per trie depth.
//!
//! # Errors and panics
//! Grammar construction returns [`GrammarError`]; parsing returns
//! [`ParseError`] for exceeded limits, naming the limit, its value and the
//! byte offset where it tripped ([`ParseError::offset`]), and the parser
//! stays in that error state. No panics on any grammar or input.
//!
//! # Boundaries
//! Depends on `lexer` and on `toktrie` for the `Recognizer` and
//! `StateRecognizer` traits only ([`Parser`] implements both; the mask walk
//! uses the second, with a [`Frame`] per trie depth).
//! No features.
#![forbid(unsafe_code)]

mod compile;
mod error;
mod forced;
mod grammar;
mod parser;

pub use error::{GrammarError, ParseError};
pub use forced::{ByteSet, ForcedBytes, ForcedStop};
pub use grammar::{
    Grammar, GrammarBuilder, Limits, Permutation, SpecialToken, SymbolId, SymbolKind,
};
pub use parser::{Frame, MaxTokensOutcome, Parser, ParserStats, PositionKey, TakenSplit};

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send_sync::<Grammar>();
        assert_send_sync::<GrammarBuilder>();
        assert_send_sync::<Parser>();
        assert_send_sync::<GrammarError>();
        assert_send_sync::<ParseError>();
    }
}
