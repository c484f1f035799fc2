//! The Lark-like grammar dialect of llguidance.
//!
//! See the crate manual for the supported syntax and the differences from
//! llguidance; [`parse`] gives the syntax tree, with a span (byte range, line
//! and column) on every node.

pub mod ast;
mod common;
mod lexer;
mod lower;
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

/// Compiles a Lark-like grammar (start rule `start`) for the Earley parser.
///
/// # Errors
/// Syntax errors, unsupported constructs, unknown or duplicate names,
/// invalid regexes and exceeded limits, each with line and column when it
/// has a place in the text.
pub fn compile(src: &str, config: &Config) -> Result<earley::Grammar, Error> {
    let g = parse(src, config)?;
    compile_ast(&g, src, "start", config)
}

/// Compiles a parsed grammar with `start` as its start rule; `src` is the
/// text the spans point into (for error messages).
///
/// # Errors
/// As [`compile`], except syntax errors.
pub fn compile_ast(
    grammar: &ast::Grammar,
    src: &str,
    start: &str,
    config: &Config,
) -> Result<earley::Grammar, Error> {
    lower::lower(grammar, src, start, config)?.build(config.parser_limits, src)
}
