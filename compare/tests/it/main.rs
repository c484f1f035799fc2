//! Differential tests of our crates against the peers, one module per area.
//!
//! Tests that need `../shared/data` print `SKIPPED …` and pass when it is
//! absent (see `compare::shared`).
mod bpe;
mod coalesce;
mod frontends;
mod gguf;
mod jsonsuite;
mod lexeme_options;
mod mask;
mod maskbench;
mod slicer;
mod structural_tag;
mod toktrie;
