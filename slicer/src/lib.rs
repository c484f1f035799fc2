//! Precomputed token masks for unconstrained lexer contexts.
//!
//! The vocabulary is split into slices defined by regexes (inside a JSON
//! string: `[^"\\\x00-\x1F\x7F]{1,10}`, `{1,30}`, `+`, then everything else).
//! When a slice is provably contained in a lexeme the lexer currently allows,
//! its precomputed mask is OR-ed in and its sub-trie is not walked.
//!
//! # What will live here (slicer issue)
//! Slices and their containment tree, per-slice sub-tries and masks shared by
//! every matcher of a tokenizer (`Arc`), a budgeted containment check on
//! `derivre` cached per lexer state, user-defined slices and an off switch.
//!
//! # Boundaries
//! Depends on `toktrie` (sub-tries, token sets), `lexer` and `derivre`.
#![forbid(unsafe_code)]
