//! The recursive-descent parser of GBNF, following llama.cpp's
//! `llama-grammar.cpp` rules for spaces, line breaks, escapes and
//! repetitions.

use crate::config::Limits;
use crate::error::{Error, ErrorKind};
use crate::gbnf::ast::{Alternatives, Expr, ExprKind, Grammar, Rule, Sequence, TokenRef};
use crate::span::{Cursor, Location, Span};

/// Parses a whole GBNF grammar.
pub(crate) fn parse(src: &str, limits: &Limits) -> Result<Grammar, Error> {
    if src.len() > limits.max_source_bytes {
        return Err(Error::new(
            ErrorKind::Limit,
            format!(
                "grammar is {} bytes, more than the limit of {} (Limits::max_source_bytes)",
                src.len(),
                limits.max_source_bytes
            ),
        ));
    }
    let mut p = Parser { cur: Cursor::new(src), limits, depth: 0, nodes: 0 };
    p.grammar()
}

struct Parser<'a> {
    cur: Cursor<'a>,
    limits: &'a Limits,
    depth: usize,
    nodes: usize,
}

/// Rule names: letters, digits, `-` and `_`.
fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

impl<'a> Parser<'a> {
    fn err(&self, kind: ErrorKind, msg: impl Into<String>, at: Location) -> Error {
        Error::at_location(kind, msg, at, self.cur.src())
    }

    fn here_err(&self, msg: impl Into<String>) -> Error {
        let found = match self.cur.peek() {
            None => "end of input".to_string(),
            Some('\n') => "end of line".to_string(),
            Some(c) => format!("{c:?}"),
        };
        self.err(ErrorKind::Syntax, format!("{}, found {found}", msg.into()), self.cur.location())
    }

    /// Skips spaces, tabs and `#` comments, and line breaks when `newlines`.
    fn space(&mut self, newlines: bool) {
        while let Some(c) = self.cur.peek() {
            match c {
                ' ' | '\t' => {}
                '\r' | '\n' if newlines => {}
                '#' => {
                    while self.cur.peek().is_some_and(|c| c != '\n' && c != '\r') {
                        self.cur.bump();
                    }
                    continue;
                }
                _ => return,
            }
            self.cur.bump();
        }
    }

    fn node(&mut self, kind: ExprKind, start: Location) -> Result<Expr, Error> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "grammar has more than {} expressions (Limits::max_nodes)",
                    self.limits.max_nodes
                ),
                start,
            ));
        }
        Ok(Expr { kind, span: self.cur.span_from(start) })
    }

    fn grammar(&mut self) -> Result<Grammar, Error> {
        let mut rules = Vec::new();
        self.space(true);
        while !self.cur.is_eof() {
            rules.push(self.rule()?);
            self.space(true);
        }
        Ok(Grammar { rules })
    }

    fn name(&mut self) -> Result<(String, Span), Error> {
        let start = self.cur.location();
        while self.cur.peek().is_some_and(is_word_char) {
            self.cur.bump();
        }
        let span = self.cur.span_from(start);
        if span.start == span.end {
            return Err(self.here_err("expected a rule name"));
        }
        Ok((span.text(self.cur.src()).to_string(), span))
    }

    fn rule(&mut self) -> Result<Rule, Error> {
        let start = self.cur.location();
        let (name, name_span) = self.name()?;
        self.space(false);
        if !self.cur.starts_with("::=") {
            return Err(self.here_err("expected `::=`"));
        }
        self.cur.bump_bytes(3);
        self.space(true);
        let body = self.alternatives(false)?;
        match self.cur.peek() {
            None => {}
            Some('\n') => {
                self.cur.bump();
            }
            Some('\r') => {
                self.cur.bump();
                if self.cur.peek() == Some('\n') {
                    self.cur.bump();
                }
            }
            Some(_) => return Err(self.here_err("expected the end of the line")),
        }
        Ok(Rule { name, name_span, body, span: self.cur.span_from(start) })
    }

    fn alternatives(&mut self, nested: bool) -> Result<Alternatives, Error> {
        let start = self.cur.location();
        let mut alternatives = vec![self.sequence(nested)?];
        while self.cur.peek() == Some('|') {
            self.cur.bump();
            self.space(true);
            alternatives.push(self.sequence(nested)?);
        }
        Ok(Alternatives { alternatives, span: self.cur.span_from(start) })
    }

    fn sequence(&mut self, nested: bool) -> Result<Sequence, Error> {
        let start = self.cur.location();
        let mut items: Vec<Expr> = Vec::new();
        loop {
            let at = self.cur.location();
            let Some(c) = self.cur.peek() else { break };
            match c {
                '"' => {
                    let s = self.literal()?;
                    items.push(self.node(ExprKind::Literal(s), at)?);
                }
                '[' => {
                    let (negated, ranges) = self.char_class()?;
                    items.push(self.node(ExprKind::CharClass { negated, ranges }, at)?);
                }
                '.' => {
                    self.cur.bump();
                    items.push(self.node(ExprKind::Any, at)?);
                }
                '(' => {
                    self.cur.bump();
                    self.depth += 1;
                    if self.depth > self.limits.max_nesting {
                        return Err(self.err(
                            ErrorKind::Limit,
                            format!(
                                "groups nested deeper than {} levels (Limits::max_nesting)",
                                self.limits.max_nesting
                            ),
                            at,
                        ));
                    }
                    self.space(true);
                    let inner = self.alternatives(true)?;
                    self.depth -= 1;
                    if self.cur.peek() != Some(')') {
                        return Err(self.here_err("expected `)`"));
                    }
                    self.cur.bump();
                    items.push(self.node(ExprKind::Group(inner), at)?);
                }
                '<' | '!' => {
                    let negated = c == '!';
                    if negated {
                        self.cur.bump();
                        if self.cur.peek() != Some('<') {
                            return Err(self.here_err("expected `<` after `!`"));
                        }
                    }
                    let token = self.token()?;
                    items.push(self.node(ExprKind::Token { negated, token }, at)?);
                }
                '*' | '+' | '?' | '{' => {
                    let Some(last) = items.pop() else {
                        return Err(self.err(
                            ErrorKind::Syntax,
                            format!("`{c}` must follow an expression"),
                            at,
                        ));
                    };
                    let (min, max) = self.repetition(nested)?;
                    let kind = ExprKind::Repeat { inner: Box::new(last.clone()), min, max };
                    items.push(self.node(kind, last.span.location())?);
                }
                c if is_word_char(c) => {
                    let (name, _) = self.name()?;
                    items.push(self.node(ExprKind::Name(name), at)?);
                }
                _ => break,
            }
            self.space(nested);
        }
        let span = match items.last() {
            Some(last) => Span { end: last.span.end, ..self.cur.span_from(start) },
            None => Span { end: start.offset, ..self.cur.span_from(start) },
        };
        Ok(Sequence { items, span })
    }

    /// `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` (the cursor is on the operator).
    fn repetition(&mut self, nested: bool) -> Result<(u32, Option<u32>), Error> {
        let start = self.cur.location();
        match self.cur.bump() {
            Some('*') => return Ok((0, None)),
            Some('+') => return Ok((1, None)),
            Some('?') => return Ok((0, Some(1))),
            _ => {}
        }
        self.space(nested);
        let min = self.int()?;
        self.space(nested);
        let max = match self.cur.peek() {
            Some(',') => {
                self.cur.bump();
                self.space(nested);
                if self.cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                    let m = self.int()?;
                    self.space(nested);
                    Some(m)
                } else {
                    None
                }
            }
            _ => Some(min),
        };
        if self.cur.peek() != Some('}') {
            return Err(self.here_err("expected `}`"));
        }
        self.cur.bump();
        if let Some(max) = max
            && max < min
        {
            return Err(self.err(
                ErrorKind::Invalid,
                format!("repetition range end {max} is smaller than its start {min}"),
                start,
            ));
        }
        Ok((min, max))
    }

    fn int(&mut self) -> Result<u32, Error> {
        let start = self.cur.location();
        while self.cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.cur.bump();
        }
        let text = self.cur.span_from(start).text(self.cur.src()).to_string();
        if text.is_empty() {
            return Err(self.here_err("expected a number"));
        }
        let v: u64 = text.parse().unwrap_or(u64::MAX);
        if v > u64::from(self.limits.max_repeat) {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "repetition bound {text} is larger than {} (Limits::max_repeat)",
                    self.limits.max_repeat
                ),
                start,
            ));
        }
        Ok(v as u32)
    }

    /// One character of a literal or class, with llama.cpp's escapes.
    fn char(&mut self) -> Result<char, Error> {
        let at = self.cur.location();
        match self.cur.bump() {
            None => Err(self.err(ErrorKind::Syntax, "unexpected end of input", at)),
            Some('\\') => {
                let c = self.cur.bump();
                let hex = |p: &mut Self, n: usize| -> Result<char, Error> {
                    let mut v = 0u32;
                    for _ in 0..n {
                        match p.cur.peek().and_then(|c| c.to_digit(16)) {
                            Some(d) => {
                                p.cur.bump();
                                v = v * 16 + d;
                            }
                            None => {
                                return Err(p.err(
                                    ErrorKind::Syntax,
                                    format!("expected {n} hex digits in escape"),
                                    at,
                                ));
                            }
                        }
                    }
                    char::from_u32(v).ok_or_else(|| {
                        p.err(
                            ErrorKind::Invalid,
                            format!("escape U+{v:X} is not a Unicode scalar value"),
                            at,
                        )
                    })
                };
                match c {
                    Some('x') => hex(self, 2),
                    Some('u') => hex(self, 4),
                    Some('U') => hex(self, 8),
                    Some('t') => Ok('\t'),
                    Some('r') => Ok('\r'),
                    Some('n') => Ok('\n'),
                    Some(c @ ('\\' | '"' | '[' | ']')) => Ok(c),
                    Some(c) => Err(self.err(
                        ErrorKind::Syntax,
                        format!("unknown escape `\\{}`", c.escape_debug()),
                        at,
                    )),
                    None => Err(self.err(ErrorKind::Syntax, "unexpected end of input", at)),
                }
            }
            Some(c) => Ok(c),
        }
    }

    fn literal(&mut self) -> Result<String, Error> {
        let start = self.cur.location();
        self.cur.bump();
        let mut s = String::new();
        loop {
            match self.cur.peek() {
                None => return Err(self.err(ErrorKind::Syntax, "unterminated string", start)),
                Some('"') => {
                    self.cur.bump();
                    return Ok(s);
                }
                Some(_) => s.push(self.char()?),
            }
        }
    }

    fn char_class(&mut self) -> Result<(bool, Vec<(char, char)>), Error> {
        let start = self.cur.location();
        self.cur.bump();
        let negated = self.cur.peek() == Some('^');
        if negated {
            self.cur.bump();
        }
        let mut ranges = Vec::new();
        loop {
            match self.cur.peek() {
                None => {
                    return Err(self.err(ErrorKind::Syntax, "unterminated character class", start));
                }
                Some(']') => {
                    self.cur.bump();
                    return Ok((negated, ranges));
                }
                Some(_) => {}
            }
            let at = self.cur.location();
            let a = self.char()?;
            let mut b = a;
            if self.cur.peek() == Some('-') && self.cur.peek_nth(1).is_some_and(|c| c != ']') {
                self.cur.bump();
                b = self.char()?;
                if b < a {
                    return Err(self.err(
                        ErrorKind::Invalid,
                        format!("invalid range order in character class: {a:?} comes after {b:?}"),
                        at,
                    ));
                }
            }
            ranges.push((a, b));
        }
    }

    /// `<[id]>` or `<text>` (the cursor is on `<`).
    fn token(&mut self) -> Result<TokenRef, Error> {
        let start = self.cur.location();
        let from = self.cur.pos();
        self.cur.bump();
        if self.cur.peek() == Some('[') {
            self.cur.bump();
            let digits = self.cur.location();
            while self.cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.cur.bump();
            }
            let text = self.cur.span_from(digits).text(self.cur.src()).to_string();
            if !self.cur.starts_with("]>") {
                return Err(self.here_err("expected a token id and `]>`"));
            }
            self.cur.bump_bytes(2);
            let id = text.parse::<u32>().map_err(|_| {
                self.err(ErrorKind::Invalid, format!("invalid token id `{text}`"), start)
            })?;
            return Ok(TokenRef::Id(id));
        }
        while let Some(c) = self.cur.peek() {
            if c == '>' {
                self.cur.bump();
                let text = &self.cur.src()[from..self.cur.pos()];
                if text.len() <= 2 {
                    return Err(self.err(ErrorKind::Syntax, "empty token `<>`", start));
                }
                return Ok(TokenRef::Text(text.to_string()));
            }
            if c.is_whitespace() {
                break;
            }
            self.cur.bump();
        }
        Err(self.err(ErrorKind::Syntax, "unterminated token (expected `>`)", start))
    }
}
