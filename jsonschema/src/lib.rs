//! JSON Schema compiled to an exact context-free grammar over regex lexemes.
//!
//! [`compile`] turns a schema (draft 2020-12 semantics; draft-07 `definitions`,
//! `dependencies` and array-form `items` too) into a [`Grammar`]: JSON scalars
//! are lexemes (derivre regexes: numbers with their bounds and `multipleOf`,
//! strings with `pattern`, `format` and length), arrays and objects are rules.
//! The grammar accepts exactly the JSON texts (in the configured layout: whitespace,
//! separators, property order) of the instances that validate, or a documented
//! subset of them; whatever cannot be expressed exactly is an [`Error`] naming
//! the keyword and the JSON pointer, never a looser grammar.
//!
//! # Example
//! ```
//! let schema = serde_json::json!({
//!     "type": "object",
//!     "properties": {"id": {"type": "integer", "minimum": 1}},
//!     "required": ["id"],
//!     "additionalProperties": false
//! });
//! let compiled = structgen_jsonschema::compile(&schema, &structgen_jsonschema::Options::compact()).unwrap();
//! let g = &compiled.grammar;
//! assert_eq!(g.naive_accepts(br#"{"id":42}"#, 1_000_000), Some(true));
//! assert_eq!(g.naive_accepts(br#"{"id":0}"#, 1_000_000), Some(false));
//!
//! // The engine that serves masks, with its greedy lexing.
//! let engine = g.to_earley(earley::Limits::default()).unwrap();
//! assert!(engine.accepts(br#"{"id":7}"#).unwrap());
//! assert!(!engine.accepts(br#"{"id":-7}"#).unwrap());
//! ```
//!
//! # Algorithm
//! 1. Resolution: the document is indexed (`$id` bases, `$anchor`s), with
//!    the other documents its references reach among those the caller
//!    handed over ([`Options::documents`], [`Documents`]: no I/O of our
//!    own); a `$ref` becomes a definition compiled once, so recursion
//!    stays recursion, across documents too.
//! 2. Normalization: each schema object becomes a union of typed schemas
//!    (null, boolean, number, string, array, object). Sibling keywords and
//!    `allOf` intersect; `anyOf` unions; `oneOf` unions branches proven
//!    disjoint and otherwise subtracts the other branches through their
//!    complement; `not` and `if` use the complement of a schema, the union of
//!    the complements of its keywords (type, enum/const, required, properties,
//!    bounds, pattern, items and tuples, if/then/else, the dependency
//!    keywords, anyOf/allOf/not; see `DESIGN.md` for what has none).
//!    Object keys outside `properties` are
//!    split into disjoint regex regions (patternProperties, additionalProperties).
//!    Each object and array branch records what its keywords evaluate, for
//!    `unevaluatedProperties`/`unevaluatedItems`.
//! 3. Lowering: numbers become digit-by-digit bound regexes intersected with
//!    derivre's `MultipleOf`; strings become `JsonQuote` of the intersection of
//!    their constraints; arrays and objects become counting rules (position,
//!    items so far) so `minItems`/`maxItems`/`minProperties`/`maxProperties`
//!    and optional properties are exact; with [`PropertyOrder::Any`] an
//!    object is a permutation phrase of the `earley` engine (members in any
//!    order, each listed name once, the required ones always), and so is an
//!    array with `uniqueItems` over finitely many scalar values (each value
//!    once), or over free strings, numbers and containers (a phrase whose parser
//!    compares the JSON values of completed items; `DESIGN.md`,
//!    "`uniqueItems` over free strings and integers"). Unproductive rules
//!    are removed; an empty language is
//!    [`ErrorKind::Unsatisfiable`].
//!
//! Decisions, all toward a stricter grammar: properties come in schema order
//! (then required names not listed, then additional keys in any order;
//! under `not` of an `enum`/`const` of objects, their names first, in the
//! order they list them) unless
//! [`PropertyOrder::Any`] is set (then any order, except in objects under a
//! negated member constraint that list more than 10 names); a
//! number with bounds or `multipleOf` is written without exponent; formats
//! leave out leap seconds, quoted e-mail local parts and punycode labels,
//! and the internationalized ones (`idn-hostname`, `idn-email`, `iri`,
//! `iri-reference`) take their ASCII subsets;
//! negated `pattern` classes leave out U+001F (see `ecma.rs`);
//! `unevaluatedProperties`/`unevaluatedItems` see the annotations of one
//! `anyOf` branch at a time, not of every branch that holds (see `DESIGN.md`);
//! `uniqueItems` is accepted where at most one item is allowed, or the items
//! take finitely many scalar values and strings without pattern, format or
//! `maxLength`, numbers without bounds, arrays without `maxItems` and
//! objects without `maxProperties` open to any key (any JSON value, too);
//! such numbers are then written without exponent, integers without a zero
//! fraction. Otherwise it is an error naming its pointer.
//! A recursive `$ref` met by `allOf` (or by the complement `oneOf`, `not`
//! and `if` take) becomes a definition of its own, so two recursions meet as
//! their product instead of unfolding until `Limits::max_depth`.
//!
//! # Complexity
//! With `s` schema nodes, compilation is `O(s)` plus the intersections, which
//! distribute over unions (bounded by `Limits::max_branches`); the grammar has
//! `O(p * c)` rules per object with `p` properties and `c` the count bound
//! (`max(minProperties, 1)` or `maxProperties`), likewise for arrays.
//! Every limit in [`Limits`] turns into [`ErrorKind::LimitExceeded`].
//!
//! # Panics
//! None on any input. The calls into derivre made while compiling (emptiness
//! checks, key matches, pattern checks) run under `catch_unwind`: a fault
//! inside derivre becomes [`ErrorKind::EngineFault`] with the JSON pointer of
//! the schema object (or definition) being compiled.
//!
//! # Features
//! None.
#![forbid(unsafe_code)]

mod build;
mod cache;
mod complement;
mod ecma;
mod engine;
mod error;
mod formats;
mod grammar;
mod identical;
mod intersect;
mod ir;
mod json;
mod keys;
mod lower;
mod number;
mod options;
mod recognize;
mod resolve;
mod unevaluated;

pub use error::{Error, ErrorKind, Warning};
pub use grammar::{Grammar, Lexeme, LexemeId, Nonterminal, NonterminalId, Permutation, Symbol};
pub use identical::{hash_json, json_identical};
pub use options::{Documents, Limits, Options, PropertyOrder, Resolver, Whitespace};

/// A compiled schema: the grammar and the warnings.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The grammar.
    pub grammar: Grammar,
    /// Unknown formats taken as annotations, and what lenient mode ignored.
    pub warnings: Vec<Warning>,
    /// The patterns of derivative width over 1, in schema order.
    wide_patterns: Vec<WidePattern>,
}

/// A pattern whose lexemes' derivatives can grow wide
/// ([`lexer::repeat_width`]), and where the schema writes it.
#[derive(Clone, Debug)]
pub(crate) struct WidePattern {
    pub(crate) pointer: String,
    pub(crate) keyword: String,
    pub(crate) width: u64,
}

impl Compiled {
    /// The first pattern (a `pattern`, a `patternProperties` key or a
    /// registered format's regex) whose derivative width
    /// ([`lexer::repeat_width`]) is over `limit`, as the JSON pointer of the
    /// schema that holds it, the keyword and the width.
    ///
    /// The lexer checks [`LexerLimits::max_repeat_width`](lexer::LexerLimits)
    /// when [`Grammar::to_earley`] builds it, on lexemes that know nothing
    /// of the schema; a front-end turning that error into a located one
    /// asks here where the pattern is. A string lexeme intersects its
    /// patterns (and a length bound of width 1), so its width is its widest
    /// pattern's.
    ///
    /// ```
    /// use structgen_jsonschema::{Options, compile};
    ///
    /// let schema = serde_json::json!({
    ///     "properties": {"a": {"type": "string", "pattern": "^((a*){100}){100}b$"}}
    /// });
    /// let compiled = compile(&schema, &Options::default()).unwrap();
    /// assert_eq!(
    ///     compiled.pattern_wider_than(1_000),
    ///     Some(("/properties/a", "pattern", 101 * 101))
    /// );
    /// assert_eq!(compiled.pattern_wider_than(20_000), None);
    /// ```
    pub fn pattern_wider_than(&self, limit: u64) -> Option<(&str, &str, u64)> {
        let w = self.wide_patterns.iter().find(|w| w.width > limit)?;
        Some((w.pointer.as_str(), w.keyword.as_str(), w.width))
    }
}

/// Compiles a JSON Schema into a grammar.
///
/// Numbers are read from `schema` as serde_json holds them: a number with
/// a fraction or an exponent went through an `f64` when the text was
/// parsed (`1e-400` became `0`). [`compile_str`] reads them from the text,
/// exactly.
pub fn compile(schema: &serde_json::Value, options: &Options) -> Result<Compiled, Error> {
    compile_parsed(schema, &json::Exact::default(), options)
}

/// Compiles a JSON Schema given as JSON text, reading every number as the
/// decimal it spells (`{"minimum": 1e-400}` does not accept `0`;
/// `1e400` is a number, not an error).
///
/// # Errors
/// Those of [`compile`], and [`ErrorKind::InvalidJson`] (with its line and
/// column) when the text is not JSON, [`ErrorKind::LimitExceeded`] when it
/// is longer than [`Limits::max_schema_bytes`] or nests deeper than
/// [`Limits::max_json_depth`].
pub fn compile_str(schema: &str, options: &Options) -> Result<Compiled, Error> {
    let limits = &options.limits;
    if schema.len() > limits.max_schema_bytes {
        let msg = format!(
            "the schema text has {} bytes, more than {} (Limits::max_schema_bytes)",
            schema.len(),
            limits.max_schema_bytes
        );
        return Err(Error::new(ErrorKind::LimitExceeded, "", "", msg));
    }
    let (value, exact) = json::parse(schema, limits.max_json_depth).map_err(|e| {
        let kind = if e.message.contains("max_json_depth") {
            ErrorKind::LimitExceeded
        } else {
            ErrorKind::InvalidJson
        };
        let msg = format!("line {} column {}: {}", e.line, e.column, e.message);
        Error::new(kind, "", &e.pointer, msg)
    })?;
    compile_parsed(&value, &exact, options)
}

fn compile_parsed(
    schema: &serde_json::Value,
    exact: &json::Exact,
    options: &Options,
) -> Result<Compiled, Error> {
    let index = resolve::Index::build(schema, options)?;
    let mut c = build::Compiler::new(schema, &index, exact, options);
    let root = c.compile_value(schema, "", 0)?;
    let grammar = lower::Lowerer::new(&mut c).run(&root)?;
    Ok(Compiled { grammar, warnings: c.warnings, wide_patterns: c.wide_patterns })
}

/// Translates an ECMA-262 `pattern` into the derivre regex that matches
/// exactly the strings an ECMA-262 search would find it in (look-aheads
/// become intersections and complements), or says why it cannot.
pub fn translate_pattern(pattern: &str) -> Result<derivre::RegexAst, String> {
    ecma::translate(pattern)
}
