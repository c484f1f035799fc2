//! Integration tests of the umbrella crate and the `structgen` binary.
//!
//! One test binary with a module per area keeps link time down.

mod bitmask;
mod forced;
mod front_door;
mod hostile;
mod lexeme_options;
mod slicer;
mod splits;
mod structural_tag;
