//! Front-ends that compile user grammars to the parser's grammar.
//!
//! | front-end | text | entry points |
//! | --- | --- | --- |
//! | regex | an anchored regular expression (`derivre` syntax) | [`regex::compile`] |
//! | Lark-like | llguidance's Lark dialect (`.lark`) | [`lark::compile`], [`lark::parse`] |
//! | GBNF | llama.cpp's grammars (`.gbnf`) | [`gbnf::compile`], [`gbnf::parse`], [`gbnf::to_lark`] |
//!
//! JSON Schemas are compiled by the `jsonschema` crate; Lark grammars embed
//! them with `%json { ... }`, laid out by [`Config::json`] and the schema's
//! own `"x-guidance"` settings ([`x_guidance`], which the `structgen`
//! front door shares). [`lark::embed`] and [`gbnf::embed`] rename a
//! grammar's definitions under a prefix so that it can be pasted into a
//! larger Lark grammar (the `grammar` format of structural tags does this).
//!
//! # Example
//! ```
//! use structgen_grammar::Config;
//!
//! let cfg = Config::default();
//! let list = structgen_grammar::lark::compile(
//!     "start: \"[\" (INT (\",\" INT)*)? \"]\"\n%import common.INT\n%ignore \" \"",
//!     &cfg,
//! )
//! .unwrap();
//! assert!(list.accepts(b"[1, 22 ,3]").unwrap());
//! assert!(!list.accepts(b"[1 2]").unwrap());
//!
//! let word = structgen_grammar::gbnf::compile("root ::= [a-z]+ \"!\"", &cfg).unwrap();
//! assert!(word.accepts(b"hey!").unwrap());
//!
//! let err = structgen_grammar::lark::compile("start: \"a\" foo", &cfg).unwrap_err();
//! assert_eq!((err.line(), err.column()), (Some(1), Some(12)));
//! assert_eq!(err.to_string(), "1:12: unknown name: unknown name `foo`\n    1 | start: \"a\" foo\n      |            ^");
//! ```
//!
//! # How
//! The text front-ends tokenize and parse by hand (recursive descent) into a
//! syntax tree with a [`Span`] on every node, then lower it into an
//! [`earley::GrammarBuilder`]. GBNF is first translated into the Lark
//! dialect's tree, choosing which rules become lexemes as llguidance does
//! (see [`gbnf`]); the Lark dialect and its differences from llguidance are
//! described in [`lark`].
//!
//! # Complexity and memory
//! For a grammar of `n` bytes: tokenizing and parsing are O(n) time and
//! memory (the tree holds every node once). Lowering is O(n) plus the size
//! of the terminals' regexes after inlining the terminals they reference,
//! which is bounded by [`Limits::max_terminal_nodes`]. Repetitions `{m,n}`
//! cost O(log n) rules.
//!
//! # Errors, limits, panics
//! Every problem is an [`Error`]: an [`ErrorKind`], a message, and for text
//! grammars the line and column (1-based, in characters) with the source
//! line and a caret. Unsupported constructs are errors, never a silently
//! different grammar. [`Limits`] (in [`Config`]) bound the source size, the
//! nesting depth (which bounds recursion), the number of expressions, the
//! repetition bounds and the inlined terminal size, so hostile grammars fail
//! fast. No input makes these functions panic.
//!
//! # Boundaries
//! Produces grammars for the `earley` crate with lexemes for the `lexer`
//! crate; does no I/O. No features.
#![forbid(unsafe_code)]

mod config;
mod error;
mod span;

pub mod gbnf;
pub mod lark;
pub mod regex;
pub mod x_guidance;

pub use config::{Config, Limits};
pub use error::{Error, ErrorKind};
pub use span::{Location, Span};
