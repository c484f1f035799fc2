//! Integration tests of the umbrella crate and the `structgen` binary.
//!
//! One test binary with a module per area keeps link time down.

mod cache_sim;
mod cli;
mod forced;
mod jsonschema;
mod lexeme_options;
mod slicer;
mod tokenize;
