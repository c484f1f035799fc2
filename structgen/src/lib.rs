//! Fast, exact structured generation for large language models: the
//! library an inference engine depends on.
//!
//! An engine compiles each request's constraint once ([`Grammar`]), builds
//! its tokenizer's [`Vocabulary`] once, and keeps one [`Matcher`] per
//! sequence: on every decoding step it fills the sequence's row of the
//! step's token bitmask ([`Matcher::fill_bitmask`], or
//! [`fill_bitmask_batch`] for the whole batch on a thread pool), applies it
//! to the logits, samples, and hands the token back
//! ([`Matcher::consume_token`]). Stop tokens are allowed exactly when the
//! grammar accepts.
//!
//! ```
//! use std::sync::Arc;
//! use structgen::{Grammar, Matcher, Vocabulary, bpe::Tokenizer};
//!
//! let vocab = Vocabulary::from_tokenizer(Arc::new(Tokenizer::o200k_base()))?;
//! let grammar = Grammar::json_schema(&serde_json::json!({
//!     "type": "object",
//!     "properties": {"n": {"type": "integer"}},
//!     "required": ["n"], "additionalProperties": false
//! }))?;
//! let mut m = Matcher::new(&vocab, &grammar)?;
//! let mut row = vec![0u32; vocab.bitmask_words()];
//! let tok = vocab.tokenizer().unwrap();
//! for t in tok.encode(r#"{"n": 42}"#) {
//!     m.fill_bitmask(&mut row)?; // the engine masks its logits with `row`
//!     assert!(row[t as usize / 32] >> (t % 32) & 1 == 1);
//!     m.consume_token(structgen::toktrie::TokenId(t))?; // the sampled token
//! }
//! assert!(m.is_accepting()); // a stop token (`<|endoftext|>`) is allowed now
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The front door
//! - [`Grammar::compile`] takes any [`GrammarSpec`]: JSON Schema (with
//!   [`jsonschema::Options`] for whitespace, separators and property
//!   order), Lark, GBNF, regex, a choice of strings, or a request in
//!   llguidance's format, or a structural tag in XGrammar's format (free
//!   text with triggered tool calls and reasoning blocks;
//!   [`structural_tag`], with per-model presets built from OpenAI-style
//!   `tools` in [`structural_tag::presets`]). Every failure is one
//!   [`Error`] with its [`Location`] (line and column, or a JSON pointer).
//! - [`GrammarCache`] compiles each distinct spec once (bounded in bytes,
//!   thread-safe, with hit and miss counters).
//! - [`Vocabulary::from_tokenizer`] or [`Vocabulary::builder`] (for an
//!   engine that has only id → bytes) with explicit stop tokens and the
//!   model's padded vocabulary size; [`Matcher::with_stop_tokens`]
//!   overrides the stop tokens per request.
//! - The [`Matcher`]: masks, bitmask rows, consume, validate, roll back,
//!   reset, fork ([`Clone`]), forced tokens in the canonical tokenization
//!   ([`Matcher::forced_tokens`]), and queries on `&self`
//!   ([`Matcher::is_accepting`], [`Matcher::stop_reason`]).
//!
//! # Guarantees
//! - Masks are exact: the set of tokens after which the text can still be
//!   completed to a sentence of the grammar (see the workspace's
//!   ARCHITECTURE.md for the one counted exception, lexer fuel refusals,
//!   [`Matcher::fuel_refusals`], which can only make a mask smaller;
//!   [`Matcher::with_refusals_as_errors`] makes them errors instead).
//! - Every resource has a limit a caller can set ([`CompileOptions`], whose
//!   docs table the defaults against llguidance's); a limit hit is an error
//!   naming the limit, its value and its place in the grammar or the text.
//! - No hidden shared mutable state: a [`Vocabulary`] is immutable and a
//!   [`Grammar`]'s only state is the start its matchers copy, which learns
//!   from dropped matchers only exact lexer answers (transitions are a
//!   function of a state and a byte, whoever computed them); both are
//!   shared by `Arc`, matchers never block each other (the start is
//!   replaced by an atomic pointer swap), and a matcher's masks depend on
//!   its own tokens only.
//! - No panics, no I/O, no clock: bad input is an [`Error`] or a
//!   [`MatcherError`]; the library reads no files and times nothing.
//!
//! # Features
//! - `parallel` (default): [`fill_bitmask_batch`] fills rows on rayon's
//!   thread pool, [`BatchPool`] on the calling thread and helpers of its
//!   own; without it, in order on the calling thread.
//!
//! # The crate family
//! This crate composes the focused crates of the workspace and re-exports
//! them; engines that need one capability can depend on it alone.
//!
//! | crate | what it does |
//! | --- | --- |
//! | [`toktrie`] | the vocabulary as a flat trie; token sets; the mask walk |
//! | [`lexer`] | lexemes as derivative-based regexes, cached transitions |
//! | [`earley`] | an Earley parser over lexemes, driving the mask walk |
//! | [`grammar`] | front-ends: regex, Lark-like CFG, GBNF |
//! | [`jsonschema`] | JSON Schema compiled to an exact grammar |
//! | [`slicer`] | precomputed masks for unconstrained contexts |
//! | [`bpe`] | exact linear-time BPE: counting, intervals, chunking |
//! | [`coalesce`] | forced tokens in the canonical tokenization |
//! | [`radix_cache`] | a token radix tree for prefix KV-cache reuse |
#![forbid(unsafe_code)]

pub use bpe;
pub use coalesce;
pub use earley;
pub use grammar;
pub use jsonschema;
pub use lexer;
pub use radix_cache;
pub use slicer;
pub use toktrie;

mod cache;
mod error;
mod llguidance;
mod matcher;
mod spec;
pub mod structural_tag;
mod vocab;

pub use cache::{CacheStats, GrammarCache};
pub use error::{Error, ErrorKind, Location};
#[cfg(feature = "parallel")]
pub use matcher::BatchPool;
pub use matcher::{
    Backtrack, BatchError, DEFAULT_MAX_FORCED_BYTES, DEFAULT_MAX_SPLITS, ForcedTokens,
    MAX_SHARED_KEYS, MAX_SHARED_SPLITS, Matcher, MatcherError, SlicerStats, SplitStats, StopReason,
    fill_bitmask_batch, fill_bitmask_rows,
};
pub use spec::{CompileOptions, Grammar, GrammarSpec};
pub use vocab::{DEFAULT_STOP_NAMES, Vocabulary, VocabularyBuilder};
