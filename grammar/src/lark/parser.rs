//! The recursive-descent parser of the Lark-like dialect: tokens to [`ast`].
//!
//! Line breaks end a definition, except that a line starting with `|`
//! continues the alternatives above it (as in Lark). Inside `(...)` and
//! `[...]` line breaks are ignored, which llguidance does not allow; this
//! only accepts more spellings of the same grammars.

use crate::config::Limits;
use crate::error::{Error, ErrorKind};
use crate::lark::ast::{
    Alternative, Attr, AttrValue, Def, DefKind, Expansions, Expr, ExprKind, Grammar, Ident, Import,
    Item, Sequence, TokenIds,
};
use crate::lark::lexer::{Tok, Token, tokenize};
use crate::span::Span;

/// Parses a whole grammar.
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
    let toks = tokenize(src)?;
    let mut p = Parser { src, toks, pos: 0, limits, depth: 0, nodes: 0 };
    p.grammar()
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    limits: &'a Limits,
    /// Current nesting of groups and prefix operators.
    depth: usize,
    /// Expressions created so far.
    nodes: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek_at(&self, n: usize) -> &Tok {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn span(&self) -> Span {
        self.toks[self.pos].span
    }

    /// The span of the previous token (the last one consumed).
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn err(&self, kind: ErrorKind, msg: impl Into<String>, span: Span) -> Error {
        Error::at(kind, msg, span, self.src)
    }

    fn unexpected(&self, expected: &str) -> Error {
        self.err(
            ErrorKind::Syntax,
            format!("expected {expected}, found {}", self.peek().describe()),
            self.span(),
        )
    }

    fn expect(&mut self, tok: Tok, expected: &str) -> Result<Span, Error> {
        if *self.peek() == tok { Ok(self.bump().span) } else { Err(self.unexpected(expected)) }
    }

    fn skip_newlines(&mut self) {
        while *self.peek() == Tok::Newline {
            self.bump();
        }
    }

    fn enter(&mut self, span: Span) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > self.limits.max_nesting {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "expression nested deeper than {} levels (Limits::max_nesting)",
                    self.limits.max_nesting
                ),
                span,
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn node(&mut self, kind: ExprKind, span: Span) -> Result<Expr, Error> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "grammar has more than {} expressions (Limits::max_nodes)",
                    self.limits.max_nodes
                ),
                span,
            ));
        }
        Ok(Expr { kind, span })
    }

    fn grammar(&mut self) -> Result<Grammar, Error> {
        let mut items = Vec::new();
        loop {
            self.skip_newlines();
            match self.peek() {
                Tok::Eof => break,
                Tok::Directive(_) => items.push(self.directive()?),
                Tok::Ident(_) | Tok::Question | Tok::Bang => items.push(Item::Def(self.def()?)),
                _ => return Err(self.unexpected("a rule, a terminal or a `%` directive")),
            }
            if !matches!(self.peek(), Tok::Newline | Tok::Eof) {
                return Err(self.unexpected("the end of the line"));
            }
        }
        Ok(Grammar { items })
    }

    fn ident(&mut self, what: &str) -> Result<Ident, Error> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn def(&mut self) -> Result<Def, Error> {
        let start = self.span();
        let (mut inline, mut keep_tokens) = (false, false);
        loop {
            match self.peek() {
                Tok::Question => inline = true,
                Tok::Bang => keep_tokens = true,
                _ => break,
            }
            self.bump();
        }
        let name = self.ident("a rule or terminal name")?;
        let kind = classify(&name.name).ok_or_else(|| {
            self.err(
                ErrorKind::Syntax,
                format!(
                    "name `{}` mixes upper and lower case: rules are lowercase, terminals uppercase",
                    name.name
                ),
                name.span,
            )
        })?;
        if *self.peek() == Tok::ColonColon {
            return Err(self.err(
                ErrorKind::Unsupported,
                "parametric rules (`name::param`) are not supported",
                self.span(),
            ));
        }
        let mut params = Vec::new();
        if *self.peek() == Tok::LBrace {
            self.bump();
            loop {
                params.push(self.ident("a template parameter")?);
                if *self.peek() == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
            self.expect(Tok::RBrace, "`,` or `}` after template parameters")?;
        }
        let mut priority = None;
        if *self.peek() == Tok::Dot {
            self.bump();
            let span = self.span();
            match self.peek().clone() {
                Tok::Number(n) => {
                    self.bump();
                    let v: i64 = n.parse().map_err(|_| {
                        self.err(ErrorKind::Syntax, "priority must be an integer", span)
                    })?;
                    priority = Some((v, span));
                }
                _ => return Err(self.unexpected("a priority number after `.`")),
            }
        }
        let mut attrs = Vec::new();
        if *self.peek() == Tok::LBracket {
            self.bump();
            loop {
                attrs.push(self.attr()?);
                if *self.peek() == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
            self.expect(Tok::RBracket, "`,` or `]` after options")?;
        }
        self.expect(Tok::Colon, "`:`")?;
        let body = self.expansions(true)?;
        Ok(Def {
            kind,
            name,
            inline,
            keep_tokens,
            params,
            priority,
            attrs,
            span: start.to(self.prev_span()),
            body,
        })
    }

    fn attr(&mut self) -> Result<Attr, Error> {
        let name = self.ident("an option name")?;
        let mut value = None;
        if *self.peek() == Tok::Eq {
            self.bump();
            let span = self.span();
            value = Some(match self.peek().clone() {
                Tok::Number(n) => {
                    self.bump();
                    let v: f64 = n
                        .parse()
                        .map_err(|_| self.err(ErrorKind::Syntax, "invalid number", span))?;
                    AttrValue::Number(v, n)
                }
                Tok::Str(..) | Tok::Regex(..) | Tok::Ident(_) => AttrValue::Expr(self.atom()?),
                _ => return Err(self.unexpected("a string, regex, terminal name or number")),
            });
        }
        Ok(Attr { span: name.span.to(self.prev_span()), name, value })
    }

    fn directive(&mut self) -> Result<Item, Error> {
        let start = self.span();
        let Tok::Directive(name) = self.bump().tok else {
            return Err(self.unexpected("a directive"));
        };
        match name.as_str() {
            "ignore" => {
                // A bare `%ignore` would ignore the empty string: a silent
                // no-op that hides a mistake.
                if matches!(self.peek(), Tok::Newline | Tok::Eof) {
                    return Err(self.err(
                        ErrorKind::Syntax,
                        "`%ignore` needs an expression (`%ignore WS` or `%ignore /[ \\t]+/`)",
                        start,
                    ));
                }
                let e = self.expansions(true)?;
                Ok(Item::Ignore(e, start.to(self.prev_span())))
            }
            "import" => self.import(start),
            "declare" => {
                let mut names = Vec::new();
                while matches!(self.peek(), Tok::Ident(_)) {
                    names.push(self.ident("a name")?);
                }
                if names.is_empty() {
                    return Err(self.unexpected("names to declare"));
                }
                Ok(Item::Declare(names, start.to(self.prev_span())))
            }
            "override" => {
                let d = self.def()?;
                Ok(Item::Override(d, start.to(self.prev_span())))
            }
            "extend" => {
                let d = self.def()?;
                Ok(Item::Extend(d, start.to(self.prev_span())))
            }
            "llguidance" => match self.bump().tok {
                Tok::Json(v) => Ok(Item::Options(v, start.to(self.prev_span()))),
                _ => Err(self.err(ErrorKind::Syntax, "expected a JSON object", start)),
            },
            "json" | "regex" => Err(self.err(
                ErrorKind::Syntax,
                format!("`%{name}` is an expression: use it on the right of a rule (`start: %{name} {{...}}`)"),
                start,
            )),
            _ => Err(self.err(
                ErrorKind::Unsupported,
                format!("unknown directive `%{name}`"),
                start,
            )),
        }
    }

    fn import(&mut self, start: Span) -> Result<Item, Error> {
        let mut path = Vec::new();
        if *self.peek() == Tok::Dot {
            let span = self.bump().span;
            path.push(Ident { name: String::new(), span });
        }
        path.push(self.ident("a module name")?);
        while *self.peek() == Tok::Dot {
            self.bump();
            path.push(self.ident("a name after `.`")?);
        }
        let mut names = Vec::new();
        let list = *self.peek() == Tok::LParen;
        if list {
            self.bump();
            loop {
                names.push((self.ident("a name to import")?, None));
                if *self.peek() == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
            self.expect(Tok::RParen, "`,` or `)`")?;
        } else {
            if path.len() < 2 {
                return Err(self.err(
                    ErrorKind::Syntax,
                    "expected `module.NAME` or `module (NAME, ...)`",
                    start,
                ));
            }
            let name = path.pop().unwrap_or_else(|| unreachable!("path has two elements"));
            let alias = if *self.peek() == Tok::Arrow {
                self.bump();
                Some(self.ident("an alias after `->`")?)
            } else {
                None
            };
            names.push((name, alias));
        }
        Ok(Item::Import(Import { module: path, names, list, span: start.to(self.prev_span()) }))
    }

    /// Alternatives; `top` is true outside brackets, where a line break ends
    /// the expression unless the next line starts with `|`.
    fn expansions(&mut self, top: bool) -> Result<Expansions, Error> {
        let start = self.span();
        let mut alternatives = vec![self.alternative(top)?];
        loop {
            if top {
                if *self.peek() == Tok::Newline && *self.peek_at(1) == Tok::Pipe {
                    self.bump();
                }
            } else {
                self.skip_newlines();
            }
            if *self.peek() != Tok::Pipe {
                break;
            }
            self.bump();
            alternatives.push(self.alternative(top)?);
        }
        Ok(Expansions { alternatives, span: start.to(self.prev_span()) })
    }

    fn alternative(&mut self, top: bool) -> Result<Alternative, Error> {
        let start = self.span();
        let mut conjuncts = vec![self.sequence(top)?];
        while *self.peek() == Tok::Amp {
            self.bump();
            conjuncts.push(self.sequence(top)?);
        }
        let alias = if *self.peek() == Tok::Arrow {
            self.bump();
            Some(self.ident("an alias after `->`")?)
        } else {
            None
        };
        let span = if self.pos > 0 && self.prev_span().start >= start.start {
            start.to(self.prev_span())
        } else {
            Span { end: start.start, ..start }
        };
        Ok(Alternative { conjuncts, alias, span })
    }

    fn sequence(&mut self, top: bool) -> Result<Sequence, Error> {
        let start = self.span();
        let mut items = Vec::new();
        loop {
            if !top {
                self.skip_newlines();
            }
            match self.peek() {
                Tok::Pipe
                | Tok::RParen
                | Tok::RBracket
                | Tok::RBrace
                | Tok::Arrow
                | Tok::Amp
                | Tok::Comma
                | Tok::Newline
                | Tok::Eof => break,
                _ => items.push(self.postfix()?),
            }
        }
        let span = match items.last() {
            Some(last) => start.to(last.span),
            None => Span { end: start.start, ..start },
        };
        Ok(Sequence { items, span })
    }

    fn postfix(&mut self) -> Result<Expr, Error> {
        let e = self.prefix()?;
        let (min, max) = match self.peek() {
            Tok::Star => (0, None),
            Tok::Plus => (1, None),
            Tok::Question => (0, Some(1)),
            Tok::LBrace if matches!(self.peek_at(1), Tok::Number(_) | Tok::Comma) => {
                return self.brace_repeat(e);
            }
            Tok::Tilde if matches!(self.peek_at(1), Tok::Number(_)) => {
                return self.tilde_repeat(e);
            }
            _ => return Ok(e),
        };
        let op = self.bump().span;
        self.no_second_operator()?;
        let span = e.span.to(op);
        self.node(ExprKind::Repeat { inner: Box::new(e), min, max }, span)
    }

    fn no_second_operator(&self) -> Result<(), Error> {
        let again = match self.peek() {
            Tok::Star | Tok::Plus | Tok::Question => true,
            Tok::LBrace => matches!(self.peek_at(1), Tok::Number(_) | Tok::Comma),
            Tok::Tilde => matches!(self.peek_at(1), Tok::Number(_)),
            _ => false,
        };
        if again {
            return Err(self.err(
                ErrorKind::Syntax,
                "two repetition operators in a row: use parentheses, e.g. `(x?)+`",
                self.span(),
            ));
        }
        Ok(())
    }

    /// A repetition bound: a non-negative integer within `max_repeat`.
    fn bound(&mut self, what: &str) -> Result<u32, Error> {
        let span = self.span();
        let Tok::Number(n) = self.peek().clone() else {
            return Err(self.unexpected(what));
        };
        self.bump();
        if n.starts_with('-') {
            return Err(self.err(ErrorKind::Invalid, "repetition bounds must be >= 0", span));
        }
        let v: u64 = n
            .parse()
            .map_err(|_| self.err(ErrorKind::Syntax, "repetition bounds must be integers", span))?;
        if v > u64::from(self.limits.max_repeat) {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "repetition bound {v} is larger than {} (Limits::max_repeat)",
                    self.limits.max_repeat
                ),
                span,
            ));
        }
        Ok(v as u32)
    }

    fn finish_repeat(&mut self, e: Expr, min: u32, max: Option<u32>) -> Result<Expr, Error> {
        let end = self.prev_span();
        if let Some(max) = max
            && max < min
        {
            return Err(self.err(
                ErrorKind::Invalid,
                format!("repetition range end {max} is smaller than its start {min}"),
                e.span.to(end),
            ));
        }
        self.no_second_operator()?;
        let span = e.span.to(end);
        self.node(ExprKind::Repeat { inner: Box::new(e), min, max }, span)
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}`.
    fn brace_repeat(&mut self, e: Expr) -> Result<Expr, Error> {
        self.bump();
        let min = if *self.peek() == Tok::Comma { 0 } else { self.bound("a number")? };
        let max = if *self.peek() == Tok::Comma {
            self.bump();
            if *self.peek() == Tok::RBrace { None } else { Some(self.bound("a number or `}`")?) }
        } else {
            Some(min)
        };
        self.expect(Tok::RBrace, "`}`")?;
        self.finish_repeat(e, min, max)
    }

    /// `~m` and `~m..n`.
    fn tilde_repeat(&mut self, e: Expr) -> Result<Expr, Error> {
        self.bump();
        let min = self.bound("a number")?;
        let max = if *self.peek() == Tok::DotDot {
            self.bump();
            self.bound("a number after `..`")?
        } else {
            min
        };
        self.finish_repeat(e, min, Some(max))
    }

    fn prefix(&mut self) -> Result<Expr, Error> {
        if *self.peek() == Tok::Tilde {
            let start = self.bump().span;
            self.enter(start)?;
            let inner = self.prefix()?;
            self.leave();
            let span = start.to(inner.span);
            return self.node(ExprKind::Not(Box::new(inner)), span);
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, Error> {
        let start = self.span();
        match self.peek().clone() {
            Tok::LParen | Tok::LBracket => {
                let optional = *self.peek() == Tok::LBracket;
                self.bump();
                self.enter(start)?;
                let inner = self.expansions(false)?;
                self.leave();
                let close = if optional { Tok::RBracket } else { Tok::RParen };
                self.expect(close, if optional { "`]`" } else { "`)`" })?;
                let span = start.to(self.prev_span());
                let kind =
                    if optional { ExprKind::Optional(inner) } else { ExprKind::Group(inner) };
                self.node(kind, span)
            }
            Tok::Str(value, case_insensitive) => {
                self.bump();
                if *self.peek() == Tok::DotDot {
                    return self.char_range(value, start);
                }
                self.node(ExprKind::Literal { value, case_insensitive }, start)
            }
            Tok::Regex(pattern, flags) => {
                self.bump();
                self.node(ExprKind::Regex { pattern, flags }, start)
            }
            Tok::Ident(name) => {
                self.bump();
                let template = *self.peek() == Tok::LBrace
                    && !matches!(self.peek_at(1), Tok::Number(_) | Tok::Comma);
                if template {
                    return self.template_use(Ident { name, span: start });
                }
                self.node(ExprKind::Name(name), start)
            }
            Tok::Special(text) => {
                self.bump();
                if text.starts_with("<[") && text.ends_with("]>") {
                    let inner = &text[2..text.len() - 2];
                    // Names in brackets (Mistral's `[TOOL_CALLS]`, `[/INST]`)
                    // start with a letter or `/`; id lists never do.
                    if inner.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/') {
                        return self.node(ExprKind::SpecialToken(format!("[{inner}]")), start);
                    }
                    let ids = self.token_ids(inner, start)?;
                    return self.node(ExprKind::TokenIds(ids), start);
                }
                self.node(ExprKind::SpecialToken(text), start)
            }
            Tok::At(name) => {
                self.bump();
                self.node(ExprKind::GrammarRef(name), start)
            }
            Tok::Directive(d) if d == "json" || d == "regex" => {
                self.bump();
                let Tok::Json(v) = self.bump().tok else {
                    return Err(self.err(ErrorKind::Syntax, "expected a JSON value", start));
                };
                let span = start.to(self.prev_span());
                let kind = if d == "json" { ExprKind::Json(v) } else { ExprKind::RegexSpec(v) };
                self.node(kind, span)
            }
            Tok::Directive(d) => Err(self.err(
                ErrorKind::Unsupported,
                format!("`%{d}` is not supported inside an expression"),
                start,
            )),
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn char_range(&mut self, from: String, start: Span) -> Result<Expr, Error> {
        self.bump();
        let end_span = self.span();
        let Tok::Str(to, _) = self.peek().clone() else {
            return Err(self.unexpected("a string after `..`"));
        };
        self.bump();
        let single = |s: &str| {
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        };
        let a = single(&from).ok_or_else(|| {
            self.err(ErrorKind::Invalid, "range start must be a single character", start)
        })?;
        let b = single(&to).ok_or_else(|| {
            self.err(ErrorKind::Invalid, "range end must be a single character", end_span)
        })?;
        if a > b {
            return Err(self.err(
                ErrorKind::Invalid,
                format!("invalid range order: {a:?} comes after {b:?}"),
                start,
            ));
        }
        let span = start.to(self.prev_span());
        self.node(ExprKind::CharRange(a, b), span)
    }

    fn template_use(&mut self, name: Ident) -> Result<Expr, Error> {
        self.bump();
        self.enter(name.span)?;
        let mut args = Vec::new();
        loop {
            args.push(self.postfix()?);
            if *self.peek() == Tok::Comma {
                self.bump();
            } else {
                break;
            }
        }
        self.leave();
        self.expect(Tok::RBrace, "`,` or `}` after template arguments")?;
        let span = name.span.to(self.prev_span());
        self.node(ExprKind::TemplateUse(name, args), span)
    }

    /// The inside of `<[...]>`: `*`, or an optional `^` then comma-separated
    /// ids and inclusive ranges `a-b`.
    fn token_ids(&self, inner: &str, span: Span) -> Result<TokenIds, Error> {
        let bad = |msg: String| self.err(ErrorKind::Invalid, msg, span);
        if inner == "*" {
            return Ok(TokenIds { negated: false, wildcard: true, ranges: Vec::new() });
        }
        let (negated, body) = match inner.strip_prefix('^') {
            Some(b) => (true, b),
            None => (false, inner),
        };
        if body == "*" {
            return Err(bad("negated wildcard token `<[^*]>` is not supported".into()));
        }
        let mut ranges = Vec::new();
        for part in body.split(',') {
            if part == "*" {
                return Err(bad(
                    "wildcard token range `*` must not contain additional tokens".into()
                ));
            }
            if part.is_empty() {
                return Err(bad(format!("empty token range in `<[{inner}]>`")));
            }
            let id = |s: &str| -> Result<u32, Error> {
                s.parse::<u32>()
                    .map_err(|_| bad(format!("invalid token id `{s}` in `<[{inner}]>`")))
            };
            let mut ends = part.split('-');
            let a = id(ends.next().unwrap_or(""))?;
            let b = match ends.next() {
                Some(b) => id(b)?,
                None => a,
            };
            if ends.next().is_some() || b < a {
                return Err(bad(format!("invalid token range `{part}`")));
            }
            ranges.push((a, b));
        }
        Ok(TokenIds { negated, wildcard: false, ranges })
    }
}

/// Rule or terminal by the case of the name: terminals are uppercase
/// (`_?[A-Z][A-Z0-9_]*`), rules lowercase; mixed case is `None`.
fn classify(name: &str) -> Option<DefKind> {
    let upper = name.chars().any(|c| c.is_ascii_uppercase());
    let lower = name.chars().any(|c| c.is_ascii_lowercase());
    match (upper, lower) {
        (true, true) => None,
        (true, false) => Some(DefKind::Terminal),
        _ => Some(DefKind::Rule),
    }
}
