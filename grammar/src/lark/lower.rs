//! Lowering a Lark syntax tree into an [`earley::GrammarBuilder`].
//!
//! - A rule (lowercase) becomes a nonterminal; each alternative a rule;
//!   groups, `[...]`, `?`, `*`, `+` and `{m,n}` become helper nonterminals
//!   (`{m,n}` through [`GrammarBuilder::repeat`], O(log n) rules).
//! - A terminal (uppercase) becomes one lexeme: its definition is compiled
//!   to a single regular expression, inlining the terminals it references.
//!   String literals, `/regex/`s and `~x` used directly in rules are lexemes
//!   too. A rule with lexeme options (`[lazy]`, `[suffix=...]`) is compiled
//!   like a terminal into one lazy lexeme.
//! - `%ignore` expressions become the builder's ignore regexes.
//! - Only definitions reachable from the start rule are compiled (and so
//!   only they can produce errors), as in llguidance.

use std::collections::{HashMap, HashSet};

use earley::{GrammarBuilder, GrammarError, SpecialToken, SymbolId, SymbolKind};
use lexer::{LexemeId, LexemeSpec, LexerErrorKind, RegexAst};

use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::lark::ast::{
    Alternative, Def, DefKind, Expansions, Expr, ExprKind, Grammar, Item, Sequence, TokenIds,
};
use crate::lark::common;
use crate::span::Span;

mod directives;
mod lexeme;

/// The lowered grammar: the builder, its start symbol, and where each lexeme
/// was written (to place errors the builder reports later).
pub(crate) struct Lowered {
    pub(crate) builder: GrammarBuilder,
    pub(crate) start: SymbolId,
    lexeme_spans: HashMap<LexemeId, Span>,
}

impl Lowered {
    /// Builds the grammar, turning builder errors into located errors.
    pub(crate) fn build(self, limits: earley::Limits, src: &str) -> Result<earley::Grammar, Error> {
        let spans = self.lexeme_spans;
        self.builder.build(self.start, limits).map_err(|e| build_error(&e, &spans, src))
    }
}

/// Turns a builder error into an [`Error`], at the lexeme it names if any.
fn build_error(e: &GrammarError, spans: &HashMap<LexemeId, Span>, src: &str) -> Error {
    let kind = match e {
        GrammarError::TooLarge { .. } => ErrorKind::Limit,
        GrammarError::EmptyLanguage { .. } => ErrorKind::Invalid,
        GrammarError::Lexer(le) => match le.kind() {
            LexerErrorKind::Regex { .. } => ErrorKind::Invalid,
            _ => ErrorKind::Limit,
        },
        _ => ErrorKind::Build,
    };
    let lexeme = match e {
        GrammarError::Lexer(le) => le.lexeme(),
        _ => None,
    };
    match lexeme.and_then(|l| spans.get(&l)) {
        Some(span) => Error::at(kind, e.to_string(), *span, src),
        None => Error::new(kind, e.to_string()),
    }
}

/// Where a terminal is looked up: the user's grammar, or the `common`
/// library (entered through an `%import` written at the span).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Ns {
    User,
    Common(Span),
}

/// A name of the user's grammar.
#[derive(Clone, Copy)]
pub(super) enum Entry<'a> {
    Def(&'a Def),
    /// A terminal of `common`, imported at the span.
    Import(&'static Def, Span),
}

/// Lowers `grammar` (whose text is `src`) with `start` as the start rule.
pub(crate) fn lower(
    grammar: &Grammar,
    src: &str,
    start: &str,
    config: &Config,
) -> Result<Lowered, Error> {
    let mut l = Lowering {
        src,
        config,
        b: GrammarBuilder::new(),
        defs: HashMap::new(),
        common: common::common().iter().map(|d| (d.name.name.as_str(), d)).collect(),
        rule_syms: HashMap::new(),
        worklist: Vec::new(),
        terminal_syms: HashMap::new(),
        terminal_regexes: HashMap::new(),
        regex_syms: HashMap::new(),
        expanding: Vec::new(),
        regex_nodes: 0,
        rx: derivre::RegexBuilder::new(),
        valid_regexes: HashSet::new(),
        lexeme_spans: HashMap::new(),
        has_ignore: grammar.items.iter().any(|i| matches!(i, Item::Ignore(..))),
    };
    l.collect(grammar)?;
    let start_sym = match l.defs.get(start) {
        Some(Entry::Def(d)) if d.kind == DefKind::Rule => l.rule_symbol(start, d.name.span)?,
        _ => {
            return Err(Error::new(
                ErrorKind::UnknownName,
                format!("the grammar has no `{start}` rule"),
            ));
        }
    };
    // The builder wants a nonterminal start; a start rule with lexeme
    // options is a lexeme.
    let start_sym = match l.b.kind(start_sym) {
        Some(SymbolKind::Nonterminal) => start_sym,
        _ => {
            let s = l.b.add_nonterminal(start);
            l.b.add_rule(s, &[start_sym]);
            s
        }
    };
    for item in &grammar.items {
        if let Item::Ignore(e, _) = item {
            let rx = l.expansions_regex(e, Ns::User)?;
            l.b.add_ignore(rx);
        }
    }
    while let Some((def, sym)) = l.worklist.pop() {
        l.add_alternatives(sym, &def.body)?;
    }
    Ok(Lowered { builder: l.b, start: start_sym, lexeme_spans: l.lexeme_spans })
}

pub(super) struct Lowering<'a> {
    pub(super) src: &'a str,
    pub(super) config: &'a Config,
    pub(super) b: GrammarBuilder,
    /// Every name of the user's grammar (definitions and imports).
    pub(super) defs: HashMap<&'a str, Entry<'a>>,
    pub(super) common: HashMap<&'static str, &'static Def>,
    /// Rules lowered or queued, by name.
    pub(super) rule_syms: HashMap<&'a str, SymbolId>,
    /// Rules whose bodies are still to be lowered.
    pub(super) worklist: Vec<(&'a Def, SymbolId)>,
    /// The lexeme of each terminal used in a rule.
    pub(super) terminal_syms: HashMap<(Ns, String), SymbolId>,
    /// The regex of each terminal compiled so far, with its node count.
    pub(super) terminal_regexes: HashMap<(Ns, String), (RegexAst, (usize, usize))>,
    /// Lexemes of regexes and case-insensitive strings written in rules.
    pub(super) regex_syms: HashMap<String, SymbolId>,
    /// Terminals being inlined (to detect cycles).
    pub(super) expanding: Vec<(Ns, String)>,
    /// Regex nodes built by inlining terminals, against
    /// [`Limits::max_terminal_nodes`](crate::Limits).
    pub(super) regex_nodes: usize,
    /// Parses `/regex/`s once each, to report errors where they are written.
    pub(super) rx: derivre::RegexBuilder,
    pub(super) valid_regexes: HashSet<String>,
    pub(super) lexeme_spans: HashMap<LexemeId, Span>,
    /// The grammar has `%ignore` items.
    pub(super) has_ignore: bool,
}

impl<'a> Lowering<'a> {
    pub(super) fn err(&self, kind: ErrorKind, msg: impl Into<String>, span: Span) -> Error {
        Error::at(kind, msg, span, self.src)
    }

    /// The span errors should point at: inside `common`, the import.
    pub(super) fn at(&self, ns: Ns, span: Span) -> Span {
        match ns {
            Ns::User => span,
            Ns::Common(import) => import,
        }
    }

    /// Indexes definitions and imports; rejects what cannot be compiled
    /// wherever it is (directives llguidance rejects too).
    fn collect(&mut self, g: &'a Grammar) -> Result<(), Error> {
        for item in &g.items {
            match item {
                Item::Def(d) => self.define(&d.name.name, Entry::Def(d), d.name.span)?,
                Item::Import(imp) => {
                    let module: Vec<&str> = imp.module.iter().map(|m| m.name.as_str()).collect();
                    if module != ["common"] {
                        return Err(self.err(
                            ErrorKind::Unsupported,
                            format!(
                                "only `%import common.NAME` is supported, not module `{}`",
                                module.join(".")
                            ),
                            imp.span,
                        ));
                    }
                    for (name, alias) in &imp.names {
                        let Some(&def) = self.common.get(name.name.as_str()) else {
                            return Err(self.err(
                                ErrorKind::UnknownName,
                                format!(
                                    "unknown common terminal `{}`; available: {}",
                                    name.name,
                                    common::names().join(", ")
                                ),
                                name.span,
                            ));
                        };
                        let local = alias.as_ref().unwrap_or(name);
                        self.define(&local.name, Entry::Import(def, imp.span), local.span)?;
                    }
                }
                Item::Declare(_, span) => {
                    return Err(self.err(
                        ErrorKind::Unsupported,
                        "`%declare` is not supported (it names tokens a Lark post-lexer makes)",
                        *span,
                    ));
                }
                Item::Override(_, span) | Item::Extend(_, span) => {
                    return Err(self.err(
                        ErrorKind::Unsupported,
                        "`%override` and `%extend` are not supported",
                        *span,
                    ));
                }
                Item::Options(v, span) => self.options(v, *span)?,
                Item::Ignore(..) => {}
            }
        }
        Ok(())
    }

    fn define(&mut self, name: &'a str, entry: Entry<'a>, span: Span) -> Result<(), Error> {
        if let Some(prev) = self.defs.get(name) {
            let line = match prev {
                Entry::Def(d) => d.name.span.line,
                Entry::Import(_, s) => s.line,
            };
            let what = match entry {
                Entry::Def(d) if d.kind == DefKind::Rule => "rule",
                _ => "terminal",
            };
            return Err(self.err(
                ErrorKind::Duplicate,
                format!("duplicate {what} `{name}` (first defined on line {line})"),
                span,
            ));
        }
        self.defs.insert(name, entry);
        Ok(())
    }

    /// Checks what a definition may not use when compiled.
    pub(super) fn check_def(&self, d: &Def, ns: Ns) -> Result<(), Error> {
        if let Some(p) = d.params.first() {
            return Err(self.err(
                ErrorKind::Unsupported,
                format!("templates (`{}{{{}, ...}}`) are not supported", d.name.name, p.name),
                self.at(ns, p.span),
            ));
        }
        if let Some((_, span)) = d.priority
            && !self.config.ignore_priorities
        {
            return Err(self.err(
                ErrorKind::Unsupported,
                "priorities are not supported (set Config::ignore_priorities to ignore them)",
                self.at(ns, span),
            ));
        }
        Ok(())
    }

    /// The symbol of rule `name`: its nonterminal (queued for lowering), or
    /// its lexeme when it has lexeme options.
    fn rule_symbol(&mut self, name: &'a str, use_span: Span) -> Result<SymbolId, Error> {
        if let Some(&s) = self.rule_syms.get(name) {
            return Ok(s);
        }
        let Some(Entry::Def(def)) = self.defs.get(name).copied() else {
            return Err(self.err(
                ErrorKind::UnknownName,
                format!("unknown name `{name}`"),
                use_span,
            ));
        };
        self.check_def(def, Ns::User)?;
        let sym = match self.lexeme_options(&def.attrs)? {
            // `max_tokens=0` allows no token: only the empty string (as in
            // llguidance).
            Some(opts) if opts.max_tokens == Some(0) => self.b.epsilon(),
            Some(opts) => self.options_lexeme(name, def, opts)?,
            None => {
                let s = self.b.add_nonterminal(name);
                self.worklist.push((def, s));
                s
            }
        };
        self.rule_syms.insert(name, sym);
        Ok(sym)
    }

    fn add_lexeme(&mut self, spec: LexemeSpec, span: Span) -> SymbolId {
        let sym = self.b.add_lexeme(spec);
        if let Some(SymbolKind::Lexeme(id)) = self.b.kind(sym) {
            self.lexeme_spans.insert(*id, span);
        }
        sym
    }

    fn alternative(&mut self, alt: &'a Alternative) -> Result<Vec<SymbolId>, Error> {
        if alt.conjuncts.len() > 1 {
            return Err(self.err(
                ErrorKind::Invalid,
                "`&` is only supported in terminals (uppercase names), not in rules",
                alt.conjuncts[1].span,
            ));
        }
        self.sequence(&alt.conjuncts[0])
    }

    /// Adds a rule `lhs → alternative` per alternative of `e`. An
    /// alternative that is only a group adds the group's alternatives
    /// instead (`x: (a | b)` is `x: a | b`): fewer symbols, rules and
    /// Earley items for the same language.
    fn add_alternatives(&mut self, lhs: SymbolId, e: &'a Expansions) -> Result<(), Error> {
        for alt in &e.alternatives {
            if let [seq] = alt.conjuncts.as_slice()
                && let [Expr { kind: ExprKind::Group(inner), .. }] = seq.items.as_slice()
            {
                self.add_alternatives(lhs, inner)?;
                continue;
            }
            let rhs = self.alternative(alt)?;
            self.b.add_rule(lhs, &rhs);
        }
        Ok(())
    }

    fn sequence(&mut self, seq: &'a Sequence) -> Result<Vec<SymbolId>, Error> {
        let mut out = Vec::with_capacity(seq.items.len());
        self.push_sequence(seq, &mut out)?;
        Ok(out)
    }

    /// Appends the symbols of `seq`; a group with one alternative is spliced
    /// in (`a (b c) d` is `a b c d`).
    fn push_sequence(&mut self, seq: &'a Sequence, out: &mut Vec<SymbolId>) -> Result<(), Error> {
        for e in &seq.items {
            match &e.kind {
                ExprKind::Group(g)
                    if g.alternatives.len() == 1 && g.alternatives[0].conjuncts.len() == 1 =>
                {
                    self.push_sequence(&g.alternatives[0].conjuncts[0], out)?;
                }
                _ => out.push(self.expr_symbol(e)?),
            }
        }
        Ok(())
    }

    /// A nonterminal for alternatives, or the single symbol they consist of.
    fn group_symbol(&mut self, e: &'a Expansions) -> Result<SymbolId, Error> {
        if let [alt] = e.alternatives.as_slice()
            && let [seq] = alt.conjuncts.as_slice()
            && let [item] = seq.items.as_slice()
        {
            return self.expr_symbol(item);
        }
        let name = format!("({}:{})", e.span.line, e.span.column);
        let g = self.b.add_nonterminal(&name);
        self.add_alternatives(g, e)?;
        Ok(g)
    }

    /// The symbol an expression of a rule stands for.
    fn expr_symbol(&mut self, e: &'a Expr) -> Result<SymbolId, Error> {
        match &e.kind {
            ExprKind::Literal { value, case_insensitive: false } => {
                Ok(if value.is_empty() { self.b.epsilon() } else { self.b.literal(value) })
            }
            ExprKind::Literal { value, case_insensitive: true } => {
                let rx = self.expr_regex(e, Ns::User)?;
                Ok(self.regex_symbol(format!("{value:?}i"), rx, e.span))
            }
            ExprKind::Regex { pattern, flags } => {
                let rx = self.expr_regex(e, Ns::User)?;
                Ok(self.regex_symbol(format!("/{pattern}/{flags}"), rx, e.span))
            }
            ExprKind::CharRange(a, b) => {
                let rx = self.expr_regex(e, Ns::User)?;
                Ok(self.regex_symbol(format!("{a:?}..{b:?}"), rx, e.span))
            }
            ExprKind::Not(_) => {
                let rx = self.expr_regex(e, Ns::User)?;
                let name = e.span.text(self.src).to_string();
                Ok(self.regex_symbol(name, rx, e.span))
            }
            ExprKind::Name(n) => match self.defs.get(n.as_str()).copied() {
                Some(Entry::Def(d)) if d.kind == DefKind::Rule => {
                    self.rule_symbol(&d.name.name, e.span)
                }
                Some(_) => self.terminal_symbol(n, e.span),
                None => {
                    Err(self.err(ErrorKind::UnknownName, format!("unknown name `{n}`"), e.span))
                }
            },
            ExprKind::Group(g) => self.group_symbol(g),
            ExprKind::Optional(g) => {
                let s = self.group_symbol(g)?;
                Ok(self.b.optional(s))
            }
            ExprKind::Repeat { inner, min, max } => {
                let s = self.expr_symbol(inner)?;
                self.b
                    .repeat(s, *min, *max)
                    .map_err(|err| self.err(ErrorKind::Invalid, err.to_string(), e.span))
            }
            ExprKind::SpecialToken(name) => {
                Ok(self.b.special_token(SpecialToken::Name(name.clone())))
            }
            ExprKind::TokenIds(ids) => Ok(self.b.special_token(SpecialToken::Ids(id_ranges(ids)))),
            ExprKind::NegatedSpecialToken(_) => Err(self.err(
                ErrorKind::Unsupported,
                "a negated named token (`!<name>`) is not supported; use `!<[id]>`",
                e.span,
            )),
            ExprKind::Json(schema) => self.json_symbol(schema, e.span),
            ExprKind::RegexSpec(_) => {
                let rx = self.expr_regex(e, Ns::User)?;
                let name = e.span.text(self.src).to_string();
                Ok(self.regex_symbol(name, rx, e.span))
            }
            ExprKind::GrammarRef(n) => Err(self.err(
                ErrorKind::Unsupported,
                format!("references to other grammars (`@{n}`) are not supported"),
                e.span,
            )),
            ExprKind::TemplateUse(n, _) => Err(self.err(
                ErrorKind::Unsupported,
                format!("templates (`{}{{...}}`) are not supported", n.name),
                e.span,
            )),
        }
    }

    /// The lexeme of a regex written in a rule, shared by equal texts.
    fn regex_symbol(&mut self, key: String, rx: RegexAst, span: Span) -> SymbolId {
        if let Some(&s) = self.regex_syms.get(&key) {
            return s;
        }
        let s = self.add_lexeme(LexemeSpec::new(key.clone(), rx), span);
        self.regex_syms.insert(key, s);
        s
    }

    /// The lexeme of terminal `name` of the user's grammar.
    fn terminal_symbol(&mut self, name: &str, span: Span) -> Result<SymbolId, Error> {
        let key = (Ns::User, name.to_string());
        if let Some(&s) = self.terminal_syms.get(&key) {
            return Ok(s);
        }
        let rx = self.terminal_regex(Ns::User, name, span)?;
        let at = match self.defs.get(name) {
            Some(Entry::Def(d)) => d.name.span,
            _ => span,
        };
        let s = self.add_lexeme(LexemeSpec::new(name, rx), at);
        self.terminal_syms.insert(key, s);
        Ok(s)
    }
}

/// The token ids of `<[...]>` as sorted, merged inclusive ranges.
fn id_ranges(ids: &TokenIds) -> Vec<(u32, u32)> {
    if ids.wildcard {
        return vec![(0, u32::MAX)];
    }
    let mut r = ids.ranges.clone();
    r.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(r.len());
    for (a, b) in r {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    if !ids.negated {
        return merged;
    }
    let mut out = Vec::with_capacity(merged.len() + 1);
    let mut next = 0u64;
    for (a, b) in merged {
        if u64::from(a) > next {
            out.push((next as u32, a - 1));
        }
        next = u64::from(b) + 1;
    }
    if next <= u64::from(u32::MAX) {
        out.push((next as u32, u32::MAX));
    }
    out
}
