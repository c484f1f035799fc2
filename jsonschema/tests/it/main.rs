//! Integration tests of the JSON Schema compiler, one module per area.
//!
//! Tests that need `../shared/data` print `SKIPPED …` and pass when it is absent.

mod common;
mod keywords;
mod maskbench;
mod suite;
