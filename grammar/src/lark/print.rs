//! Printing a Lark syntax tree back to text.
//!
//! [`print`] writes names as they are (parsing its output gives the same
//! tree, up to spans); [`print_renamed`] also rewrites names to Lark's
//! conventions, for trees translated from GBNF.

use std::collections::HashMap;
use std::fmt::Write;

use crate::error::{Error, ErrorKind};
use crate::lark::ast::{
    Alternative, AttrValue, Def, DefKind, Expansions, Expr, ExprKind, Grammar, Item, TokenIds,
};

/// Prints `g` in the Lark-like dialect, one item per line.
pub fn print(g: &Grammar) -> String {
    let p = Printer { names: HashMap::new() };
    let mut out = String::new();
    for item in &g.items {
        p.item(item, &mut out);
        out.push('\n');
    }
    out
}

/// Prints `g` with every defined name rewritten to Lark's conventions: the
/// rule `start` becomes `start`, terminals are uppercase and rules lowercase
/// (`-` and other characters become `_`, `camelCase` becomes `camel_case`),
/// made unique with numeric suffixes. Starts with `%llguidance {}`.
///
/// # Errors
/// A construct the dialect cannot write (GBNF's `!<name>`), located in `src`.
pub(crate) fn print_renamed(g: &Grammar, start: &str, src: &str) -> Result<String, Error> {
    let mut names = HashMap::new();
    let mut taken = std::collections::HashSet::new();
    taken.insert("start".to_string());
    for item in &g.items {
        if let Item::Def(d) = item {
            if d.name.name == start {
                names.insert(d.name.name.clone(), "start".to_string());
                continue;
            }
            let base = lark_name(&d.name.name, d.kind);
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            names.insert(d.name.name.clone(), name);
        }
    }
    let mut out = String::from("%llguidance {}\n\n");
    Printer { names }.items(g, src, &mut out)?;
    Ok(out)
}

/// Prints `g` for embedding in a larger grammar: every defined name gets
/// `prefix` (`{prefix}_name` for rules, `{PREFIX}_NAME` for terminals);
/// returns the new name of `start` and the definitions.
///
/// # Errors
/// Items with a grammar-wide meaning (`%ignore`, `%import`, `%llguidance`,
/// `%declare`, `%override`, `%extend`), a missing `start`, or a construct
/// the dialect cannot write, located in `src`.
pub(crate) fn print_embedded(
    g: &Grammar,
    start: &str,
    prefix: &str,
    src: &str,
) -> Result<(String, String), Error> {
    let mut names = HashMap::new();
    for item in &g.items {
        match item {
            Item::Def(d) => {
                let base = lark_name(&d.name.name, d.kind);
                let name = match d.kind {
                    DefKind::Terminal => format!("{}_{base}", prefix.to_ascii_uppercase()),
                    DefKind::Rule => format!("{}_{base}", prefix.to_ascii_lowercase()),
                };
                names.insert(d.name.name.clone(), name);
            }
            Item::Ignore(_, span)
            | Item::Declare(_, span)
            | Item::Override(_, span)
            | Item::Extend(_, span)
            | Item::Options(_, span) => {
                return Err(Error::at(
                    ErrorKind::Unsupported,
                    "an embedded grammar holds definitions only (no `%` directives)",
                    *span,
                    src,
                ));
            }
            Item::Import(imp) => {
                return Err(Error::at(
                    ErrorKind::Unsupported,
                    "an embedded grammar holds definitions only (no `%import`)",
                    imp.span,
                    src,
                ));
            }
        }
    }
    let Some(start_name) = names.get(start).cloned() else {
        return Err(Error::new(ErrorKind::UnknownName, format!("no rule `{start}`")));
    };
    let mut out = String::new();
    Printer { names }.items(g, src, &mut out)?;
    Ok((start_name, out))
}

impl Printer {
    /// Appends every item of `g`, one per line.
    ///
    /// # Errors
    /// A negated named token (no Lark spelling), located in `src`.
    fn items(&self, g: &Grammar, src: &str, out: &mut String) -> Result<(), Error> {
        for item in &g.items {
            if let Some(e) = find_negated_special(item) {
                return Err(Error::at(
                    ErrorKind::Unsupported,
                    "a negated named token (`!<name>`) has no Lark spelling; use `!<[id]>`",
                    e.span,
                    src,
                ));
            }
            self.item(item, out);
            out.push('\n');
        }
        Ok(())
    }
}

fn find_negated_special(item: &Item) -> Option<&Expr> {
    fn in_exp(e: &Expansions) -> Option<&Expr> {
        e.alternatives.iter().flat_map(|a| &a.conjuncts).flat_map(|s| &s.items).find_map(in_expr)
    }
    fn in_expr(e: &Expr) -> Option<&Expr> {
        match &e.kind {
            ExprKind::NegatedSpecialToken(_) => Some(e),
            ExprKind::Group(g) | ExprKind::Optional(g) => in_exp(g),
            ExprKind::Repeat { inner, .. } | ExprKind::Not(inner) => in_expr(inner),
            ExprKind::TemplateUse(_, args) => args.iter().find_map(in_expr),
            _ => None,
        }
    }
    match item {
        Item::Def(d) | Item::Override(d, _) | Item::Extend(d, _) => in_exp(&d.body),
        Item::Ignore(e, _) => in_exp(e),
        _ => None,
    }
}

/// A GBNF-style name in Lark's conventions for `kind`.
fn lark_name(name: &str, kind: DefKind) -> String {
    let mut s = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            s.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        s.push(if c.is_ascii_alphanumeric() { c } else { '_' });
    }
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'n');
    }
    match kind {
        DefKind::Terminal => s.to_ascii_uppercase(),
        DefKind::Rule => s.to_ascii_lowercase(),
    }
}

struct Printer {
    /// Renamed definitions; names not in the map print as they are.
    names: HashMap<String, String>,
}

impl Printer {
    fn name<'a>(&'a self, n: &'a str) -> &'a str {
        self.names.get(n).map_or(n, String::as_str)
    }

    fn item(&self, item: &Item, out: &mut String) {
        match item {
            Item::Def(d) => self.def(d, out),
            Item::Ignore(e, _) => {
                out.push_str("%ignore ");
                self.expansions(e, out);
            }
            Item::Import(imp) => {
                out.push_str("%import ");
                let path: Vec<&str> = imp.module.iter().map(|i| i.name.as_str()).collect();
                out.push_str(&path.join("."));
                match imp.names.as_slice() {
                    [(n, alias)] if !imp.list => {
                        let _ = write!(out, ".{}", n.name);
                        if let Some(a) = alias {
                            let _ = write!(out, " -> {}", a.name);
                        }
                    }
                    names => {
                        let list: Vec<&str> = names.iter().map(|(n, _)| n.name.as_str()).collect();
                        let _ = write!(out, " ({})", list.join(", "));
                    }
                }
            }
            Item::Declare(names, _) => {
                out.push_str("%declare");
                for n in names {
                    let _ = write!(out, " {}", n.name);
                }
            }
            Item::Override(d, _) => {
                out.push_str("%override ");
                self.def(d, out);
            }
            Item::Extend(d, _) => {
                out.push_str("%extend ");
                self.def(d, out);
            }
            Item::Options(v, _) => {
                let _ = write!(out, "%llguidance {v}");
            }
        }
    }

    fn def(&self, d: &Def, out: &mut String) {
        if d.keep_tokens {
            out.push('!');
        }
        if d.inline {
            out.push('?');
        }
        out.push_str(self.name(&d.name.name));
        if !d.params.is_empty() {
            let ps: Vec<&str> = d.params.iter().map(|p| p.name.as_str()).collect();
            let _ = write!(out, "{{{}}}", ps.join(", "));
        }
        if let Some((p, _)) = d.priority {
            let _ = write!(out, ".{p}");
        }
        if !d.attrs.is_empty() {
            out.push('[');
            for (i, a) in d.attrs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&a.name.name);
                match &a.value {
                    None => {}
                    Some(AttrValue::Number(_, text)) => {
                        let _ = write!(out, "={text}");
                    }
                    Some(AttrValue::Expr(e)) => {
                        out.push('=');
                        self.expr(e, out);
                    }
                }
            }
            out.push(']');
        }
        out.push_str(": ");
        self.expansions(&d.body, out);
    }

    fn expansions(&self, e: &Expansions, out: &mut String) {
        for (i, alt) in e.alternatives.iter().enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            self.alternative(alt, out);
        }
    }

    fn alternative(&self, a: &Alternative, out: &mut String) {
        for (i, seq) in a.conjuncts.iter().enumerate() {
            if i > 0 {
                out.push_str(" & ");
            }
            for (j, e) in seq.items.iter().enumerate() {
                if j > 0 {
                    out.push(' ');
                }
                self.expr(e, out);
            }
        }
        if let Some(alias) = &a.alias {
            let _ = write!(out, " -> {}", alias.name);
        }
    }

    fn expr(&self, e: &Expr, out: &mut String) {
        match &e.kind {
            ExprKind::Literal { value, case_insensitive } => {
                quote(value, out);
                if *case_insensitive {
                    out.push('i');
                }
            }
            ExprKind::Regex { pattern, flags } => {
                out.push('/');
                let mut chars = pattern.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            out.push('\\');
                            if let Some(n) = chars.next() {
                                out.push(n);
                            }
                        }
                        '/' => out.push_str("\\/"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        c => out.push(c),
                    }
                }
                out.push('/');
                out.push_str(flags);
            }
            ExprKind::CharRange(a, b) => {
                quote(&a.to_string(), out);
                out.push_str("..");
                quote(&b.to_string(), out);
            }
            ExprKind::Name(n) => out.push_str(self.name(n)),
            ExprKind::TemplateUse(n, args) => {
                out.push_str(self.name(&n.name));
                out.push('{');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.expr(a, out);
                }
                out.push('}');
            }
            ExprKind::Group(g) => {
                out.push('(');
                self.expansions(g, out);
                out.push(')');
            }
            ExprKind::Optional(g) => {
                out.push('[');
                self.expansions(g, out);
                out.push(']');
            }
            ExprKind::Repeat { inner, min, max } => {
                self.atomic(inner, out);
                match (min, max) {
                    (0, None) => out.push('*'),
                    (1, None) => out.push('+'),
                    (0, Some(1)) => out.push('?'),
                    (m, None) => {
                        let _ = write!(out, "{{{m},}}");
                    }
                    (m, Some(n)) if m == n => {
                        let _ = write!(out, "{{{m}}}");
                    }
                    (m, Some(n)) => {
                        let _ = write!(out, "{{{m},{n}}}");
                    }
                }
            }
            ExprKind::Not(inner) => {
                out.push('~');
                self.atomic(inner, out);
            }
            // A name in brackets (`[TOOL_CALLS]`) is written `<[TOOL_CALLS]>`.
            ExprKind::SpecialToken(t) | ExprKind::NegatedSpecialToken(t) if t.starts_with('[') => {
                out.push('<');
                out.push_str(t);
                out.push('>');
            }
            ExprKind::SpecialToken(t) | ExprKind::NegatedSpecialToken(t) => out.push_str(t),
            ExprKind::TokenIds(ids) => token_ids(ids, out),
            ExprKind::Json(v) => {
                let _ = write!(out, "%json {v}");
            }
            ExprKind::RegexSpec(v) => {
                let _ = write!(out, "%regex {v}");
            }
            ExprKind::GrammarRef(n) => {
                let _ = write!(out, "@{n}");
            }
        }
    }

    /// Prints `e` so a postfix or prefix operator applies to all of it.
    fn atomic(&self, e: &Expr, out: &mut String) {
        if matches!(e.kind, ExprKind::Repeat { .. } | ExprKind::Not(_)) {
            out.push('(');
            self.expr(e, out);
            out.push(')');
        } else {
            self.expr(e, out);
        }
    }
}

/// A string literal with the escapes the lexer reads back.
fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn token_ids(ids: &TokenIds, out: &mut String) {
    out.push_str("<[");
    if ids.wildcard {
        out.push('*');
    } else {
        if ids.negated {
            out.push('^');
        }
        for (i, (a, b)) in ids.ranges.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if a == b {
                let _ = write!(out, "{a}");
            } else {
                let _ = write!(out, "{a}-{b}");
            }
        }
    }
    out.push_str("]>");
}
