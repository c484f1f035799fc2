//! The error type of every front-end: what went wrong and where.

use std::fmt;

use crate::span::{Location, Span};

/// What kind of problem a grammar has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text does not follow the grammar language's syntax (a stray
    /// character, an unterminated string, a missing `:` or `::=`).
    Syntax,
    /// A construct the language has but structgen does not support (Lark
    /// templates, terminal priorities, `%declare`, lookarounds, ...).
    Unsupported,
    /// A reference to a rule, terminal, import or special token that is not
    /// defined.
    UnknownName,
    /// A rule or terminal defined twice.
    Duplicate,
    /// A construct that is well-formed but meaningless: a reversed range, a
    /// recursive terminal, a rule reference inside a terminal, a regex that
    /// does not compile.
    Invalid,
    /// A configurable resource limit was exceeded (nesting depth, repetition
    /// count, number of nodes, size of an inlined terminal).
    Limit,
    /// An error reported by the parser back end while building the grammar.
    Build,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::Syntax => "syntax error",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::UnknownName => "unknown name",
            ErrorKind::Duplicate => "duplicate definition",
            ErrorKind::Invalid => "invalid grammar",
            ErrorKind::Limit => "limit exceeded",
            ErrorKind::Build => "grammar build error",
        })
    }
}

/// A grammar error: its kind, a message, and (for text grammars) the line
/// and column where it was found, with the offending source line.
///
/// `Display` prints `line:column: message` followed by the source line and a
/// caret under the column, like a compiler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    location: Option<Location>,
    snippet: Option<String>,
}

impl Error {
    /// An error without a location (e.g. "no `start` rule").
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), location: None, snippet: None }
    }

    /// An error at the start of `span` in `src`; the snippet is the source
    /// line of that position.
    pub fn at(kind: ErrorKind, message: impl Into<String>, span: Span, src: &str) -> Self {
        Self::at_location(kind, message, span.location(), src)
    }

    /// An error at `location` in `src`.
    pub fn at_location(
        kind: ErrorKind,
        message: impl Into<String>,
        location: Location,
        src: &str,
    ) -> Self {
        Error {
            kind,
            message: message.into(),
            location: Some(location),
            snippet: Some(line_snippet(src, location)),
        }
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without location or snippet.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where the error is, when it has a place in a text grammar.
    pub fn location(&self) -> Option<Location> {
        self.location
    }

    /// The 1-based line, when the error has a location.
    pub fn line(&self) -> Option<u32> {
        self.location.map(|l| l.line)
    }

    /// The 1-based column (in characters), when the error has a location.
    pub fn column(&self) -> Option<u32> {
        self.location.map(|l| l.column)
    }

    /// The source line of the error with a caret under the column.
    pub fn snippet(&self) -> Option<&str> {
        self.snippet.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some(loc) => write!(f, "{loc}: {}: {}", self.kind, self.message)?,
            None => write!(f, "{}: {}", self.kind, self.message)?,
        }
        if let Some(snippet) = &self.snippet {
            write!(f, "\n{snippet}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// The longest part of a source line a snippet shows, in characters.
const SNIPPET_WIDTH: usize = 100;

/// The source line holding `loc`, cut to a window around the column, with a
/// caret line under it.
fn line_snippet(src: &str, loc: Location) -> String {
    let offset = loc.offset.min(src.len());
    let line_start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
    let line: Vec<char> = src[line_start..line_end]
        .trim_end_matches('\r')
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let col = (loc.column as usize).saturating_sub(1).min(line.len());
    let from = col.saturating_sub(SNIPPET_WIDTH / 2);
    let to = (from + SNIPPET_WIDTH).min(line.len());
    let shown: String = line[from..to].iter().collect();
    format!("{:>5} | {shown}\n{:>5} | {}^", loc.line, "", " ".repeat(col - from))
}
