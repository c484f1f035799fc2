//! Side-by-side benchmarks and differential tests against peer implementations.
//!
//! This unpublished crate is the only one that depends on the peers we
//! measure against: llguidance and its `toktrie` (renamed `peer_toktrie`),
//! rust-gems `bpe` (renamed `peer_bpe`) and `bpe-openai`, `tiktoken-rs`, and
//! Hugging Face `tokenizers`. Library crates never depend on them.
//!
//! - [`jsonsuite`]: the official JSON-Schema-Test-Suite classified by our
//!   compiler and by llguidance, instance by instance.
//! - [`peer`]: the peers' views of our tokenizers (same token bytes).
//! - [`report`]: the Markdown table and JSON file every suite writes.
//! - [`shared`]: finding the team's `../shared/data` corpora, which tests use
//!   when present and skip, saying so, when absent.
//! - The `structgen-bench` binary (`cargo xtask bench <suite>`) runs the suites
//!   in `src/suites/`, one module each.
#![forbid(unsafe_code)]

pub mod jsonsuite;
pub mod peer;
pub mod report;
pub mod shared;
