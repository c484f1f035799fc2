//! An Earley parser over lexemes that drives the token-mask walk.
//!
//! Rules live in one flat array; items are indices (dot position, origin row);
//! rows are ranges of one item vector. After a row is computed, the lexer is
//! restricted to the lexemes the parser allows next. During the trie walk a row
//! is pushed when a lexeme completes and popped on the way back up by moving a
//! pointer; when the same lexeme is scanned again at the same depth, the row
//! already computed is reused, so the parser touches a tiny share of the nodes.
//!
//! # What will live here (mask-engine issue)
//! - The grammar representation (terminals are lexemes of the `lexer` crate),
//!   nullable rules, scan/predict/complete on flat arrays.
//! - The parser's implementation of [`toktrie::Recognizer`], driving the lexer
//!   byte by byte; limits on items per row and per step, errors when exceeded.
//!
//! # Boundaries
//! Depends on `lexer` and on `toktrie` for the `Recognizer` trait only.
#![forbid(unsafe_code)]
