//! Integration tests of the `earley` crate (one binary, one module per concern).

mod builder;
mod forced;
mod options;
mod oracle;
mod permutation;
mod prop;
