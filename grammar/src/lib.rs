//! Front-ends that compile user grammars to the parser's grammar.
//!
//! # What will live here
//! - Regex: an anchored regular expression in the syntax `derivre` accepts.
//! - A Lark-like CFG dialect compatible with llguidance's (rules, TERMINALS,
//!   `%ignore`, `%import common.X`, special tokens, lazy terminals, `%json`).
//! - GBNF as llama.cpp defines it.
//! - JSON Schema (draft 2020-12 semantics) compiled to lexemes and rules.
//!
//! Every unsupported construct is an error with its location (line and column
//! for text grammars, the JSON pointer for schemas), never a silently looser
//! grammar; hostile inputs hit configurable limits.
//!
//! # Boundaries
//! Produces grammars for the `earley` crate with lexemes for the `lexer` crate.
#![forbid(unsafe_code)]

mod config;
mod error;
mod span;

pub mod gbnf;
pub mod lark;

pub use config::{Config, Limits};
pub use error::{Error, ErrorKind};
pub use span::{Location, Span};
