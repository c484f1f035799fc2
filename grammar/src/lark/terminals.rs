//! Terminals as regular expressions: inlining referenced terminals,
//! `/regex/` leaves checked where they are written, `%regex` substrings.

use derivre::RegexAst;

use crate::error::{Error, ErrorKind};
use crate::lark::ast::{Def, DefKind, Expansions, Expr, ExprKind};
use crate::lark::lower::{Entry, Lowering, Ns};
use crate::span::Span;

impl Lowering<'_> {
    /// The regex of terminal `name` in namespace `ns`, inlining the
    /// terminals it references.
    pub(super) fn terminal_regex(
        &mut self,
        ns: Ns,
        name: &str,
        use_span: Span,
    ) -> Result<RegexAst, Error> {
        let key = (ns, name.to_string());
        if let Some((rx, size)) = self.terminal_regexes.get(&key) {
            let (rx, size) = (rx.clone(), size.0);
            self.count_nodes(size, use_span, ns)?;
            return Ok(rx);
        }
        let (def, def_ns): (&Def, Ns) = match ns {
            Ns::User => match self.defs.get(name).copied() {
                Some(Entry::Def(d)) if d.kind == DefKind::Terminal => (d, Ns::User),
                Some(Entry::Import(d, span)) => (d, Ns::Common(span)),
                Some(Entry::Def(_)) => {
                    return Err(self.err(
                        ErrorKind::Invalid,
                        format!("rule `{name}` cannot be used inside a terminal"),
                        use_span,
                    ));
                }
                None => {
                    return Err(self.err(
                        ErrorKind::UnknownName,
                        format!("unknown name `{name}`"),
                        use_span,
                    ));
                }
            },
            Ns::Common(_) => match self.common.get(name) {
                Some(&d) => (d, ns),
                None => {
                    return Err(self.err(
                        ErrorKind::UnknownName,
                        format!("unknown common terminal `{name}`"),
                        self.at(ns, use_span),
                    ));
                }
            },
        };
        if self.expanding.len() >= self.config.limits.max_nesting {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "terminals refer to terminals more than {} deep (Limits::max_nesting)",
                    self.config.limits.max_nesting
                ),
                self.at(ns, use_span),
            ));
        }
        if self.expanding.contains(&key) {
            return Err(self.err(
                ErrorKind::Invalid,
                format!("circular reference in terminal `{name}`: terminals cannot be recursive"),
                self.at(ns, use_span),
            ));
        }
        self.check_def(def, def_ns)?;
        if let Some(a) = def.attrs.first() {
            return Err(self.err(
                ErrorKind::Unsupported,
                "options on terminals are not supported; put them on a rule",
                self.at(def_ns, a.span),
            ));
        }
        self.expanding.push(key.clone());
        let rx = self.expansions_regex(&def.body, def_ns);
        self.expanding.pop();
        let rx = rx?;
        let (size, depth) = regex_size(&rx);
        // Each terminal is at most this deep, so one built from them is at
        // most `max_nesting` deeper: the recursive code that walks and drops
        // regex trees (ours and derivre's) stays within the stack.
        if depth > 2 * self.config.limits.max_nesting {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "terminal `{name}` nests more than {} levels after inlining \
                     (2 x Limits::max_nesting)",
                    2 * self.config.limits.max_nesting
                ),
                self.at(ns, use_span),
            ));
        }
        self.count_nodes(size, use_span, ns)?;
        self.terminal_regexes.insert(key, (rx.clone(), (size, depth)));
        Ok(rx)
    }

    fn count_nodes(&mut self, n: usize, span: Span, ns: Ns) -> Result<(), Error> {
        self.regex_nodes += n;
        let limit = self.config.limits.max_terminal_nodes;
        if self.regex_nodes > limit {
            return Err(self.err(
                ErrorKind::Limit,
                format!(
                    "inlining terminals builds more than {limit} regex nodes \
                     (Limits::max_terminal_nodes)"
                ),
                self.at(ns, span),
            ));
        }
        Ok(())
    }

    pub(super) fn expansions_regex(&mut self, e: &Expansions, ns: Ns) -> Result<RegexAst, Error> {
        let mut alts = Vec::with_capacity(e.alternatives.len());
        for alt in &e.alternatives {
            let mut parts = Vec::with_capacity(alt.conjuncts.len());
            for seq in &alt.conjuncts {
                let mut items = Vec::with_capacity(seq.items.len());
                for item in &seq.items {
                    items.push(self.expr_regex(item, ns)?);
                }
                parts.push(if items.len() == 1 {
                    items.pop().unwrap_or(RegexAst::EmptyString)
                } else {
                    RegexAst::Concat(items)
                });
            }
            alts.push(if parts.len() == 1 {
                parts.pop().unwrap_or(RegexAst::EmptyString)
            } else {
                RegexAst::And(parts)
            });
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(RegexAst::NoMatch)
        } else {
            RegexAst::Or(alts)
        })
    }

    /// The regex of an expression inside a terminal (or used as a lexeme).
    pub(super) fn expr_regex(&mut self, e: &Expr, ns: Ns) -> Result<RegexAst, Error> {
        Ok(match &e.kind {
            ExprKind::Literal { value, case_insensitive: false } => {
                RegexAst::Literal(value.clone())
            }
            ExprKind::Literal { value, case_insensitive: true } => {
                RegexAst::Regex(format!("(?i:{})", escape(value)))
            }
            ExprKind::Regex { pattern, flags } => self.regex_leaf(pattern, flags, e.span, ns)?,
            ExprKind::CharRange(a, b) => {
                RegexAst::Regex(format!("[{}-{}]", escape_char(*a), escape_char(*b)))
            }
            ExprKind::Name(n) => self.terminal_regex(ns, n, e.span)?,
            ExprKind::Group(g) => self.expansions_regex(g, ns)?,
            ExprKind::Optional(g) => {
                RegexAst::Repeat(Box::new(self.expansions_regex(g, ns)?), 0, 1)
            }
            ExprKind::Repeat { inner, min, max } => RegexAst::Repeat(
                Box::new(self.expr_regex(inner, ns)?),
                *min,
                max.unwrap_or(u32::MAX),
            ),
            ExprKind::Not(inner) => RegexAst::Not(Box::new(self.expr_regex(inner, ns)?)),
            ExprKind::RegexSpec(v) => {
                let chunks = self.substring_chunks(v, self.at(ns, e.span))?;
                // Counted before building: the tree is quadratic in size.
                let n = chunks.len();
                self.count_nodes(
                    n.saturating_mul(n.saturating_add(1)).saturating_mul(2),
                    e.span,
                    ns,
                )?;
                substring_regex(&chunks)
            }
            ExprKind::SpecialToken(_)
            | ExprKind::NegatedSpecialToken(_)
            | ExprKind::TokenIds(_)
            | ExprKind::Json(_)
            | ExprKind::GrammarRef(_)
            | ExprKind::TemplateUse(..) => {
                let what = match &e.kind {
                    ExprKind::Json(_) => "`%json`",
                    ExprKind::GrammarRef(_) => "a grammar reference",
                    ExprKind::TemplateUse(..) => "a template",
                    _ => "a special token",
                };
                return Err(self.err(
                    ErrorKind::Invalid,
                    format!(
                        "{what} cannot be used in terminals (or in %ignore and lexeme options)"
                    ),
                    self.at(ns, e.span),
                ));
            }
        })
    }

    /// The chunks of `%regex {...}`: exactly one of `substring_words`
    /// (a string cut into words), `substring_chars` (a string cut into
    /// characters) or `substring_chunks` (a list of strings).
    fn substring_chunks(&self, v: &serde_json::Value, span: Span) -> Result<Vec<String>, Error> {
        let bad = |msg: String| self.err(ErrorKind::Invalid, msg, span);
        let obj = v
            .as_object()
            .ok_or_else(|| bad("failed to parse %regex: expected an object".into()))?;
        if obj.len() > 1 {
            return Err(bad("only one field can be set on %regex".into()));
        }
        let Some((key, val)) = obj.iter().next() else {
            return Err(bad("no fields set on %regex".into()));
        };
        let text = || {
            val.as_str()
                .ok_or_else(|| bad(format!("failed to parse %regex: `{key}` must be a string")))
        };
        match key.as_str() {
            "substring_words" => Ok(words(text()?)),
            "substring_chars" => Ok(text()?.chars().map(String::from).collect()),
            "substring_chunks" => val
                .as_array()
                .and_then(|a| a.iter().map(|c| c.as_str().map(String::from)).collect())
                .ok_or_else(|| {
                    bad("failed to parse %regex: `substring_chunks` must be a list of strings"
                        .into())
                }),
            _ => Err(bad(format!("unknown field `{key}` in %regex"))),
        }
    }

    /// `/pattern/flags` as a regex, checked once here so a bad pattern is
    /// reported where it is written.
    fn regex_leaf(
        &mut self,
        pattern: &str,
        flags: &str,
        span: Span,
        ns: Ns,
    ) -> Result<RegexAst, Error> {
        for c in flags.chars() {
            match c {
                'i' | 'm' | 's' | 'x' | 'u' => {}
                'l' => {
                    return Err(self.err(
                        ErrorKind::Unsupported,
                        "the `l` flag is not supported in regexes",
                        self.at(ns, span),
                    ));
                }
                _ => {
                    return Err(self.err(
                        ErrorKind::Invalid,
                        format!("unknown regex flag `{c}` (known: i, m, s, x, u)"),
                        self.at(ns, span),
                    ));
                }
            }
        }
        let p =
            if flags.is_empty() { pattern.to_string() } else { format!("(?{flags}:{pattern})") };
        if !self.valid_regexes.contains(&p) {
            if let Err(e) = self.rx.mk(&RegexAst::Regex(p.clone())) {
                let msg = e.to_string();
                let first = msg.lines().rev().find(|l| l.starts_with("error:")).unwrap_or(&msg);
                return Err(self.err(
                    ErrorKind::Invalid,
                    format!("invalid regex /{pattern}/: {}", first.trim_start_matches("error: ")),
                    self.at(ns, span),
                ));
            }
            self.valid_regexes.insert(p.clone());
        }
        Ok(RegexAst::Regex(p))
    }
}

/// A string cut into maximal runs of word characters (letters, digits, `_`),
/// of white space, and of other characters.
fn words(s: &str) -> Vec<String> {
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out: Vec<String> = Vec::new();
    let mut prev = None;
    for c in s.chars() {
        match out.last_mut() {
            Some(w) if prev == Some(class(c)) => w.push(c),
            _ => out.push(c.to_string()),
        }
        prev = Some(class(c));
    }
    out
}

/// The regex of every contiguous run `chunks[i..j]` (`i <= j`), the empty
/// one included: `ε | P(0) | ... | P(n-1)` with `P(i) = chunks[i] P(i+1)?`.
/// The tree has O(n²) nodes; derivre shares the repeated subtrees.
fn substring_regex(chunks: &[String]) -> RegexAst {
    let mut alts = vec![RegexAst::EmptyString];
    let mut suffix: Option<RegexAst> = None;
    let mut starts = Vec::with_capacity(chunks.len());
    for c in chunks.iter().rev() {
        let lit = RegexAst::Literal(c.clone());
        let p = match suffix.take() {
            None => lit,
            Some(rest) => RegexAst::Concat(vec![lit, RegexAst::Repeat(Box::new(rest), 0, 1)]),
        };
        starts.push(p.clone());
        suffix = Some(p);
    }
    alts.extend(starts);
    RegexAst::Or(alts)
}

/// The number of nodes and the depth of a regex tree (without recursion).
fn regex_size(rx: &RegexAst) -> (usize, usize) {
    let (mut size, mut depth) = (0, 0);
    let mut stack = vec![(rx, 1)];
    while let Some((node, d)) = stack.pop() {
        size += 1;
        depth = depth.max(d);
        stack.extend(node.get_args().iter().map(|c| (c, d + 1)));
    }
    (size, depth)
}

/// `s` with every regex metacharacter escaped.
pub(crate) fn escape(s: &str) -> String {
    s.chars().map(escape_char).collect()
}

/// A character written so it is literal in a regex (and in a class).
fn escape_char(c: char) -> String {
    if c.is_alphanumeric() || c == '_' || (c == ' ') {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}
