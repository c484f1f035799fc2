//! Fast, exact structured generation for large language models.
//!
//! This umbrella crate re-exports the focused crates of the workspace and
//! composes them; it holds little logic of its own. Inference engines that
//! need one capability can depend on its crate alone.
//!
//! | crate | what it does |
//! | --- | --- |
//! | [`toktrie`] | the vocabulary as a flat trie; token sets; the mask walk |
//! | [`lexer`] | lexemes as derivative-based regexes, cached transitions |
//! | [`earley`] | an Earley parser over lexemes, driving the mask walk |
//! | [`grammar`] | front-ends: regex, Lark-like CFG, GBNF, JSON Schema |
//! | [`slicer`] | precomputed masks for unconstrained contexts |
//! | [`bpe`] | exact linear-time BPE: counting, intervals, chunking |
//! | [`coalesce`] | forced tokens in the canonical tokenization |
//! | [`radix_cache`] | a token radix tree for prefix KV-cache reuse |
//!
//! [`Matcher`] composes them for one sequence: compute the token mask,
//! consume tokens, validate, roll back; EOS is allowed exactly when the
//! grammar accepts. The `structgen` command-line tool is this crate's binary
//! (`structgen --help`).
#![forbid(unsafe_code)]

pub use bpe;
pub use coalesce;
pub use earley;
pub use grammar;
pub use lexer;
pub use radix_cache;
pub use slicer;
pub use toktrie;

pub mod trie;

pub mod matcher;
pub use matcher::{Backtrack, ForcedTokens, Matcher, MatcherError, ReplayStats, SlicerStats};
