//! The syntax tree of a GBNF grammar, with a [`Span`] on every node.

use crate::span::Span;

/// A whole grammar: its rules in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Grammar {
    /// The rules, in source order.
    pub rules: Vec<Rule>,
}

/// `name ::= alternatives`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The rule name (letters, digits, `-`, `_`).
    pub name: String,
    /// Where the name is written.
    pub name_span: Span,
    /// The right-hand side.
    pub body: Alternatives,
    /// The whole rule.
    pub span: Span,
}

/// Sequences separated by `|`.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternatives {
    /// At least one sequence (possibly empty).
    pub alternatives: Vec<Sequence>,
    /// The whole expression.
    pub span: Span,
}

/// Expressions in a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// The expressions, possibly none (the empty string).
    pub items: Vec<Expr>,
    /// The whole sequence.
    pub span: Span,
}

/// An expression with its place in the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Where it is written.
    pub span: Span,
}

/// The kinds of expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// `"..."`, decoded.
    Literal(String),
    /// `[...]` or `[^...]`: inclusive code point ranges (a single character
    /// `c` is `(c, c)`).
    CharClass {
        /// `[^...]`: every character not in the ranges.
        negated: bool,
        /// The ranges, as written.
        ranges: Vec<(char, char)>,
    },
    /// `.`: any character (including a line break, as in llama.cpp).
    Any,
    /// A reference to a rule.
    Name(String),
    /// `( ... )`.
    Group(Alternatives),
    /// `*` (0, None), `+` (1, None), `?` (0, Some(1)), `{m}`, `{m,}`, `{m,n}`.
    Repeat {
        /// The repeated expression.
        inner: Box<Expr>,
        /// The least number of repetitions.
        min: u32,
        /// The most, `None` for unbounded.
        max: Option<u32>,
    },
    /// A token of the tokenizer: `<[id]>` or `<text>`, optionally negated
    /// with `!` (any token except this one).
    Token {
        /// `!<...>`.
        negated: bool,
        /// Which token.
        token: TokenRef,
    },
}

/// How a token is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRef {
    /// `<[id]>`.
    Id(u32),
    /// `<text>`: the token whose text is exactly `text`, brackets included.
    Text(String),
}
