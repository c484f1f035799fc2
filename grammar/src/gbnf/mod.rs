//! GBNF, the grammar format of llama.cpp.
//!
//! [`parse`] gives the syntax tree; [`to_lark_ast`] translates it into the
//! Lark-like dialect, deciding which rules become terminals (lexemes), and
//! [`to_lark`] prints that translation as Lark text.
//!
//! # Which rules become lexemes
//!
//! GBNF has no lexer: every rule is a production over characters. The
//! engine works on lexemes, and its masks match llguidance's only if the
//! same parts of the grammar become lexemes, because lexemes are matched
//! greedily (a lexeme that can extend does not end early). llguidance runs
//! GBNF by converting it to its Lark dialect (`gbnf_to_lark.py`), and so do
//! we, with the same decision: a rule becomes a terminal when it is not
//! `root` and its body uses only string literals, character classes, `.`
//! and references to rules that are themselves terminals (computed to a
//! fixed point, so a recursive rule stays a rule). Every other rule stays a
//! context-free rule, whose literals and classes are separate lexemes.
//!
//! Differences from llguidance's converter, each making the result closer to
//! llama.cpp: `.` matches any character including a line break (the
//! converter writes `/./`, which does not match `\n`); rule names may contain
//! `_` (llama.cpp allows it; the converter stops a name at `_`); a rule
//! defined twice is an error (llama.cpp and the converter keep the last
//! definition silently).

pub mod ast;
mod parser;

use std::collections::{HashMap, HashSet};

use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::lark::ast as lark;

/// Parses a GBNF grammar into its syntax tree, without resolving names.
pub fn parse(src: &str, config: &Config) -> Result<ast::Grammar, Error> {
    parser::parse(src, &config.limits)
}

/// The name of the start rule of a GBNF grammar.
pub const ROOT: &str = "root";

/// Translates a parsed GBNF grammar into the Lark-like dialect's tree.
///
/// Rules keep their GBNF names (`root` included); terminals are marked
/// [`lark::DefKind::Terminal`]. `src` is the GBNF text, for error messages.
///
/// # Errors
/// A duplicate rule, a reference to an undefined rule, or no `root` rule,
/// with line and column.
pub fn to_lark_ast(grammar: &ast::Grammar, src: &str) -> Result<lark::Grammar, Error> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, r) in grammar.rules.iter().enumerate() {
        if let Some(&first) = index.get(r.name.as_str()) {
            let line = grammar.rules[first].name_span.line;
            return Err(Error::at(
                ErrorKind::Duplicate,
                format!("rule `{}` is already defined on line {line}", r.name),
                r.name_span,
                src,
            ));
        }
        index.insert(&r.name, i);
    }
    if !index.contains_key(ROOT) {
        return Err(Error::new(ErrorKind::UnknownName, "the grammar has no `root` rule"));
    }
    for r in &grammar.rules {
        check_names(&r.body, &index, src)?;
    }
    let terminal = terminal_rules(grammar);
    let items = grammar
        .rules
        .iter()
        .map(|r| {
            lark::Item::Def(lark::Def {
                kind: if terminal.contains(r.name.as_str()) {
                    lark::DefKind::Terminal
                } else {
                    lark::DefKind::Rule
                },
                name: lark::Ident { name: r.name.clone(), span: r.name_span },
                inline: false,
                keep_tokens: false,
                params: Vec::new(),
                priority: None,
                attrs: Vec::new(),
                body: alternatives(&r.body),
                span: r.span,
            })
        })
        .collect();
    Ok(lark::Grammar { items })
}

fn check_names(
    alts: &ast::Alternatives,
    index: &HashMap<&str, usize>,
    src: &str,
) -> Result<(), Error> {
    for seq in &alts.alternatives {
        for e in &seq.items {
            check_expr(e, index, src)?;
        }
    }
    Ok(())
}

fn check_expr(e: &ast::Expr, index: &HashMap<&str, usize>, src: &str) -> Result<(), Error> {
    match &e.kind {
        ast::ExprKind::Name(n) if !index.contains_key(n.as_str()) => {
            Err(Error::at(ErrorKind::UnknownName, format!("undefined rule `{n}`"), e.span, src))
        }
        ast::ExprKind::Group(g) => check_names(g, index, src),
        ast::ExprKind::Repeat { inner, .. } => check_expr(inner, index, src),
        _ => Ok(()),
    }
}

/// The rules that become terminals: not `root`, and built only from
/// literals, classes, `.` and terminal rules (least fixed point).
///
/// A worklist over the reverse references, so the cost is linear in the
/// grammar whatever the rule order (iterating passes to the fixed point
/// took one pass per rule on a chain written callee-last: 50,000 chained
/// rules took minutes, to end in the error of
/// [`Limits::max_nesting`](crate::Limits) that the terminal chain trips).
fn terminal_rules(grammar: &ast::Grammar) -> HashSet<&str> {
    let index: HashMap<&str, usize> =
        grammar.rules.iter().enumerate().map(|(i, r)| (r.name.as_str(), i)).collect();
    // For each rule that may become a terminal, the distinct rules it
    // references that are not yet known to be terminals.
    let mut pending: Vec<Option<usize>> = vec![None; grammar.rules.len()];
    let mut referenced_by: Vec<Vec<usize>> = vec![Vec::new(); grammar.rules.len()];
    let mut ready = Vec::new();
    for (i, r) in grammar.rules.iter().enumerate() {
        if r.name == ROOT {
            continue;
        }
        let mut names = HashSet::new();
        if !alts_names(&r.body, &mut names) {
            continue;
        }
        let mut deps: Vec<usize> = names.iter().filter_map(|n| index.get(n).copied()).collect();
        deps.sort_unstable();
        for &d in &deps {
            referenced_by[d].push(i);
        }
        pending[i] = Some(deps.len());
        if deps.is_empty() {
            ready.push(i);
        }
    }
    let mut terminal: HashSet<&str> = HashSet::new();
    while let Some(i) = ready.pop() {
        terminal.insert(grammar.rules[i].name.as_str());
        for &q in &referenced_by[i] {
            if let Some(n) = &mut pending[q] {
                *n -= 1;
                if *n == 0 {
                    ready.push(q);
                }
            }
        }
    }
    terminal
}

/// Collects the rule names `alts` references; false when it has a
/// construct that keeps it a rule (a special token).
fn alts_names<'a>(alts: &'a ast::Alternatives, names: &mut HashSet<&'a str>) -> bool {
    alts.alternatives.iter().all(|s| s.items.iter().all(|e| expr_names(e, names)))
}

fn expr_names<'a>(e: &'a ast::Expr, names: &mut HashSet<&'a str>) -> bool {
    match &e.kind {
        ast::ExprKind::Literal(_) | ast::ExprKind::CharClass { .. } | ast::ExprKind::Any => true,
        ast::ExprKind::Name(n) => {
            names.insert(n.as_str());
            true
        }
        ast::ExprKind::Group(g) => alts_names(g, names),
        ast::ExprKind::Repeat { inner, .. } => expr_names(inner, names),
        ast::ExprKind::Token { .. } => false,
    }
}

fn alternatives(alts: &ast::Alternatives) -> lark::Expansions {
    lark::Expansions {
        alternatives: alts
            .alternatives
            .iter()
            .map(|s| lark::Alternative {
                conjuncts: vec![lark::Sequence {
                    items: s.items.iter().map(expr).collect(),
                    span: s.span,
                }],
                alias: None,
                span: s.span,
            })
            .collect(),
        span: alts.span,
    }
}

fn expr(e: &ast::Expr) -> lark::Expr {
    let kind = match &e.kind {
        ast::ExprKind::Literal(s) => {
            lark::ExprKind::Literal { value: s.clone(), case_insensitive: false }
        }
        ast::ExprKind::CharClass { negated, ranges } => {
            lark::ExprKind::Regex { pattern: class_regex(*negated, ranges), flags: String::new() }
        }
        ast::ExprKind::Any => {
            lark::ExprKind::Regex { pattern: "(?s:.)".into(), flags: String::new() }
        }
        ast::ExprKind::Name(n) => lark::ExprKind::Name(n.clone()),
        ast::ExprKind::Group(g) => lark::ExprKind::Group(alternatives(g)),
        ast::ExprKind::Repeat { inner, min, max } => {
            lark::ExprKind::Repeat { inner: Box::new(expr(inner)), min: *min, max: *max }
        }
        ast::ExprKind::Token { negated, token } => match token {
            ast::TokenRef::Id(id) => lark::ExprKind::TokenIds(lark::TokenIds {
                negated: *negated,
                wildcard: false,
                ranges: vec![(*id, *id)],
            }),
            ast::TokenRef::Text(t) if !negated => lark::ExprKind::SpecialToken(t.clone()),
            ast::TokenRef::Text(t) => lark::ExprKind::NegatedSpecialToken(t.clone()),
        },
    };
    lark::Expr { kind, span: e.span }
}

/// A character class as a regex class, every non-alphanumeric character
/// written `\x{H}` so no character is special.
fn class_regex(negated: bool, ranges: &[(char, char)]) -> String {
    if ranges.is_empty() {
        // `[]` matches nothing and `[^]` any character, as in llama.cpp.
        return if negated { "(?s:.)".into() } else { "[^\\x{0}-\\x{10FFFF}]".into() };
    }
    let esc = |c: char| {
        if c.is_ascii_alphanumeric() { c.to_string() } else { format!("\\x{{{:X}}}", c as u32) }
    };
    let mut s = String::from(if negated { "[^" } else { "[" });
    for &(a, b) in ranges {
        s.push_str(&esc(a));
        if b != a {
            s.push('-');
            s.push_str(&esc(b));
        }
    }
    s.push(']');
    s
}

/// Compiles a GBNF grammar (start rule `root`) for the Earley parser.
///
/// # Errors
/// Syntax errors, undefined or duplicate rules, a missing `root`, and
/// exceeded limits, with line and column when they have a place in the text.
pub fn compile(src: &str, config: &Config) -> Result<earley::Grammar, Error> {
    let g = parse(src, config)?;
    let lark = to_lark_ast(&g, src)?;
    crate::lark::compile_ast(&lark, src, ROOT, config)
}

/// Parses GBNF and prints its translation in the Lark-like dialect: what
/// llguidance should be given to compile the same grammar with the same
/// lexemes (used by the differential tests).
///
/// Names are rewritten to Lark's conventions (`root` becomes `start`,
/// terminals uppercase, rules lowercase, `-` becomes `_`, made unique).
pub fn to_lark(src: &str, config: &Config) -> Result<String, Error> {
    let g = parse(src, config)?;
    let lg = to_lark_ast(&g, src)?;
    crate::lark::print::print_renamed(&lg, ROOT, src)
}

/// A GBNF grammar (start rule `root`) as Lark definitions for embedding in
/// a larger Lark grammar, every name prefixed with `prefix`; returns the
/// new name of `root` and the definitions (see [`crate::lark::embed`]).
///
/// # Errors
/// As [`to_lark`].
pub fn embed(src: &str, prefix: &str, config: &Config) -> Result<(String, String), Error> {
    let g = parse(src, config)?;
    let lg = to_lark_ast(&g, src)?;
    crate::lark::print::print_embedded(&lg, ROOT, prefix, src)
}
