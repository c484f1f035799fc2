//! Integration tests of `radix-cache`, one binary with a module per concern.

// The tests name the crate as the rest of the workspace does (`radix_cache::`).
extern crate structgen_radix_cache as radix_cache;

mod events;
mod model;
mod sched;
mod unit;
