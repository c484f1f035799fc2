//! Integration tests of the `structgen` binary.
//!
//! One test binary with a module per area keeps link time down.

mod cache_sim;
mod cli;
mod harness;
mod tokenize;
