//! Compile errors: what went wrong, the keyword, and the JSON pointer.

use std::fmt;

/// What kind of problem stopped the compilation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The schema text given to [`compile_str`](crate::compile_str) is not
    /// JSON; the message has the line and column.
    InvalidJson,
    /// The schema is not valid JSON Schema (a keyword has a value of the wrong shape).
    InvalidSchema,
    /// A keyword of the JSON Schema vocabulary this compiler does not implement.
    UnsupportedKeyword,
    /// A keyword whose value, in this combination, cannot be expressed exactly
    /// (for example `uniqueItems` over an unbounded item type).
    Inexpressible,
    /// A `format` this compiler does not know, with
    /// [`Options::strict_formats`](crate::Options::strict_formats) set
    /// (otherwise an unknown format is an annotation and a [`Warning`]).
    UnknownFormat,
    /// A `pattern` using a construct with no regular equivalent (backreference,
    /// lookaround) or with invalid syntax.
    UnsupportedPattern,
    /// A `$ref` that resolves to no schema: its URI names neither the
    /// document nor one of [`Options::documents`](crate::Options::documents)
    /// (the message names the absolute URI), or the pointer or anchor is
    /// not in the document it names.
    UnresolvedRef,
    /// The schema accepts no instance at all.
    Unsatisfiable,
    /// A configured resource limit was exceeded.
    LimitExceeded,
    /// The regex engine (derivre) failed internally on a regex built from
    /// the schema object at the error's pointer; the schema is not supported.
    EngineFault,
}

impl ErrorKind {
    /// A short stable name, used in reports and baselines.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::InvalidSchema => "invalid_schema",
            ErrorKind::UnsupportedKeyword => "unsupported_keyword",
            ErrorKind::Inexpressible => "inexpressible",
            ErrorKind::UnknownFormat => "unknown_format",
            ErrorKind::UnsupportedPattern => "unsupported_pattern",
            ErrorKind::UnresolvedRef => "unresolved_ref",
            ErrorKind::Unsatisfiable => "unsatisfiable",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::EngineFault => "engine_fault",
        }
    }
}

/// A schema compilation error.
///
/// Carries the kind, the keyword at fault (empty when the problem is not one
/// keyword's) and the JSON pointer (RFC 6901) of the schema object holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    keyword: String,
    pointer: String,
    message: String,
}

impl Error {
    pub(crate) fn new(
        kind: ErrorKind,
        keyword: &str,
        pointer: &str,
        message: impl Into<String>,
    ) -> Error {
        Error {
            kind,
            keyword: keyword.to_string(),
            pointer: pointer.to_string(),
            message: message.into(),
        }
    }

    /// The kind of the error.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The keyword at fault, such as `"uniqueItems"`; empty if none.
    pub fn keyword(&self) -> &str {
        &self.keyword
    }

    /// The JSON pointer of the schema object holding the keyword (`""` is the root).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The human-readable detail.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind.name())?;
        if !self.keyword.is_empty() {
            write!(f, " `{}`", self.keyword)?;
        }
        write!(f, " at \"{}\": {}", self.pointer, self.message)
    }
}

impl std::error::Error for Error {}

/// Something the compilation accepted but the caller should know: an
/// unknown `format` taken as an annotation, a keyword lenient mode ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    keyword: String,
    pointer: String,
    message: String,
}

impl Warning {
    pub(crate) fn new(keyword: &str, pointer: &str, message: impl Into<String>) -> Warning {
        Warning {
            keyword: keyword.to_string(),
            pointer: pointer.to_string(),
            message: message.into(),
        }
    }

    /// The keyword concerned, such as `"format"`.
    pub fn keyword(&self) -> &str {
        &self.keyword
    }

    /// The JSON pointer of the schema object holding the keyword.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The human-readable detail.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` at \"{}\": {}", self.keyword, self.pointer, self.message)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Error>;
