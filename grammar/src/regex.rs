//! The regex front-end: an anchored regular expression as a one-lexeme grammar.
//!
//! The pattern uses the syntax `derivre` accepts (the `regex` crate's, with
//! `\A`-style implicit anchoring at both ends). The grammar has a single
//! greedy lexeme, so a text is accepted exactly when the whole text matches,
//! and a byte is allowed exactly when the text stays a prefix of a match.

use earley::{Grammar, GrammarBuilder, GrammarError, Limits};
use lexer::{LexemeSpec, LexerErrorKind, RegexAst};

use crate::error::{Error, ErrorKind};
use crate::span::Location;

/// Compiles `pattern` (anchored at both ends) with the default limits.
///
/// ```
/// let g = structgen_grammar::regex::compile("[0-9]{1,3}(\\.[0-9]+)?").unwrap();
/// assert!(g.accepts(b"12.5").unwrap());
/// assert!(!g.accepts(b"1234").unwrap());
/// let err = structgen_grammar::regex::compile("ab[c").unwrap_err();
/// assert_eq!((err.line(), err.column()), (Some(1), Some(3)));
/// ```
///
/// # Errors
/// [`ErrorKind::Invalid`] with the line and column of the problem when the
/// pattern does not parse; [`ErrorKind::Invalid`] when it matches nothing;
/// [`ErrorKind::Limit`] when a lexer limit is exceeded.
pub fn compile(pattern: &str) -> Result<Grammar, Error> {
    compile_with(pattern, Limits::default())
}

/// [`compile`] with explicit limits.
///
/// # Errors
/// As [`compile`].
pub fn compile_with(pattern: &str, limits: Limits) -> Result<Grammar, Error> {
    compile_ast(RegexAst::Regex(pattern.to_string()), pattern, limits)
}

/// Compiles a regex given as a `derivre` AST (for intersections and
/// complements); `source` is used for error locations.
///
/// # Errors
/// As [`compile`].
pub fn compile_ast(ast: RegexAst, source: &str, limits: Limits) -> Result<Grammar, Error> {
    let mut b = GrammarBuilder::new();
    let lexeme = b.add_lexeme(LexemeSpec::new("regex", ast));
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[lexeme]);
    b.build(start, limits).map_err(|e| to_error(e, source))
}

fn to_error(e: GrammarError, source: &str) -> Error {
    match &e {
        GrammarError::Lexer(le) => match le.kind() {
            LexerErrorKind::Regex { message, .. } => match caret_column(message) {
                Some(col) => {
                    let loc = location_at_char(source, col);
                    Error::at_location(ErrorKind::Invalid, first_error_line(message), loc, source)
                }
                None => Error::new(ErrorKind::Invalid, message.clone()),
            },
            // The regex is the one lexeme: a limit it trips is located at
            // its start.
            _ => Error::at_location(
                ErrorKind::Limit,
                e.to_string(),
                location_at_char(source, 0),
                source,
            ),
        },
        GrammarError::EmptyLanguage { .. } => {
            Error::new(ErrorKind::Invalid, "the regular expression matches nothing")
        }
        GrammarError::TooLarge { .. } => Error::new(ErrorKind::Limit, e.to_string()),
        _ => Error::new(ErrorKind::Build, e.to_string()),
    }
}

/// The 0-based character column of the first `^` in a `regex_syntax` error
/// message, which prints the pattern indented by 4 spaces and a caret line.
fn caret_column(message: &str) -> Option<usize> {
    message.lines().find_map(|line| {
        let t = line.trim_start();
        if !t.is_empty() && t.chars().all(|c| c == '^') {
            let indent = line.chars().count() - t.chars().count();
            Some(indent.saturating_sub(4))
        } else {
            None
        }
    })
}

/// The `error: ...` line of a `regex_syntax` message, or the whole message.
fn first_error_line(message: &str) -> String {
    message
        .lines()
        .find_map(|l| l.trim().strip_prefix("error:").map(|m| m.trim().to_string()))
        .unwrap_or_else(|| message.to_string())
}

/// The location of the `col`-th character (0-based) of a one-line pattern;
/// multi-line patterns (with the `x` flag) get their line and column.
fn location_at_char(source: &str, col: usize) -> Location {
    let offset = source.char_indices().nth(col).map_or(source.len(), |(i, _)| i);
    let before = &source[..offset];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source[line_start..offset].chars().count() as u32 + 1;
    Location { offset, line, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_exactly_the_matches() {
        let g = compile("(ab|c)+d?").unwrap();
        for (text, ok) in [("ab", true), ("abcd", true), ("", false), ("abd", true), ("dd", false)]
        {
            assert_eq!(g.accepts(text.as_bytes()).unwrap(), ok, "{text}");
        }
    }

    #[test]
    fn errors_have_locations() {
        let err = compile("a{3,1}").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert_eq!(err.line(), Some(1));
        assert!(err.column().is_some());
        let err = compile("[b-a]").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        let err = compile_ast(
            RegexAst::And(vec![RegexAst::Literal("a".into()), RegexAst::Literal("b".into())]),
            "a&b",
            Limits::default(),
        )
        .unwrap_err();
        assert!(err.message().contains("matches nothing"), "{err}");
    }

    #[test]
    fn empty_string_regex_accepts_only_empty() {
        let g = compile("").unwrap();
        assert!(g.accepts(b"").unwrap());
        assert!(!g.accepts(b"a").unwrap());
        let g = compile("a*").unwrap();
        assert!(g.accepts(b"").unwrap());
        assert!(g.accepts(b"aaa").unwrap());
    }
}
