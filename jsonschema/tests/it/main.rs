//! Integration tests of the JSON Schema compiler, one module per area.
//!
//! Tests that need `../shared/data` print `SKIPPED …` and pass when it is absent.

// The tests name the crate as the rest of the workspace does (`jsonschema::`).
extern crate structgen_jsonschema as jsonschema;

mod common;
mod constants;
mod formats;
mod hostile;
mod keywords;
mod maskbench;
mod numbers;
mod oneof;
mod recursion;
mod refs;
mod suite;
mod unique;
