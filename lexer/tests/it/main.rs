//! Integration tests of the `lexer` crate (one binary, one module per concern).

mod probe;
mod prop;
mod stop;
