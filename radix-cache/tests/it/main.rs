//! Integration tests of `radix-cache`, one binary with a module per concern.

// The tests name the crate as the rest of the workspace does (`radix_cache::`).
extern crate structgen_radix_cache as radix_cache;

mod events;
mod model;
mod mooncake;
mod sched;
mod sim;
mod unit;

pub(crate) use testkit::data_dir_or_skip as shared_data_or_skip;
