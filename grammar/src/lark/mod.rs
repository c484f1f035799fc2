//! The Lark-like grammar dialect of llguidance.
//!
//! [`parse`] gives the syntax tree (a [`Span`](crate::Span) with byte range,
//! line and column on every node), [`compile`] the grammar for the Earley
//! parser, [`print()`] the text of a tree.
//!
//! # Supported syntax (llguidance's `docs/syntax.md`)
//! - Rules (lowercase names) and terminals (uppercase names); `-` may appear
//!   in names; `//` and `#` start comments. The rule modifiers `?name` and
//!   `!name`, `_name` and `-> alias` are accepted and change nothing (they
//!   shape Lark's parse trees, not the language). A line starting with `|`
//!   continues the alternatives above it.
//! - `a b`, `a | b`, `(a)`, `[a]`, `a?`, `a*`, `a+`, `a{n}`, `a{m,}`,
//!   `a{,n}`, `a{m,n}`, `a ~ n`, `a ~ m..n`.
//! - Strings `"..."` (JSON escapes and `\xHH`), case-insensitive strings
//!   `"..."i`, ranges `"a".."z"`, regexes `/.../flags` in the `regex` crate's
//!   syntax as `derivre` reads it (flags `i`, `m`, `s`, `x`, `u`).
//! - In terminals, intersection `a & b` and complement `~a` (also `~a` in a
//!   rule, which is then one lexeme, as in llguidance).
//! - `%ignore expr` (several are alternatives; a bare `%ignore` is a
//!   syntax error, not a no-op); `%import common.NAME`,
//!   `%import common.NAME -> ALIAS`, `%import common (A, B)` with the 25
//!   terminals of Lark's `common.lark` (see `common.rs`).
//! - Special tokens `<|name|>`, `<name>`, `<[NAME]>` (the token named
//!   `[NAME]`, as Mistral's `[TOOL_CALLS]`: a name in brackets starts with
//!   a letter or `/`) and token ids `<[1,5-9]>`, `<[^5]>`, `<[*]>`; names
//!   are resolved against the vocabulary when a parser is created.
//! - Lexeme options on rules whose body is a terminal: `[lazy]`,
//!   `[suffix=X]` (X a string, regex or terminal: lazy, X kept in the text),
//!   `[stop=X]` (lazy, X hidden: the rule's text ends before it and the
//!   matcher reports the tokens to take back, `structgen::Backtrack`;
//!   when the text after the rule starts with X, X is lexed again as its
//!   start instead), `[stop=""]` (the end-of-sequence token may end the
//!   lexeme, and the grammar goes on), `[max_tokens=N]` (the lexeme spans
//!   at most N tokens; `max_tokens=0` is the empty string), combined as
//!   llguidance allows (`stop=` excludes `suffix=` and an earlier `lazy`);
//!   and `[capture]`, `[capture="n"]`, `[stop_capture="n"]`, which do not
//!   change masks and are ignored, and `[temperature=t]`, which makes the
//!   rule one lexeme as in llguidance (no `%ignore` inside it) and is
//!   otherwise ignored.
//! - `%regex {"substring_words": "..."}`, `{"substring_chars": "..."}`
//!   and `{"substring_chunks": [...]}`: any contiguous run of the chunks
//!   (words are maximal runs of letters, digits and `_`, of white space, or
//!   of other characters), as one lexeme or inside a terminal.
//! - `%json {...}`: an inline JSON Schema, compiled by the `jsonschema`
//!   crate with llguidance's defaults, as a nonterminal (not in grammars
//!   with `%ignore`, whose text llguidance keeps out of JSON values).
//! - `%llguidance {...}` with `no_forcing`, `ignore_once` (`true`: the
//!   `%ignore` regex describes the whole span skipped at one lexeme
//!   boundary, so its bounds hold; `false`, the default: it may match again
//!   and again), and the other llguidance 1.9 options (`allow_initial_skip`,
//!   `allow_invalid_utf8`) when `false`. (`skip_repetition`, a later name
//!   for `ignore_once`, is an error pointing to it: llguidance 1.9 ignores it.)
//!
//! # Not supported (an error with line and column)
//! Templates, priorities (unless [`Config::ignore_priorities`]), `%declare`,
//! `%override`, `%extend`, imports of modules other than `common`,
//! look-arounds and other regex features `derivre` cannot express,
//! `%json` together with `%ignore`, `@grammar`
//! references, parametric rules (`name::...`), and the `%llguidance`
//! options above set to `true` or unknown.
//!
//! # Differences from llguidance 1.9
//! - More lenient: line breaks inside `(...)` and `[...]`, and comment lines
//!   between a rule and its `|` continuation, are accepted (llguidance
//!   rejects them); neither changes what a grammar means.
//! - Stricter: unknown `%llguidance` options are errors (llguidance ignores
//!   them).
//! - `max_tokens=N`: at its N-th token llguidance ends the lexeme even when
//!   its text does not match the lexeme's regex (accepting text outside the
//!   grammar); ours allows only tokens after which it can end there.
//! - `stop=X` with X a regex of more than 16 words, words longer than 32
//!   bytes, or infinitely many: when the text after the rule starts with
//!   the hidden word, llguidance's mask lets a token go on past it; ours
//!   ends the token at the stop text (after the token both lex the word
//!   again as the start of what follows). A stop of up to 16 words is
//!   compiled as one lexeme per word, and matches llguidance exactly.
//! - `stop=X` where X spans several tokens and the text after the rule
//!   starts with X: llguidance 1.9.1 fails with an internal panic once the
//!   last of those tokens is consumed; ours lexes X again and goes on.
//! - Unknown special token names are reported when a parser is created
//!   ([`earley::Parser::new`]), not at compile time.
//! - As in llguidance, only definitions reachable from `start` (and the
//!   `%ignore`d expressions) are compiled, so an unused rule may refer to an
//!   unknown name; syntax errors are reported anywhere.
//!
//! # Lowering
//! See `lower.rs`: rules become nonterminals; each terminal becomes one
//! lexeme whose regex inlines the terminals it references (bounded by
//! [`Limits::max_terminal_nodes`](crate::Limits)); strings and regexes used
//! in rules become lexemes (equal texts share one); `{m,n}` desugars in
//! O(log n) rules ([`earley::GrammarBuilder::repeat`]).

pub mod ast;
mod common;
mod lexer;
mod lower;
mod parser;
pub(crate) mod print;
mod terminals;

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

/// A Lark grammar (start rule `start`) rewritten for embedding in a larger
/// Lark grammar: every definition renamed with `prefix` (see
/// [`print()`]); returns the new name of `start` and the definitions.
/// Structural tags embed their `grammar` formats this way.
///
/// # Errors
/// Syntax errors, and directives with a grammar-wide meaning (`%ignore`,
/// `%import`, `%llguidance`, …), with line and column.
pub fn embed(src: &str, prefix: &str, config: &Config) -> Result<(String, String), Error> {
    let g = parse(src, config)?;
    print::print_embedded(&g, "start", prefix, src)
}
