//! The library half of the `structgen` command: what the binary and the
//! benchmark harnesses of the `compare` crate share.
//!
//! - [`tokenizer`]: loading a tokenizer from a `--tokenizer` spec (the
//!   embedded vocabularies, tiktoken files, `tokenizer.json`, gzipped or not).
//! - [`replay`]: replaying a document with a stand-in sampler to count what
//!   forced tokens save.
//! - [`cache_sim`]: the prefix-cache simulator (workloads, Mooncake traces,
//!   the serving loop) of `structgen cache-sim` and `cargo xtask bench radix`.
//!
//! The `structgen` library under it does no file I/O; reading files and
//! gzip happens here.
#![forbid(unsafe_code)]

pub mod cache_sim;
pub mod replay;
pub mod tokenizer;
