//! Lexemes as regular expressions on `derivre`, with a cached, flat transition table.
//!
//! A lexer state is the set of lexemes that are still possible after the bytes
//! seen since the last lexeme boundary, each paired with its regex derivative.
//! The transition on a byte takes the derivative of every live lexeme and drops
//! the dead ones; states and transitions are cached in a flat table indexed by
//! (state, byte class), so the trie walk is mostly table look-ups and the
//! derivative engine runs only on a cache miss.
//!
//! # What will live here (mask-engine issue)
//! - `LexerSpec`: lexemes (regex or literal; greedy, or lazy/stop-at-match).
//! - `Lexer`: states restricted to the lexemes the parser allows next, the
//!   transition table with byte classes, accepting-lexeme information, and a
//!   configurable state budget whose excess is an error, never a hang.
//!
//! # Boundaries
//! Depends on `derivre` only. Knows nothing about Earley parsing or tokens.
#![forbid(unsafe_code)]
