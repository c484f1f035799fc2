//! Integration tests of the `earley` crate (one binary, one module per concern).

// The tests name the crate as the rest of the workspace does (`earley::`).
extern crate structgen_earley as earley;

mod builder;
mod distinct;
mod forced;
mod options;
mod oracle;
mod permutation;
mod prop;
