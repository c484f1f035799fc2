//! Integration tests of the `lexer` crate (one binary, one module per concern).

// The tests name the crate as the rest of the workspace does (`lexer::`).
extern crate structgen_lexer as lexer;

mod key;
mod preparsed;
mod probe;
mod prop;
mod stop;
