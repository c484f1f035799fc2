//! The Lark-like grammar dialect of llguidance.
//!
//! See the crate manual for the supported syntax and the differences from
//! llguidance; [`parse`] gives the syntax tree, with a span (byte range, line
//! and column) on every node.

pub mod ast;
mod lexer;
mod parser;
pub(crate) mod print;

use crate::config::Config;
use crate::error::Error;

pub use print::print;

/// Parses a Lark-like grammar into its syntax tree, without checking names
/// or compiling anything.
///
/// Everything the dialect can write parses, including constructs the
/// compiler rejects (templates, priorities, `%declare`), so tools can inspect
/// any grammar. Errors are syntax errors and limit errors, with line and
/// column.
pub fn parse(src: &str, config: &Config) -> Result<ast::Grammar, Error> {
    parser::parse(src, &config.limits)
}
