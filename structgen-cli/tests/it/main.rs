//! Integration tests of `structgen-cli` and its `structgen` binary, one
//! test binary with a module per concern (keeps link time down).

mod cache_sim;
mod cache_sim_cli;
mod cli;
mod harness;
mod kv_subscriber;
mod mooncake;
mod output;
mod sim;
mod tokenize;
mod validate;
