//! Integration tests of `structgen-cli`, one binary with a module per
//! concern.

mod cache_sim_cli;
mod kv_subscriber;
mod mooncake;
mod sim;
