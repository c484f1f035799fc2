//! Byte spans with their line and column, shared by the text front-ends.
//!
//! Every AST node of the Lark and GBNF front-ends carries a [`Span`]: the byte
//! range it covers in the source plus the line and column where it starts, so
//! errors found long after parsing (while lowering) can still point at the
//! text that caused them.

use std::fmt;

/// A place in a source text: byte offset, 1-based line, 1-based column.
///
/// The column counts Unicode scalar values (characters), not bytes, so it
/// matches what an editor shows for UTF-8 sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Location {
    /// Byte offset from the start of the source.
    pub offset: usize,
    /// Line number, starting at 1.
    pub line: u32,
    /// Column number in characters, starting at 1.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The byte range `start..end` of a node and the line and column of `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Byte offset of the first byte of the node.
    pub start: usize,
    /// Byte offset one past the last byte of the node (`end >= start`).
    pub end: usize,
    /// Line of `start`, starting at 1.
    pub line: u32,
    /// Column of `start` in characters, starting at 1.
    pub column: u32,
}

impl Span {
    /// The location of the first byte of the span.
    pub fn location(&self) -> Location {
        Location { offset: self.start, line: self.line, column: self.column }
    }

    /// The span from the start of `self` to the end of `other`.
    ///
    /// `other` must not start before `self`; if it ends before `self` ends,
    /// the result keeps `self`'s end.
    pub fn to(&self, other: Span) -> Span {
        Span { end: other.end.max(self.end), ..*self }
    }

    /// The span's text in `src` (empty when the span does not fit `src`).
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        src.get(self.start..self.end).unwrap_or("")
    }
}

/// A cursor over a source text that tracks the line and column of its
/// position as it advances, one character at a time.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    column: u32,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Cursor { src, pos: 0, line: 1, column: 1 }
    }

    pub(crate) fn src(&self) -> &'a str {
        self.src
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn location(&self) -> Location {
        Location { offset: self.pos, line: self.line, column: self.column }
    }

    /// The rest of the source from the current position.
    pub(crate) fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub(crate) fn peek_nth(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    pub(crate) fn starts_with(&self, s: &str) -> bool {
        self.rest().starts_with(s)
    }

    pub(crate) fn is_eof(&self) -> bool {
        self.pos >= self.src.len()
    }

    /// Consumes one character and returns it.
    pub(crate) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// Consumes `n` bytes, which must end on a character boundary.
    pub(crate) fn bump_bytes(&mut self, n: usize) {
        let end = (self.pos + n).min(self.src.len());
        while self.pos < end {
            self.bump();
        }
    }

    /// A span from `start` (a location taken earlier) to the current position.
    pub(crate) fn span_from(&self, start: Location) -> Span {
        Span { start: start.offset, end: self.pos, line: start.line, column: start.column }
    }
}

/// The location of byte `offset` in `src` (clamped to the source length and
/// moved back to a character boundary). Linear in `offset`; meant for errors.
pub(crate) fn location_of(src: &str, offset: usize) -> Location {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Location {
        offset,
        line: before.matches('\n').count() as u32 + 1,
        column: src[line_start..offset].chars().count() as u32 + 1,
    }
}
