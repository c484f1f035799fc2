//! Integration tests of the grammar front-ends (one binary, one module per
//! concern).

// The tests name the crate as the rest of the workspace does (`grammar::`).
extern crate structgen_grammar as grammar;

mod data;
mod errors;
mod gbnf;
mod gbnf_parse;
mod lark_compile;
mod lark_parse;
mod limits;
mod props;
mod shared;
mod util;
