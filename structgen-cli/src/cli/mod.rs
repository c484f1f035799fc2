//! Subcommands of the `structgen` tool, one module each, plus shared helpers.

pub(crate) mod cache_sim;
pub(crate) mod common;
pub(crate) mod demo;
pub(crate) mod forced;
pub(crate) mod jsonschema_suite;
pub(crate) mod mask;
pub(crate) mod maskbench;
pub(crate) mod tokenize;
