//! Building the lexemes of one lexer in one derivre builder, each pattern
//! string parsed once.
//!
//! The lexemes of a grammar share pattern strings: the whitespace of every
//! structural JSON lexeme, `(?s:.*)` in string contents, number forms in
//! scalar unions. Parsing one (regex-syntax, then derivre's UTF-8 tries for
//! Unicode classes) costs far more than hash-consing the expressions it
//! yields, and a second parse of the same string creates no new expression
//! (the set is hash-consed, parsing is deterministic). So [`mk`] walks the
//! tree bottom-up in derivre's own order and parses each distinct string
//! once: the expression set, and every id in it, is exactly what
//! `RegexBuilder::mk` would have built. Lexers start from a builder in
//! which the most common strings are parsed already ([`PREPARSED`]).

use std::sync::{Arc, OnceLock};

use derivre::{ExprRef, Regex, RegexAst, RegexBuilder};
use rustc_hash::FxHashMap;

/// The expressions of the pattern strings parsed so far, by string.
pub(crate) type Parsed = FxHashMap<String, ExprRef>;

/// Pattern strings parsed once per process: every lexer starts from a copy
/// of a builder holding them ([`Preparsed::common`]). They are the lexemes
/// nearly every JSON grammar of the workspace has (structural whitespace,
/// the default separators, any text, booleans, the number forms;
/// `structgen-jsonschema` tests that its lowering writes them exactly so),
/// which cost 2 to 35 µs each to parse and a few hundred expressions to
/// keep. A lexer that uses none of them carries those expressions unused:
/// nothing walks from them (the byte classes are taken from the lexemes'
/// own expressions).
pub const PREPARSED: &[&str] = &[
    r"[\x20\x0A\x0D\x09]+",
    r"[ \t]{0,4}(\r?\n[ \t]{0,64})?",
    "(?s:.*)",
    "(?s:.)",
    "true|false",
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?",
    r"(0|[1-9][0-9]*)(\.[0-9]+)?",
    "-?(0|[1-9][0-9]*)",
    r"(\.[0-9]+)?",
    r"\.0+",
    "0*[1-9][0-9]*",
    "[1-9][0-9]{1,}",
    ",",
    ":",
];

/// Pattern strings parsed once per process: a derivre builder holding
/// their expressions, which a lexer (or a one-off regex) starts from as a
/// copy instead of parsing them again.
///
/// [`Preparsed::common`] holds [`PREPARSED`] and is what every lexer
/// starts from by default. A front end whose grammars share longer
/// patterns (JSON Schema `format`s: a URI regex takes half a millisecond
/// to parse) makes its own with [`Preparsed::new`], keeps it for the
/// process, and hands it to its lexers ([`LexerSpec::set_preparsed`](crate::LexerSpec::set_preparsed)).
/// A copy of it is taken only for lexemes that use one of its own
/// patterns; the others start from the common one, so a larger set costs
/// nothing to grammars that do not use it.
///
/// Parsing is deterministic and the set is hash-consed, so starting from a
/// copy builds the same language as parsing into a fresh builder (the
/// expression ids differ, which nothing outside the lexer sees).
pub struct Preparsed {
    builder: RegexBuilder,
    parsed: Parsed,
    /// The derivative widths of the same strings (`width.rs`: checking a
    /// lexeme parses its strings again with `regex-syntax`).
    widths: crate::width::Memo,
    /// Whether it holds patterns beyond [`PREPARSED`].
    extended: bool,
}

impl std::fmt::Debug for Preparsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preparsed")
            .field("patterns", &self.parsed.len())
            .field("expressions", &self.builder.exprset().len())
            .finish()
    }
}

impl Preparsed {
    /// [`PREPARSED`] and `patterns`, each parsed once. A pattern that does
    /// not parse is left out: a lexeme using it fails in its own lexer,
    /// with its own name.
    pub fn new(patterns: &[&str]) -> Preparsed {
        let mut builder = RegexBuilder::new();
        let mut parsed = Parsed::default();
        let mut widths = crate::width::Memo::default();
        for &p in PREPARSED.iter().chain(patterns) {
            if parsed.contains_key(p) {
                continue;
            }
            if let Ok(e) = builder.mk_regex(p) {
                parsed.insert(p.to_owned(), e);
                let ast = RegexAst::Regex(p.to_owned());
                crate::width::of_ast(&ast, &Default::default(), &mut widths);
            }
        }
        Preparsed { builder, parsed, widths, extended: !patterns.is_empty() }
    }

    /// The set holding [`PREPARSED`], made on first use.
    pub fn common() -> &'static Arc<Preparsed> {
        static COMMON: OnceLock<Arc<Preparsed>> = OnceLock::new();
        COMMON.get_or_init(|| Arc::new(Preparsed::new(&[])))
    }

    /// The number of pattern strings held.
    pub fn len(&self) -> usize {
        self.parsed.len()
    }

    /// Whether it holds no pattern (never true: [`PREPARSED`] parse).
    pub fn is_empty(&self) -> bool {
        self.parsed.is_empty()
    }

    /// Whether `pattern` is held, parsed.
    pub fn contains(&self, pattern: &str) -> bool {
        self.parsed.contains_key(pattern)
    }

    /// The set to copy for `asts`: this one when one of them uses a
    /// pattern only it holds, else the common one (smaller to copy).
    pub(crate) fn for_asts<'a>(
        self: &'a Arc<Preparsed>,
        asts: impl IntoIterator<Item = &'a RegexAst>,
    ) -> &'a Preparsed {
        if !self.extended {
            return self;
        }
        let common = Preparsed::common();
        let own = |s: &str| self.parsed.contains_key(s) && !common.parsed.contains_key(s);
        if pattern_strings(asts).any(own) { self } else { common }
    }

    /// The derivative widths of its patterns.
    pub(crate) fn widths(&self) -> &crate::width::Memo {
        &self.widths
    }

    /// A copy of the builder and of its parsed patterns.
    pub(crate) fn start(&self) -> (RegexBuilder, Parsed) {
        (self.builder.clone(), self.parsed.clone())
    }

    /// `ast` built in a copy of this set (or of the common one when `ast`
    /// uses none of its own patterns), each other pattern string parsed
    /// once: the builder and the expression, for a one-off question (is
    /// it empty, does it match a name) asked outside a lexer.
    ///
    /// # Errors
    /// derivre's message for a pattern it rejects (or fails on).
    pub fn build_regex(
        self: &Arc<Preparsed>,
        ast: &RegexAst,
    ) -> Result<(RegexBuilder, ExprRef), String> {
        let (mut builder, mut parsed) = self.for_asts([ast]).start();
        let e = mk(&mut builder, &mut parsed, ast)?;
        Ok((builder, e))
    }
}

/// A builder for many one-off questions over regexes that share pattern
/// strings: it keeps every string it has parsed, so each is parsed once
/// however many questions use it. A compilation asks such questions by the
/// hundred about key sets built from the same `patternProperties` (BCP 47
/// language tags of 500 bytes, parsed by `regex-syntax` at every question
/// before: more than half of one OCDS schema's compile time).
///
/// Each question copies the builder's expression set into the automaton
/// it returns ([`regex_limited`](Scratch::regex_limited)), so the set is
/// kept small: past `max_exprs` expressions the scratch starts again from
/// its preparsed set. The answers do not depend on what the scratch held
/// before (the set is hash-consed and derivre's questions read only what
/// is reachable from the expression asked about).
pub struct Scratch {
    origin: Arc<Preparsed>,
    builder: RegexBuilder,
    parsed: Parsed,
    max_exprs: usize,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch")
            .field("patterns", &self.parsed.len())
            .field("expressions", &self.builder.exprset().len())
            .finish()
    }
}

impl Scratch {
    /// A scratch starting from `origin`'s patterns, restarting past
    /// `max_exprs` expressions.
    pub fn new(origin: Arc<Preparsed>, max_exprs: usize) -> Scratch {
        let (builder, parsed) = origin.start();
        Scratch { origin, builder, parsed, max_exprs }
    }

    /// The preparsed set it starts from.
    pub fn origin(&self) -> &Arc<Preparsed> {
        &self.origin
    }

    /// The automaton of `ast`, its relevance checked with `fuel` (as
    /// `RegexBuilder::into_regex_limited`): `Ok(None)` when the fuel ran
    /// out.
    ///
    /// # Errors
    /// derivre's message for a pattern it rejects (or fails on); the
    /// scratch then starts again from its preparsed set (derivre may have
    /// stopped half way through an insertion).
    pub fn regex_limited(&mut self, ast: &RegexAst, fuel: u64) -> Result<Option<Regex>, String> {
        if self.builder.exprset().len() > self.max_exprs {
            self.restart();
        }
        let e = mk(&mut self.builder, &mut self.parsed, ast).inspect_err(|_| self.restart())?;
        Ok(self.builder.to_regex_limited(e, fuel).ok())
    }

    /// Back to a copy of the preparsed set.
    fn restart(&mut self) {
        (self.builder, self.parsed) = self.origin.start();
    }
}

/// The pattern strings (`RegexAst::Regex`) of `asts`, each tree walked
/// depth first.
pub fn pattern_strings<'a>(
    asts: impl IntoIterator<Item = &'a RegexAst>,
) -> impl Iterator<Item = &'a str> {
    let mut todo: Vec<&'a RegexAst> = asts.into_iter().collect();
    std::iter::from_fn(move || {
        while let Some(a) = todo.pop() {
            todo.extend(a.get_args());
            if let RegexAst::Regex(s) = a {
                return Some(s.as_str());
            }
        }
        None
    })
}

/// [`Preparsed::build_regex`] on the common set.
///
/// # Errors
/// derivre's message for a pattern it rejects (or fails on).
pub fn build_regex(ast: &RegexAst) -> Result<(RegexBuilder, ExprRef), String> {
    Preparsed::common().build_regex(ast)
}

/// `builder.mk(ast)`, parsing each pattern string of `parsed` once; the
/// error is derivre's message.
pub(crate) fn mk(
    builder: &mut RegexBuilder,
    parsed: &mut Parsed,
    ast: &RegexAst,
) -> Result<ExprRef, String> {
    let node = |a: &RegexAst, args: &mut Vec<ExprRef>| {
        let refs = |args: &[ExprRef]| args.iter().map(|&e| RegexAst::ExprRef(e)).collect();
        let one = |args: &[ExprRef]| Box::new(RegexAst::ExprRef(args[0]));
        let shallow = match a {
            RegexAst::Regex(s) => {
                if let Some(&e) = parsed.get(s.as_str()) {
                    return Ok(e);
                }
                let e = builder.mk_regex(s)?;
                parsed.insert(s.clone(), e);
                return Ok(e);
            }
            _ if args.is_empty() => return builder.mk(a),
            RegexAst::And(_) => RegexAst::And(refs(args)),
            RegexAst::Or(_) => RegexAst::Or(refs(args)),
            RegexAst::Concat(_) => RegexAst::Concat(refs(args)),
            RegexAst::Not(_) => RegexAst::Not(one(args)),
            RegexAst::LookAhead(_) => RegexAst::LookAhead(one(args)),
            RegexAst::Repeat(_, lo, hi) => RegexAst::Repeat(one(args), *lo, *hi),
            RegexAst::JsonQuote(_, o) => RegexAst::JsonQuote(one(args), o.clone()),
            // A node kind unknown here: derivre builds it whole (its
            // children again, which adds no expression).
            _ => return builder.mk(a),
        };
        builder.mk(&shallow)
    };
    // derivre can panic while simplifying some patterns (found by the
    // fuzzer: `wohello|wo()hello` in its alternation simplifier); bad input
    // must be an error, never a panic of ours. The builder is dropped with
    // the failed compile, so its state after the panic does not matter.
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        derivre::map_ast(ast, RegexAst::get_args, node)
    }));
    match built {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            Err(format!("the regex engine (derivre) failed on this pattern: {why}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use derivre::{JsonQuoteOptions, RegexAst, RegexBuilder};
    use proptest::prelude::*;

    use super::{PREPARSED, Parsed, Preparsed, mk};

    #[test]
    fn every_preparsed_pattern_parses_once() {
        let (mut b, mut again) = Preparsed::common().start();
        assert_eq!(again.len(), PREPARSED.len());
        // Building one again adds no expression: it is the one kept.
        let before = b.exprset().len();
        for &p in PREPARSED {
            let e = mk(&mut b, &mut Parsed::default(), &RegexAst::Regex(p.to_owned())).unwrap();
            assert_eq!(Some(&e), again.get(p), "{p}");
            again.remove(p);
        }
        assert_eq!(b.exprset().len(), before);
    }

    fn regex() -> impl Strategy<Value = RegexAst> {
        let leaf = prop_oneof![
            "[a-c\"é]{0,4}".prop_map(RegexAst::Literal),
            Just(RegexAst::Regex("(?s:.*)".to_string())),
            Just(RegexAst::Regex("[a-c]+x".to_string())),
            Just(RegexAst::Regex("[ \\t]*".to_string())),
            Just(RegexAst::Regex("-?[0-9]+".to_string())),
            Just(RegexAst::EmptyString),
            Just(RegexAst::NoMatch),
            Just(RegexAst::MultipleOf(3, 0)),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(RegexAst::Concat),
                prop::collection::vec(inner.clone(), 1..4).prop_map(RegexAst::Or),
                prop::collection::vec(inner.clone(), 1..3).prop_map(RegexAst::And),
                inner.clone().prop_map(|x| RegexAst::Not(Box::new(x))),
                inner.clone().prop_map(|x| RegexAst::LookAhead(Box::new(x))),
                (inner.clone(), 0u32..3, 3u32..5).prop_map(|(x, a, b)| RegexAst::Repeat(
                    Box::new(x),
                    a,
                    b
                )),
                inner.prop_map(|x| RegexAst::JsonQuote(Box::new(x), JsonQuoteOptions::regular())),
            ]
        })
    }

    proptest! {
        /// A scratch answers every question of a sequence as a fresh
        /// builder does (emptiness, and matches of a few strings), small
        /// enough to restart half way through.
        #[test]
        fn a_scratch_answers_as_a_fresh_builder(rxs in prop::collection::vec(regex(), 1..8)) {
            let mut scratch = super::Scratch::new(Preparsed::common().clone(), 700);
            for r in &rxs {
                let fresh = super::build_regex(r).map(|(b, e)| b.into_regex_limited(e, 100_000).ok());
                let kept = scratch.regex_limited(r, 100_000);
                match (fresh, kept) {
                    (Ok(Some(mut a)), Ok(Some(mut b))) => {
                        prop_assert_eq!(a.always_empty(), b.always_empty());
                        for w in ["", "a", "ab\"", "x-12", "\"aé\"", "cab"] {
                            prop_assert_eq!(a.is_match(w), b.is_match(w), "{:?} on {:?}", r, w);
                        }
                    }
                    (Ok(None), Ok(None)) => {}
                    (Err(a), Err(b)) => prop_assert_eq!(a, b),
                    (a, b) => prop_assert!(false, "{:?}: {:?} vs {:?}", r, a.map(|x| x.is_some()), b.map(|x| x.is_some())),
                }
            }
        }

        /// The same ids, and the same expression set, as `RegexBuilder::mk`.
        #[test]
        fn same_expressions_as_derivre(rxs in prop::collection::vec(regex(), 1..6)) {
            let (mut plain, mut shared) = (RegexBuilder::new(), RegexBuilder::new());
            let mut parsed = Parsed::default();
            for r in &rxs {
                let a = plain.mk(r).map_err(|e| e.to_string());
                let b = mk(&mut shared, &mut parsed, r);
                prop_assert_eq!(a, b);
            }
            let (x, y) = (plain.into_exprset(), shared.into_exprset());
            prop_assert_eq!(x.len(), y.len());
            for i in 1..x.len() as u32 {
                let e = derivre::ExprRef::new(i);
                prop_assert_eq!(x.expr_to_string(e), y.expr_to_string(e));
            }
        }
    }
}
