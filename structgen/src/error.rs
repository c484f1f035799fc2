//! The front door's error type: one [`Error`] for every grammar kind and
//! for vocabularies, with what went wrong and where.

use std::fmt;

/// What kind of problem an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text does not parse: a grammar's syntax, a schema or request
    /// that is not JSON, a regex that does not parse.
    Syntax,
    /// A construct structgen does not support (a JSON Schema keyword or
    /// format, a Lark feature, a pattern with look-behind), or one that
    /// cannot be expressed exactly.
    Unsupported,
    /// Well-formed but wrong: an unknown or duplicate name, a schema keyword
    /// with a value of the wrong shape, an unresolved `$ref`.
    Invalid,
    /// The grammar or schema accepts no text at all.
    Unsatisfiable,
    /// A configured resource limit was exceeded.
    Limit,
    /// A request in llguidance's format with an unknown or malformed field.
    Request,
    /// A vocabulary that cannot be used (duplicate ids, stop tokens outside
    /// it, a trie or slicer that cannot be built).
    Vocabulary,
}

impl ErrorKind {
    /// A short stable name (`"syntax"`, `"limit"`, …) for reports and bindings.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Unsatisfiable => "unsatisfiable",
            ErrorKind::Limit => "limit",
            ErrorKind::Request => "request",
            ErrorKind::Vocabulary => "vocabulary",
        }
    }
}

/// Where in its input an [`Error`] is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Location {
    /// A place in a text (a Lark, GBNF or regex source, or a JSON text that
    /// does not parse): 1-based line and column (in characters) and the
    /// byte offset.
    Text {
        /// Line, from 1.
        line: u32,
        /// Column in characters, from 1.
        column: u32,
        /// Byte offset from the start of the text.
        offset: usize,
    },
    /// A JSON pointer (RFC 6901) into a JSON Schema or a request.
    Pointer(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Text { line, column, .. } => write!(f, "{line}:{column}"),
            Location::Pointer(p) => write!(f, "\"{p}\""),
        }
    }
}

/// A grammar, schema, request or vocabulary that cannot be used, with the
/// place that made it so.
///
/// `Display` prints `location: kind: message` (the location when known),
/// followed by the source line with a caret for text grammars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    location: Option<Location>,
    keyword: Option<String>,
    grammar: Option<usize>,
    snippet: Option<String>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            location: None,
            keyword: None,
            grammar: None,
            snippet: None,
        }
    }

    pub(crate) fn at(mut self, location: Location) -> Error {
        self.location = Some(location);
        self
    }

    /// The error, about the JSON Schema keyword `keyword`.
    pub(crate) fn with_keyword(mut self, keyword: &str) -> Error {
        self.keyword = Some(keyword.to_owned());
        self
    }

    /// The error, located in grammar `index` of a multi-grammar request
    /// (a pointer becomes relative to the request).
    pub(crate) fn in_grammar(mut self, index: usize, field: &str) -> Error {
        self.grammar = Some(index);
        if let Some(Location::Pointer(p)) = &self.location {
            self.location = Some(Location::Pointer(format!("/grammars/{index}/{field}{p}")));
        }
        self
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where the problem is, when it has a place.
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// The 1-based line, for errors in a text.
    pub fn line(&self) -> Option<u32> {
        match self.location {
            Some(Location::Text { line, .. }) => Some(line),
            _ => None,
        }
    }

    /// The 1-based column, for errors in a text.
    pub fn column(&self) -> Option<u32> {
        match self.location {
            Some(Location::Text { column, .. }) => Some(column),
            _ => None,
        }
    }

    /// The JSON pointer, for errors in a schema or a request.
    pub fn pointer(&self) -> Option<&str> {
        match &self.location {
            Some(Location::Pointer(p)) => Some(p),
            _ => None,
        }
    }

    /// The JSON Schema keyword at fault (`"uniqueItems"`), when one is.
    pub fn keyword(&self) -> Option<&str> {
        self.keyword.as_deref()
    }

    /// The index of the grammar at fault in an llguidance request with
    /// several grammars.
    pub fn grammar_index(&self) -> Option<usize> {
        self.grammar
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{loc}: ")?;
        }
        write!(f, "{}", self.kind.name())?;
        if let Some(k) = &self.keyword {
            write!(f, " `{k}`")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(s) = &self.snippet {
            write!(f, "\n{s}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl From<grammar::Error> for Error {
    fn from(e: grammar::Error) -> Error {
        let kind = match e.kind() {
            grammar::ErrorKind::Syntax => ErrorKind::Syntax,
            grammar::ErrorKind::Unsupported => ErrorKind::Unsupported,
            grammar::ErrorKind::Limit => ErrorKind::Limit,
            _ => ErrorKind::Invalid,
        };
        Error {
            kind,
            message: e.message().to_owned(),
            location: e.location().map(|l| Location::Text {
                line: l.line,
                column: l.column,
                offset: l.offset,
            }),
            keyword: None,
            grammar: None,
            snippet: e.snippet().map(str::to_owned),
        }
    }
}

impl From<jsonschema::Error> for Error {
    fn from(e: jsonschema::Error) -> Error {
        use jsonschema::ErrorKind as J;
        let kind = match e.kind() {
            J::InvalidSchema | J::UnresolvedRef => ErrorKind::Invalid,
            J::Unsatisfiable => ErrorKind::Unsatisfiable,
            J::LimitExceeded => ErrorKind::Limit,
            _ => ErrorKind::Unsupported,
        };
        Error {
            kind,
            message: e.message().to_owned(),
            location: Some(Location::Pointer(e.pointer().to_owned())),
            keyword: (!e.keyword().is_empty()).then(|| e.keyword().to_owned()),
            grammar: None,
            snippet: None,
        }
    }
}

impl From<earley::GrammarError> for Error {
    fn from(e: earley::GrammarError) -> Error {
        let kind = match &e {
            earley::GrammarError::EmptyLanguage { .. } => ErrorKind::Unsatisfiable,
            earley::GrammarError::TooLarge { .. } => ErrorKind::Limit,
            earley::GrammarError::Lexer(l) => match l.kind() {
                lexer::LexerErrorKind::Regex { .. } => ErrorKind::Syntax,
                lexer::LexerErrorKind::EngineFault { .. } => ErrorKind::Unsupported,
                _ => ErrorKind::Limit,
            },
            _ => ErrorKind::Invalid,
        };
        Error::new(kind, e.to_string())
    }
}

/// A JSON text that does not parse, located at its line and column.
pub(crate) fn json_syntax(what: &str, e: &serde_json::Error, text: &str) -> Error {
    let (line, column) = (e.line() as u32, e.column() as u32);
    // serde_json counts columns in bytes; the offset is the line's start
    // plus that.
    let line_start: usize =
        text.split_inclusive('\n').take(line.saturating_sub(1) as usize).map(str::len).sum();
    let offset = (line_start + column.saturating_sub(1) as usize).min(text.len());
    let column =
        text.get(line_start..offset).map_or(column, |prefix| prefix.chars().count() as u32 + 1);
    Error::new(ErrorKind::Syntax, format!("{what} is not valid JSON: {e}")).at(Location::Text {
        line,
        column,
        offset,
    })
}

/// A request-format error (llguidance requests, structural tags) at the
/// JSON pointer `pointer`.
pub(crate) fn request_error(pointer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Request, message).at(Location::Pointer(pointer.to_owned()))
}

/// The object at `pointer` in a request, with only the `allowed` keys: an
/// unknown key is an error at its own pointer.
pub(crate) fn request_object<'a>(
    v: &'a serde_json::Value,
    pointer: &str,
    allowed: &[&str],
) -> Result<&'a serde_json::Map<String, serde_json::Value>, Error> {
    let Some(map) = v.as_object() else {
        return Err(request_error(pointer, "expected an object"));
    };
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(request_error(
            &format!("{pointer}/{}", pointer_token(k)),
            format!("unknown field `{k}` (known: {})", allowed.join(", ")),
        ));
    }
    Ok(map)
}

/// A key as a JSON-pointer token (RFC 6901: `~` → `~0`, `/` → `~1`).
pub(crate) fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
