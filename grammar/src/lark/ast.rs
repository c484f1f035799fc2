//! The syntax tree of a Lark-like grammar, with a [`Span`] on every node.
//!
//! The tree keeps everything the text says, including constructs the
//! compiler rejects (templates, priorities, `%declare`), so a grammar can be
//! parsed and inspected even when it cannot be compiled.

use crate::span::Span;

/// A whole grammar: its items in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Grammar {
    /// Definitions and directives, in source order.
    pub items: Vec<Item>,
}

/// One top-level item of a grammar.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A rule (`name: ...`) or terminal (`NAME: ...`) definition.
    Def(Def),
    /// `%ignore expansions`: what may appear between lexemes.
    Ignore(Expansions, Span),
    /// `%import module.NAME [-> ALIAS]` or `%import module (A, B, ...)`.
    Import(Import),
    /// `%declare NAME ...` (tokens produced by a Lark post-lexer).
    Declare(Vec<Ident>, Span),
    /// `%override def`.
    Override(Def, Span),
    /// `%extend def`.
    Extend(Def, Span),
    /// `%llguidance { ... }`: grammar options as a JSON object.
    Options(serde_json::Value, Span),
}

/// A name with its place in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The name as written, without a `?` or `!` rule modifier.
    pub name: String,
    /// Where the name is written.
    pub span: Span,
}

/// Whether a definition is a grammar rule or a terminal (lexeme).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefKind {
    /// A lowercase name: a context-free rule over lexemes.
    Rule,
    /// An uppercase name: a terminal, compiled to one regular expression.
    Terminal,
}

/// A rule or terminal definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Def {
    /// Rule or terminal.
    pub kind: DefKind,
    /// The defined name.
    pub name: Ident,
    /// `?name`: inline the rule in the parse tree (no effect on the language).
    pub inline: bool,
    /// `!name`: keep all tokens in the parse tree (no effect on the language).
    pub keep_tokens: bool,
    /// Template parameters, `name{a, b}: ...` (unsupported when compiling).
    pub params: Vec<Ident>,
    /// `name.N:` priority.
    pub priority: Option<(i64, Span)>,
    /// `name[attr, attr=value]:` lexeme options (llguidance extension).
    pub attrs: Vec<Attr>,
    /// The right-hand side.
    pub body: Expansions,
    /// The whole definition.
    pub span: Span,
}

/// One `[...]` option of a definition, e.g. `lazy` or `stop="\n"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    /// The option name.
    pub name: Ident,
    /// The value after `=`, if any.
    pub value: Option<AttrValue>,
    /// The whole option.
    pub span: Span,
}

/// The value of an option.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A terminal-like value: a string, a regex or a terminal name.
    Expr(Expr),
    /// A number, with its text as written.
    Number(f64, String),
}

/// An import: `%import common.WS`, `%import common.WS -> _WS`,
/// `%import common (INT, WS)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// The module path, e.g. `["common"]` (a leading `.` is kept as an
    /// empty first element).
    pub module: Vec<Ident>,
    /// Imported names with their optional aliases.
    pub names: Vec<(Ident, Option<Ident>)>,
    /// Written as a parenthesised list, `%import module (A, B)`.
    pub list: bool,
    /// The whole directive.
    pub span: Span,
}

/// Alternatives separated by `|`.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansions {
    /// At least one alternative (possibly empty).
    pub alternatives: Vec<Alternative>,
    /// The whole expression.
    pub span: Span,
}

/// One alternative: sequences joined by `&` (intersection, terminals only),
/// with an optional `-> alias` (parse-tree naming, no effect on the language).
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    /// At least one sequence; more than one means intersection.
    pub conjuncts: Vec<Sequence>,
    /// The `-> alias`, if written.
    pub alias: Option<Ident>,
    /// The whole alternative.
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
    /// A string literal, `"..."` or `"..."i` (case-insensitive).
    Literal {
        /// The decoded string.
        value: String,
        /// The `i` flag.
        case_insensitive: bool,
    },
    /// A regex, `/pattern/flags`.
    Regex {
        /// The pattern with `\/` turned into `/`.
        pattern: String,
        /// The flags after the closing slash.
        flags: String,
    },
    /// A character range `"a".."z"`.
    CharRange(char, char),
    /// A reference to a rule or terminal.
    Name(String),
    /// A template use `name{arg, ...}` (unsupported when compiling).
    TemplateUse(Ident, Vec<Expr>),
    /// A parenthesised group.
    Group(Expansions),
    /// `[ ... ]`: optional.
    Optional(Expansions),
    /// A repetition: `*` (0, None), `+` (1, None), `?` (0, Some(1)),
    /// `{m}`, `{m,}`, `{,n}`, `{m,n}`, `~m`, `~m..n`.
    Repeat {
        /// The repeated expression.
        inner: Box<Expr>,
        /// The least number of repetitions.
        min: u32,
        /// The most, `None` for unbounded.
        max: Option<u32>,
    },
    /// `~x`: the complement of a terminal expression (llguidance extension).
    Not(Box<Expr>),
    /// A special token by name, e.g. `<|end|>` or `<think>`; the text between
    /// the angle brackets, delimiters included (`<|end|>` holds `<|end|>`).
    SpecialToken(String),
    /// Any token except the named special token: GBNF's `!<name>`, which
    /// the Lark dialect cannot write.
    NegatedSpecialToken(String),
    /// Token ids, `<[1,5-9]>`, `<[^5]>`, `<[*]>`.
    TokenIds(TokenIds),
    /// `%json { ... }`: an inline JSON Schema.
    Json(serde_json::Value),
    /// `%regex { ... }`: a structured regex (substring matching).
    RegexSpec(serde_json::Value),
    /// `@name`: a reference to another grammar of a grammar list.
    GrammarRef(String),
}

/// A set of token ids written `<[...]>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenIds {
    /// `<[^...]>`: every token except these.
    pub negated: bool,
    /// `<[*]>`: every token.
    pub wildcard: bool,
    /// Inclusive ranges (a single id is `(id, id)`).
    pub ranges: Vec<(u32, u32)>,
}
