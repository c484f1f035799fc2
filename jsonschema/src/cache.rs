//! Memoized regex questions of one compilation.
//!
//! Compiling a schema asks derivre two questions over and over: whether a
//! regex matches nothing (to drop empty branches, lexemes and key regions)
//! and whether a key regex matches a property name (to find the schema a
//! name takes in an object). Each question used to build a fresh derivre
//! regex: parsing its pattern strings (the Unicode ranges of `(?s:.*)` alone
//! cost tens of microseconds), compressing its alphabet, then answering.
//! The same questions come back many times (every intersection of two
//! objects asks for every property name against every key region; each
//! `oneOf` branch pair intersects again), so:
//!
//! - exact answers that need no derivre come first: the any-key regex
//!   `(?s:.*)` matches every name and is not empty, a literal matches only
//!   itself, `And`/`Or`/`Not` combine the answers of their parts when every
//!   part has one (so a part derivre would reject still reaches derivre and
//!   its error); the keys left to `additionalProperties` (any key but the
//!   listed names) are not empty; an intersection with a finite set of
//!   literals (a string `enum`) is empty exactly when none of them matches
//!   the other parts, when those parts have answers for each of them;
//! - every other answer is computed by derivre as before and memoized for
//!   the compilation, keyed by the regex tree's complete text form; a
//!   regex asked whether it matches names is compiled once and kept for
//!   the next name (a few hundred regexes at most).
//!
//! The answers are those of the plain computation (a property test checks
//! them against it), so the grammar does not change.

use std::collections::HashMap;

use derivre::{Regex, RegexAst};

/// The most compiled regexes a [`RegexMemo`] keeps.
const COMPILED_REGEXES: usize = 256;

/// The memo of one compilation.
#[derive(Default)]
pub(crate) struct RegexMemo {
    /// Emptiness answers (`Some(true)`: matches nothing; `None`: out of fuel).
    empty: HashMap<String, Option<bool>>,
    /// Finiteness answers ([`Compiler::regex_never_finite`]): one item
    /// schema behind a `$ref` is asked about once per array of it.
    ///
    /// [`Compiler::regex_never_finite`]: crate::build::Compiler::regex_never_finite
    never_finite: HashMap<String, bool>,
    /// Match answers, by (regex key, name).
    matches: HashMap<(String, String), bool>,
    /// Regexes compiled for match questions, by key: one regex is asked
    /// about many names (every property name against every key region),
    /// and parsing its pattern again for each cost more than the answer.
    /// At most [`COMPILED_REGEXES`] (then cleared).
    compiled: HashMap<String, Option<Regex>>,
    /// Scratch space for keys.
    key: String,
    /// Tests compare the grammars built with and without the memo.
    #[cfg(test)]
    pub(crate) bypass: bool,
}

/// The text form of [`crate::ir::any_key`]'s pattern.
const ANY: &str = "(?s:.*)";
/// One character of any kind (see [`crate::lower::any_chars`]).
const ANY1: &str = "(?s:.)";

/// Whether `ast` matches `s`, when that is known without derivre.
pub(crate) fn quick_match(ast: &RegexAst, s: &str) -> Option<bool> {
    match ast {
        RegexAst::Regex(r) if r == ANY => Some(true),
        // A length bound (`lower::any_chars`): `(?s:.)` is one character.
        RegexAst::Repeat(x, lo, hi)
            if lo <= hi && matches!(&**x, RegexAst::Regex(r) if r == ANY1) =>
        {
            let n = s.chars().count();
            Some(*lo as usize <= n && (*hi == u32::MAX || n <= *hi as usize))
        }
        RegexAst::Literal(l) => Some(l == s),
        RegexAst::EmptyString => Some(s.is_empty()),
        RegexAst::NoMatch => Some(false),
        RegexAst::Not(x) => quick_match(x, s).map(|m| !m),
        RegexAst::And(xs) => {
            let mut all = true;
            for x in xs {
                all &= quick_match(x, s)?;
            }
            Some(all)
        }
        RegexAst::Or(xs) => {
            let mut any = false;
            for x in xs {
                any |= quick_match(x, s)?;
            }
            Some(any)
        }
        _ => None,
    }
}

/// Whether `ast` matches nothing, when that is known without derivre.
///
/// - `Some(false)` for the plain non-empty cases and the key regex of the
///   keys an object leaves to `additionalProperties`: `(?s:.*)` and not
///   the listed names. An intersection of `(?s:.*)` and complements of
///   finite languages is non-empty (infinitely many strings minus finitely
///   many), as is a union with a non-empty part.
/// - Either answer for a finite set of literals (an `enum` or `const` of
///   strings), alone or intersected with parts [`quick_match`] answers for
///   each of its strings: the intersection is empty exactly when none of
///   the strings matches every other part. `oneOf` over string enums asks
///   this for every pair of branches; derivre would explore the whole
///   prefix tree of both enums to answer it.
pub(crate) fn quick_empty(ast: &RegexAst) -> Option<bool> {
    if let Some(r) = finite_empty(ast) {
        return Some(r);
    }
    let infinite = |x: &RegexAst| match x {
        RegexAst::Regex(r) => r == ANY,
        RegexAst::Not(y) => is_finite(y),
        _ => false,
    };
    match ast {
        RegexAst::Literal(_) | RegexAst::EmptyString => Some(false),
        RegexAst::Regex(_) | RegexAst::Not(_) if infinite(ast) => Some(false),
        RegexAst::And(xs) if !xs.is_empty() && xs.iter().all(infinite) => Some(false),
        RegexAst::Or(xs) if xs.iter().any(|x| quick_empty(x) == Some(false)) => Some(false),
        _ => None,
    }
}

/// The most strings of one finite set [`finite_empty`] tries.
const FINITE_STRINGS: usize = 4096;

/// The [`quick_empty`] answer for finite sets of literals.
fn finite_empty(ast: &RegexAst) -> Option<bool> {
    let parts = match ast {
        RegexAst::And(xs) => xs.as_slice(),
        x => std::slice::from_ref(x),
    };
    // The smallest finite set among the parts is the one to try.
    let mut best: Option<(usize, Vec<&str>)> = None;
    for (i, p) in parts.iter().enumerate() {
        let mut set = Vec::new();
        let cap = best.as_ref().map_or(FINITE_STRINGS, |(_, b)| b.len());
        if literal_set(p, &mut set, cap) && best.as_ref().is_none_or(|(_, b)| set.len() < b.len()) {
            best = Some((i, set));
        }
    }
    let (at, set) = best?;
    let mut empty = true;
    for s in set {
        let mut all = true;
        for (i, p) in parts.iter().enumerate() {
            if i != at {
                all &= quick_match(p, s)?;
            }
        }
        empty &= !all;
    }
    Some(empty)
}

/// Appends the strings of `ast` to `out` when it is a union of literals
/// of at most `cap` strings (false otherwise; `out` is then partial).
fn literal_set<'a>(ast: &'a RegexAst, out: &mut Vec<&'a str>, cap: usize) -> bool {
    match ast {
        RegexAst::Literal(l) => out.push(l),
        RegexAst::EmptyString => out.push(""),
        RegexAst::NoMatch => {}
        RegexAst::Or(xs) => return xs.iter().all(|x| literal_set(x, out, cap)),
        _ => return false,
    }
    out.len() <= cap
}

/// How many of `regexes` cost derivative work when intersected: all but
/// literals and the negations of finitely many literals (whose
/// derivatives are a few literals at each step).
pub(crate) fn costly_regexes(regexes: &[RegexAst]) -> usize {
    let cheap = |r: &RegexAst| match r {
        RegexAst::Not(x) => is_finite(x),
        r => is_finite(r),
    };
    regexes.iter().filter(|r| !cheap(r)).count()
}

/// Whether `ast` surely denotes a finite language.
fn is_finite(ast: &RegexAst) -> bool {
    match ast {
        RegexAst::Literal(_) | RegexAst::EmptyString | RegexAst::NoMatch => true,
        RegexAst::Or(xs) | RegexAst::Concat(xs) => xs.iter().all(is_finite),
        _ => false,
    }
}

impl RegexMemo {
    /// The memoized emptiness answer for `ast`, or `compute`'s (then memoized).
    pub(crate) fn is_empty<E>(
        &mut self,
        ast: &RegexAst,
        compute: impl FnOnce() -> Result<Option<bool>, E>,
    ) -> Result<Option<bool>, E> {
        #[cfg(test)]
        if self.bypass {
            return compute();
        }
        if let Some(r) = quick_empty(ast) {
            return Ok(Some(r));
        }
        memoized(&mut self.empty, &mut self.key, ast, compute)
    }

    /// The memoized answer to whether `ast` never leaves a prefix with
    /// finitely many completions, or `compute`'s (then memoized).
    pub(crate) fn never_finite<E>(
        &mut self,
        ast: &RegexAst,
        compute: impl FnOnce() -> Result<bool, E>,
    ) -> Result<bool, E> {
        #[cfg(test)]
        if self.bypass {
            return compute();
        }
        memoized(&mut self.never_finite, &mut self.key, ast, compute)
    }

    /// The memoized answer to whether `ast` matches `s`, or `compute`'s
    /// (then memoized).
    ///
    /// `compute` answers with the regex compiled in the slot it is given,
    /// compiling it there when the slot is empty.
    pub(crate) fn matches<E>(
        &mut self,
        ast: &RegexAst,
        s: &str,
        compute: impl FnOnce(&mut Option<Regex>) -> Result<bool, E>,
    ) -> Result<bool, E> {
        #[cfg(test)]
        if self.bypass {
            return compute(&mut None);
        }
        if let Some(r) = quick_match(ast, s) {
            return Ok(r);
        }
        self.key.clear();
        write_key(ast, &mut self.key);
        let key = (std::mem::take(&mut self.key), s.to_string());
        if let Some(&r) = self.matches.get(&key) {
            self.key = key.0;
            return Ok(r);
        }
        if !self.compiled.contains_key(&key.0) && self.compiled.len() >= COMPILED_REGEXES {
            self.compiled.clear();
        }
        let r = compute(self.compiled.entry(key.0.clone()).or_default())?;
        self.matches.insert(key, r);
        Ok(r)
    }
}

/// `answers`' entry for `ast` (keyed by its text form, written into the
/// scratch `key`), or `compute`'s answer, then kept there.
fn memoized<T: Copy, E>(
    answers: &mut HashMap<String, T>,
    key: &mut String,
    ast: &RegexAst,
    compute: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    key.clear();
    write_key(ast, key);
    if let Some(&r) = answers.get(key.as_str()) {
        return Ok(r);
    }
    let r = compute()?;
    answers.insert(key.clone(), r);
    Ok(r)
}

/// Appends a complete, injective text form of a regex tree to `out`.
pub(crate) fn write_key(ast: &RegexAst, out: &mut String) {
    use std::fmt::Write;
    let args = |tag: &str, xs: &[RegexAst], out: &mut String| {
        out.push_str(tag);
        out.push('(');
        for x in xs {
            write_key(x, out);
            out.push(',');
        }
        out.push(')');
    };
    match ast {
        RegexAst::And(xs) => args("and", xs, out),
        RegexAst::Or(xs) => args("or", xs, out),
        RegexAst::Concat(xs) => args("cat", xs, out),
        RegexAst::LookAhead(x) => args("look", std::slice::from_ref(x), out),
        RegexAst::Not(x) => args("not", std::slice::from_ref(x), out),
        RegexAst::Repeat(x, lo, hi) => {
            let _ = write!(out, "rep{lo},{hi}");
            args("", std::slice::from_ref(x), out);
        }
        RegexAst::JsonQuote(x, o) => {
            let _ = write!(out, "quote{:?}{}", o.allowed_escapes, o.raw_mode);
            args("", std::slice::from_ref(x), out);
        }
        RegexAst::MultipleOf(d, sc) => {
            let _ = write!(out, "mul{d},{sc}");
        }
        RegexAst::EmptyString => out.push_str("eps"),
        RegexAst::NoMatch => out.push_str("none"),
        // Text goes in raw after its length (which keeps the form
        // injective): escaping it with `{:?}` was 3% of compile time.
        RegexAst::Regex(r) => {
            let _ = write!(out, "rx{}:", r.len());
            out.push_str(r);
        }
        RegexAst::SearchRegex(r) => {
            let _ = write!(out, "srx{}:", r.len());
            out.push_str(r);
        }
        RegexAst::Literal(l) => {
            let _ = write!(out, "lit{}:", l.len());
            out.push_str(l);
        }
        RegexAst::ByteLiteral(b) => {
            let _ = write!(out, "blit{b:?}");
        }
        RegexAst::Byte(b) => {
            let _ = write!(out, "byte{b}");
        }
        RegexAst::ByteSet(b) => {
            let _ = write!(out, "bset{b:?}");
        }
        RegexAst::ExprRef(e) => {
            let _ = write!(out, "ref{}", e.as_usize());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufRead;

    use derivre::{RegexAst, RegexBuilder};
    use proptest::prelude::*;

    use super::{quick_empty, quick_match};
    use crate::{Options, build, lower};

    /// The plain answers: a fresh derivre regex per question.
    fn derivre_matches(ast: &RegexAst, s: &str) -> bool {
        let mut b = RegexBuilder::new();
        let e = b.mk(ast).unwrap();
        b.to_regex(e).is_match(s)
    }

    fn derivre_empty(ast: &RegexAst) -> bool {
        let mut b = RegexBuilder::new();
        let e = b.mk(ast).unwrap();
        b.to_regex(e).always_empty()
    }

    fn ast() -> impl Strategy<Value = RegexAst> {
        let leaf = prop_oneof![
            "[ab]{0,3}".prop_map(RegexAst::Literal),
            Just(RegexAst::Regex(super::ANY.to_string())),
            Just(RegexAst::Regex("a+".to_string())),
            Just(RegexAst::Regex("[ab]b".to_string())),
            Just(RegexAst::EmptyString),
            Just(RegexAst::NoMatch),
            (0..3u32, 0..4u32).prop_map(|(lo, n)| crate::lower::any_chars(
                lo as usize,
                (n < 3).then_some((lo + n) as usize)
            )),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(RegexAst::And),
                prop::collection::vec(inner.clone(), 1..4).prop_map(RegexAst::Or),
                prop::collection::vec(inner.clone(), 1..3).prop_map(RegexAst::Concat),
                inner.prop_map(|x| RegexAst::Not(Box::new(x))),
            ]
        })
    }

    proptest! {
        #[test]
        fn quick_answers_are_derivre_answers(a in ast(), s in "[abc]{0,4}") {
            if let Some(m) = quick_match(&a, &s) {
                prop_assert_eq!(m, derivre_matches(&a, &s), "{:?} on {:?}", a, s);
            }
            if let Some(e) = quick_empty(&a) {
                prop_assert_eq!(e, derivre_empty(&a), "{:?}", a);
            }
        }
    }

    /// Small trees whose text holds the key's own punctuation.
    fn tricky() -> impl Strategy<Value = RegexAst> {
        let text = "[a1:,()]{0,3}";
        let leaf = prop_oneof![
            text.prop_map(RegexAst::Literal),
            text.prop_map(RegexAst::Regex),
            text.prop_map(RegexAst::SearchRegex),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(RegexAst::Concat),
                prop::collection::vec(inner, 0..3).prop_map(RegexAst::Or),
            ]
        })
    }

    proptest! {
        /// Equal keys only for equal trees.
        #[test]
        fn keys_are_injective(a in tricky(), b in tricky()) {
            let (mut ka, mut kb) = (String::new(), String::new());
            super::write_key(&a, &mut ka);
            super::write_key(&b, &mut kb);
            prop_assert_eq!(ka == kb, format!("{a:?}") == format!("{b:?}"), "{} {}", ka, kb);
        }
    }

    proptest! {
        /// The additionalProperties key regexes: any key but the listed names.
        #[test]
        fn other_keys_are_not_empty(names in prop::collection::vec("[ab]{0,3}", 0..5)) {
            let names: Vec<RegexAst> = names.into_iter().map(RegexAst::Literal).collect();
            let rx = RegexAst::And(vec![
                RegexAst::Regex(super::ANY.to_string()),
                RegexAst::Not(Box::new(RegexAst::Or(names))),
            ]);
            prop_assert_eq!(quick_empty(&rx), Some(false));
            prop_assert!(!derivre_empty(&rx));
        }
    }

    /// The grammar (or error) of `schema`, with or without the memo.
    fn compile(schema: &serde_json::Value, options: &Options, memo: bool) -> String {
        let exact = crate::json::Exact::default();
        let index = crate::resolve::Index::build(schema, options).unwrap();
        let mut c = build::Compiler::new(schema, &index, &exact, options);
        c.regex_memo.bypass = !memo;
        let out =
            c.compile_value(schema, "", 0).and_then(|root| lower::Lowerer::new(&mut c).run(&root));
        match out {
            Ok(g) => format!("{g:?}"),
            Err(e) => format!("error: {e}"),
        }
    }

    fn same_with_and_without(schema: &serde_json::Value) {
        for options in [Options::llguidance_compat(), Options::compact()] {
            let (a, b) = (compile(schema, &options, true), compile(schema, &options, false));
            assert!(a == b, "the memo changed the grammar of {schema}");
        }
    }

    #[test]
    fn memo_keeps_handwritten_grammars() {
        let schemas = serde_json::json!([
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"allOf": [
                {"properties": {"a": {"type": "integer"}}, "patternProperties": {"^x": {"type": "string"}}},
                {"properties": {"xb": {"minLength": 2}}, "additionalProperties": {"type": "number"}}
            ]},
            {"oneOf": [
                {"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]},
                {"type": "object", "properties": {"k": {"const": 2}}, "required": ["k"]},
                {"type": "object", "patternProperties": {"^k$": {"type": "string"}}, "required": ["k"]}
            ]},
            {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"},
             "properties": {"ok": true, "NO": true}, "required": ["ok"]},
            {"type": "object", "patternProperties": {"a": {"type": "integer"}, "b": {"minimum": 3}},
             "additionalProperties": false, "required": ["ab", "zz"]},
            {"oneOf": [
                {"oneOf": [{"enum": ["a", "b.c", "dé"]}, {"enum": ["x", "b.c"], "maxLength": 3}]},
                {"enum": ["y", "dé", ""], "minLength": 1},
                {"const": "zz"},
                {"type": "string", "pattern": "^z"}
            ]}
        ]);
        for s in schemas.as_array().unwrap() {
            same_with_and_without(s);
        }
    }

    /// MaskBench's dev split at a stride (small schemas, to stay fast in
    /// the debug profile), when `../shared/data` is present.
    #[test]
    fn memo_keeps_maskbench_grammars() {
        let Some(text) =
            testkit::read_data_or_skip("memo_keeps_maskbench_grammars", "maskbench/dev.jsonl.gz")
        else {
            return;
        };
        let mut checked = 0;
        for line in text.lines().map(Result::unwrap).step_by(7) {
            if line.len() > 12_000 {
                continue;
            }
            let rec: serde_json::Value = serde_json::from_str(&line).unwrap();
            let schema = rec["schema"].clone();
            // Deep schemas recurse deeply: a thread with a large stack.
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn(move || same_with_and_without(&schema))
                .unwrap()
                .join()
                .unwrap();
            checked += 1;
        }
        assert!(checked > 500, "only {checked} schemas checked");
    }
}
