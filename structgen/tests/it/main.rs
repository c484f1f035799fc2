//! Integration tests of the umbrella crate and the `structgen` binary.
//!
//! One test binary with a module per area keeps link time down.

mod forced;
mod lexeme_options;
mod slicer;
