//! The library half of the `structgen` command: what the binary and the
//! benchmark harnesses of the `compare` crate share.
//!
//! - [`tokenizer`]: loading a tokenizer from a `--tokenizer` spec (the
//!   embedded vocabularies, tiktoken files, `tokenizer.json`, gzipped or not).
//!
//! The `structgen` library under it does no file I/O; reading files and
//! gzip happens here.
#![forbid(unsafe_code)]

pub mod tokenizer;
