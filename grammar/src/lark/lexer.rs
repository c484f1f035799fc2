//! The tokenizer of the Lark-like dialect.
//!
//! The whole source is tokenized up front (the parser needs two tokens of
//! look-ahead to tell `x ~ 3` from `x ~Y`). The JSON after `%json`,
//! `%regex` and `%llguidance` is parsed here with `serde_json`, so the
//! parser sees it as one token.

use crate::error::{Error, ErrorKind};
use crate::span::{Cursor, Location, Span, location_of};

/// A token of the dialect.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// One or more line breaks (with the blank and comment lines between).
    Newline,
    /// A name: letters, digits, `_` and `-` (not followed by `>`).
    Ident(String),
    /// A string literal, decoded, with its `i` flag.
    Str(String, bool),
    /// A regex literal: pattern (with `\/` unescaped) and flags.
    Regex(String, String),
    /// A number as written (`12`, `-1`, `0.7`).
    Number(String),
    /// `<...>`: the text between `<` and `>`, both included.
    Special(String),
    /// `%name`.
    Directive(String),
    /// The JSON value after `%json`, `%regex` or `%llguidance`.
    Json(serde_json::Value),
    /// `@name`.
    At(String),
    Colon,
    ColonColon,
    Pipe,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Star,
    Plus,
    Question,
    Tilde,
    Amp,
    Dot,
    DotDot,
    Arrow,
    Bang,
    Eq,
    Eof,
}

impl Tok {
    /// How the token is named in "expected X, found Y" messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Newline => "end of line".into(),
            Tok::Ident(s) => format!("name `{s}`"),
            Tok::Str(..) => "string".into(),
            Tok::Regex(..) => "regex".into(),
            Tok::Number(n) => format!("number `{n}`"),
            Tok::Special(s) => format!("special token `{s}`"),
            Tok::Directive(d) => format!("`%{d}`"),
            Tok::Json(_) => "JSON value".into(),
            Tok::At(s) => format!("`@{s}`"),
            Tok::Eof => "end of input".into(),
            other => format!("`{}`", punct_text(other)),
        }
    }
}

fn punct_text(t: &Tok) -> &'static str {
    match t {
        Tok::Colon => ":",
        Tok::ColonColon => "::",
        Tok::Pipe => "|",
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::LBracket => "[",
        Tok::RBracket => "]",
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::Comma => ",",
        Tok::Star => "*",
        Tok::Plus => "+",
        Tok::Question => "?",
        Tok::Tilde => "~",
        Tok::Amp => "&",
        Tok::Dot => ".",
        Tok::DotDot => "..",
        Tok::Arrow => "->",
        Tok::Bang => "!",
        Tok::Eq => "=",
        _ => "?",
    }
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) span: Span,
}

/// Tokenizes `src`; the last token is always [`Tok::Eof`].
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token>, Error> {
    let mut lx = Lexer { cur: Cursor::new(src), out: Vec::new() };
    lx.run()?;
    Ok(lx.out)
}

struct Lexer<'a> {
    cur: Cursor<'a>,
    out: Vec<Token>,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Lexer<'a> {
    fn err(&self, msg: impl Into<String>, at: Location) -> Error {
        Error::at_location(ErrorKind::Syntax, msg, at, self.cur.src())
    }

    fn push(&mut self, tok: Tok, start: Location) {
        let span = self.cur.span_from(start);
        self.out.push(Token { tok, span });
    }

    fn run(&mut self) -> Result<(), Error> {
        loop {
            self.skip_blanks();
            let start = self.cur.location();
            let Some(c) = self.cur.peek() else {
                self.push(Tok::Eof, start);
                return Ok(());
            };
            match c {
                '\n' => {
                    self.cur.bump();
                    if !matches!(self.out.last(), Some(Token { tok: Tok::Newline, .. }) | None) {
                        self.push(Tok::Newline, start);
                    }
                }
                '"' => self.string(start)?,
                '/' => self.regex(start)?,
                '<' => self.special(start)?,
                '%' => self.directive(start)?,
                '@' => {
                    self.cur.bump();
                    let name = self.ident_text();
                    if name.is_empty() {
                        return Err(self.err("expected a grammar name after `@`", start));
                    }
                    self.push(Tok::At(name), start);
                }
                c if is_ident_start(c) => {
                    let name = self.ident_text();
                    self.push(Tok::Ident(name), start);
                }
                c if c.is_ascii_digit() => self.number(start),
                '-' if self.cur.peek_nth(1).is_some_and(|d| d.is_ascii_digit()) => {
                    self.cur.bump();
                    self.number(start);
                    if let Some(Token { tok: Tok::Number(n), .. }) = self.out.last_mut() {
                        n.insert(0, '-');
                    }
                }
                _ => self.punct(start)?,
            }
        }
    }

    /// Skips spaces, tabs, carriage returns and comments (`//` and `#` to the
    /// end of the line), but not line breaks.
    fn skip_blanks(&mut self) {
        loop {
            match self.cur.peek() {
                Some(' ' | '\t' | '\r' | '\u{feff}') => {
                    self.cur.bump();
                }
                Some('#') => self.skip_line(),
                Some('/') if self.cur.starts_with("//") => self.skip_line(),
                _ => return,
            }
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.cur.peek() {
            if c == '\n' {
                return;
            }
            self.cur.bump();
        }
    }

    /// Reads a name; `-` counts as a name character unless it starts `->`.
    fn ident_text(&mut self) -> String {
        let start = self.cur.pos();
        while let Some(c) = self.cur.peek() {
            let dash = c == '-' && self.cur.peek_nth(1).is_some_and(|n| n != '>');
            if is_ident_char(c) || dash {
                self.cur.bump();
            } else {
                break;
            }
        }
        self.cur.src()[start..self.cur.pos()].to_string()
    }

    fn number(&mut self, start: Location) {
        let from = self.cur.pos();
        while self.cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.cur.bump();
        }
        // A fraction (`0.7`), but not a range (`2..5`).
        if self.cur.peek() == Some('.') && self.cur.peek_nth(1).is_some_and(|c| c.is_ascii_digit())
        {
            self.cur.bump();
            while self.cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.cur.bump();
            }
        }
        let text = self.cur.src()[from..self.cur.pos()].to_string();
        self.push(Tok::Number(text), start);
    }

    fn punct(&mut self, start: Location) -> Result<(), Error> {
        let two = [("::", Tok::ColonColon), ("..", Tok::DotDot), ("->", Tok::Arrow)];
        for (s, tok) in two {
            if self.cur.starts_with(s) {
                self.cur.bump_bytes(2);
                self.push(tok, start);
                return Ok(());
            }
        }
        let c = self.cur.peek().unwrap_or('\0');
        let tok = match c {
            ':' => Tok::Colon,
            '|' => Tok::Pipe,
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            '[' => Tok::LBracket,
            ']' => Tok::RBracket,
            '{' => Tok::LBrace,
            '}' => Tok::RBrace,
            ',' => Tok::Comma,
            '*' => Tok::Star,
            '+' => Tok::Plus,
            '?' => Tok::Question,
            '~' => Tok::Tilde,
            '&' => Tok::Amp,
            '.' => Tok::Dot,
            '!' => Tok::Bang,
            '=' => Tok::Eq,
            '\'' => return Err(self.err("strings use double quotes (`\"...\"`)", start)),
            _ => return Err(self.err(format!("unexpected character {c:?}"), start)),
        };
        self.cur.bump();
        self.push(tok, start);
        Ok(())
    }

    /// A string literal: JSON escapes plus `\xHH` (the code point U+00HH), as
    /// in llguidance; an `i` right after the closing quote makes it
    /// case-insensitive.
    fn string(&mut self, start: Location) -> Result<(), Error> {
        self.cur.bump();
        let mut value = String::new();
        loop {
            let at = self.cur.location();
            match self.cur.bump() {
                None | Some('\n') => return Err(self.err("unterminated string", start)),
                Some('"') => break,
                Some('\\') => value.push(self.string_escape(at)?),
                Some(c) => value.push(c),
            }
        }
        let ci = self.cur.peek() == Some('i') && !self.cur.peek_nth(1).is_some_and(is_ident_char);
        if ci {
            self.cur.bump();
        }
        self.push(Tok::Str(value, ci), start);
        Ok(())
    }

    fn string_escape(&mut self, at: Location) -> Result<char, Error> {
        let c = self.cur.bump();
        Ok(match c {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('/') => '/',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('x') => {
                let v = self.hex_digits(2, at)?;
                char::from_u32(v).ok_or_else(|| self.err("invalid `\\x` escape", at))?
            }
            Some('u') => {
                let hi = self.hex_digits(4, at)?;
                if (0xD800..0xDC00).contains(&hi) {
                    // A UTF-16 surrogate pair, as JSON writes astral characters.
                    if !self.cur.starts_with("\\u") {
                        return Err(self.err("unpaired surrogate in `\\u` escape", at));
                    }
                    self.cur.bump_bytes(2);
                    let lo = self.hex_digits(4, at)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(self.err("unpaired surrogate in `\\u` escape", at));
                    }
                    let v = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    char::from_u32(v).ok_or_else(|| self.err("invalid `\\u` escape", at))?
                } else {
                    char::from_u32(hi)
                        .ok_or_else(|| self.err("unpaired surrogate in `\\u` escape", at))?
                }
            }
            Some(other) => {
                return Err(self.err(
                    format!(
                        "invalid escape `\\{}` in string (allowed: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\xHH \\uHHHH)",
                        other.escape_debug()
                    ),
                    at,
                ));
            }
            None => return Err(self.err("unterminated string", at)),
        })
    }

    fn hex_digits(&mut self, n: usize, at: Location) -> Result<u32, Error> {
        let mut v = 0u32;
        for _ in 0..n {
            match self.cur.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    self.cur.bump();
                    v = v * 16 + d;
                }
                None => return Err(self.err(format!("expected {n} hex digits in escape"), at)),
            }
        }
        Ok(v)
    }

    /// A regex literal `/.../flags`; `\/` stands for `/`, other escapes are
    /// kept for the regex parser.
    fn regex(&mut self, start: Location) -> Result<(), Error> {
        self.cur.bump();
        let mut pattern = String::new();
        loop {
            match self.cur.bump() {
                None | Some('\n') => return Err(self.err("unterminated regex", start)),
                Some('/') => break,
                Some('\\') => match self.cur.bump() {
                    Some('/') => pattern.push('/'),
                    Some('\n') | None => return Err(self.err("unterminated regex", start)),
                    Some(c) => {
                        pattern.push('\\');
                        pattern.push(c);
                    }
                },
                Some(c) => pattern.push(c),
            }
        }
        let from = self.cur.pos();
        while self.cur.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.cur.bump();
        }
        let flags = self.cur.src()[from..self.cur.pos()].to_string();
        self.push(Tok::Regex(pattern, flags), start);
        Ok(())
    }

    /// `<name>`, `<|name|>` or `<[ids]>`: everything up to the first `>`, on
    /// one line and without spaces.
    fn special(&mut self, start: Location) -> Result<(), Error> {
        let from = self.cur.pos();
        self.cur.bump();
        loop {
            match self.cur.peek() {
                Some('>') => {
                    self.cur.bump();
                    break;
                }
                Some(c) if c.is_whitespace() => {
                    return Err(self.err("unterminated special token (expected `>`)", start));
                }
                None => return Err(self.err("unterminated special token (expected `>`)", start)),
                Some(_) => {
                    self.cur.bump();
                }
            }
        }
        let text = self.cur.src()[from..self.cur.pos()].to_string();
        if text.len() <= 2 {
            return Err(self.err("empty special token `<>`", start));
        }
        self.push(Tok::Special(text), start);
        Ok(())
    }

    fn directive(&mut self, start: Location) -> Result<(), Error> {
        self.cur.bump();
        let name = self.ident_text();
        if name.is_empty() {
            return Err(self.err("expected a directive name after `%`", start));
        }
        let takes_json = matches!(name.as_str(), "json" | "regex" | "llguidance");
        self.push(Tok::Directive(name), start);
        if takes_json {
            self.json()?;
        }
        Ok(())
    }

    /// Parses one JSON value (after blanks and line breaks) with serde_json.
    fn json(&mut self) -> Result<(), Error> {
        while self.cur.peek().is_some_and(char::is_whitespace) {
            self.cur.bump();
        }
        let start = self.cur.location();
        let rest = self.cur.rest();
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let used = stream.byte_offset();
                self.cur.bump_bytes(used);
                self.push(Tok::Json(value), start);
                Ok(())
            }
            Some(Err(e)) => {
                // serde_json counts lines and (byte) columns from the start of
                // `rest`; translate to a place in the whole source.
                let mut off = self.cur.pos();
                let mut line = 1;
                for (i, b) in rest.bytes().enumerate() {
                    if line == e.line() {
                        off = self.cur.pos() + i;
                        break;
                    }
                    if b == b'\n' {
                        line += 1;
                        off = self.cur.pos() + i + 1;
                    }
                }
                let off = off + e.column().saturating_sub(1);
                let loc = location_of(self.cur.src(), off);
                // Drop serde_json's own " at line L column C": it counts from
                // the start of the JSON, not of the grammar.
                let msg = e.to_string();
                let msg = msg.rsplit_once(" at line ").map_or(msg.as_str(), |(m, _)| m);
                Err(self.err(format!("invalid JSON: {msg}"), loc))
            }
            None => Err(self.err("expected a JSON value", start)),
        }
    }
}
