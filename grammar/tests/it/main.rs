//! Integration tests of the grammar front-ends (one binary, one module per
//! concern).

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
