//! Integration tests of the grammar front-ends (one binary, one module per
//! concern).

mod data;
mod gbnf_parse;
mod lark_parse;
mod shared;
mod util;
