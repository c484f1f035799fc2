//! The derivre questions of a compilation (emptiness, matches), guarded
//! and memoized, and `pattern` translation.

use std::sync::Arc;

use derivre::{Regex, RegexAst, RegexBuilder};
use serde_json::Value;

use super::Compiler;
use crate::ecma;
use crate::error::{ErrorKind, Result};
use crate::formats;

/// The most expressions a scratch builder holds before it starts again
/// from its preparsed set: every question copies the set (see
/// [`lexer::Scratch`]).
const MAX_SCRATCH_EXPRS: usize = 20_000;

impl Compiler<'_> {
    /// Runs `f` (calls into derivre), turning a panic inside derivre into
    /// [`ErrorKind::EngineFault`] at the current location: bad input is an
    /// error, never a panic.
    fn guarded<T>(&mut self, what: &str, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))).unwrap_or_else(|_| {
            // A scratch builder may be half way through an insertion.
            self.scratches.clear();
            Err(self.err(
                ErrorKind::EngineFault,
                "",
                &self.location,
                format!("the regex engine failed during {what}"),
            ))
        })
    }

    /// `Some(true)` if the regex matches nothing, `None` if the check ran out
    /// of fuel (memoized, see `cache.rs`).
    pub(crate) fn regex_is_empty(&mut self, ast: &RegexAst) -> Result<Option<bool>> {
        let mut memo = std::mem::take(&mut self.regex_memo);
        let r = memo.is_empty(ast, || self.regex_is_empty_uncached(ast));
        self.regex_memo = memo;
        r
    }

    /// Whether the regex matches `s` (memoized, see `cache.rs`).
    pub(crate) fn regex_matches(&mut self, ast: &RegexAst, s: &str) -> Result<bool> {
        let mut memo = std::mem::take(&mut self.regex_memo);
        let r = memo.matches(ast, s, |compiled| self.regex_matches_uncached(ast, s, compiled));
        self.regex_memo = memo;
        r
    }

    /// The automaton of `ast` for a one-off question, its relevance
    /// checked with `fuel` (`None`: out of fuel), built in this
    /// compilation's scratch builder for the preparsed set `ast` uses
    /// ([`formats::preparsed_for`]), where each pattern string is parsed
    /// once per compilation.
    fn regex_of(&mut self, ast: &RegexAst, fuel: u64) -> Result<Option<Regex>> {
        let set =
            formats::preparsed_for([ast]).unwrap_or_else(|| lexer::Preparsed::common().clone());
        let i = match self.scratches.iter().position(|s| Arc::ptr_eq(s.origin(), &set)) {
            Some(i) => i,
            None => {
                self.scratches.push(lexer::Scratch::new(set, MAX_SCRATCH_EXPRS));
                self.scratches.len() - 1
            }
        };
        self.scratches[i]
            .regex_limited(ast, fuel)
            .map_err(|e| self.err(ErrorKind::UnsupportedPattern, "", "", e))
    }

    /// [`regex_is_empty`](Self::regex_is_empty) computed by derivre.
    pub(crate) fn regex_is_empty_uncached(&mut self, ast: &RegexAst) -> Result<Option<bool>> {
        let fuel = self.options.limits.regex_fuel;
        self.charge_regex(ast)?;
        self.guarded("an emptiness check", |c| {
            Ok(c.regex_of(ast, fuel)?.map(|mut r| r.always_empty()))
        })
    }

    /// Whether every live state of `ast`'s automaton (a prefix that some
    /// match extends) still has infinitely many matches: no prefix of a
    /// match has only finitely many completions. `false` for an empty
    /// language, and when the automaton has more than
    /// [`MAX_FINITENESS_STATES`] states or runs out of `regex_fuel` (a
    /// sufficient test: what it cannot tell counts as finite). Unique items
    /// use it (`lower/array.rs`): over such strings a prefix never leaves
    /// only earlier items to complete it.
    pub(crate) fn regex_never_finite(&mut self, ast: &RegexAst) -> Result<bool> {
        let mut memo = std::mem::take(&mut self.regex_memo);
        let r = memo.never_finite(ast, || self.regex_never_finite_uncached(ast));
        self.regex_memo = memo;
        r
    }

    /// [`regex_never_finite`](Self::regex_never_finite) computed by derivre.
    fn regex_never_finite_uncached(&mut self, ast: &RegexAst) -> Result<bool> {
        let fuel = self.options.limits.regex_fuel;
        self.charge_regex(ast)?;
        self.guarded("a finiteness check", |c| Ok(c.regex_of(ast, fuel)?.is_some_and(never_finite)))
    }

    /// [`regex_matches`](Self::regex_matches) computed by derivre, with
    /// `ast` compiled into `compiled` unless it holds its regex already.
    pub(crate) fn regex_matches_uncached(
        &mut self,
        ast: &RegexAst,
        s: &str,
        compiled: &mut Option<Regex>,
    ) -> Result<bool> {
        if compiled.is_none() {
            self.charge_regex(ast)?;
        }
        let r = self.guarded("a match", |c| {
            let rx = match compiled {
                Some(rx) => rx,
                // Unlimited fuel: the relevance check cannot run out.
                None => match c.regex_of(ast, u64::MAX)? {
                    Some(rx) => compiled.insert(rx),
                    None => return Ok(false),
                },
            };
            Ok(rx.is_match(s))
        });
        if r.is_err() {
            // A regex the engine failed inside is not kept.
            *compiled = None;
        }
        r
    }

    pub(crate) fn pattern(&mut self, kw: &str, ptr: &str, p: &Value) -> Result<RegexAst> {
        let p = p.as_str().ok_or_else(|| self.invalid(kw, ptr, "a pattern must be a string"))?;
        let ast = ecma::translate(p)
            .map_err(|m| self.err(ErrorKind::UnsupportedPattern, kw, ptr, format!("{p:?}: {m}")))?;
        let outer = std::mem::replace(&mut self.location, ptr.to_string());
        let checked = self.guarded("a pattern's translation", |c| {
            RegexBuilder::new()
                .mk(&ast)
                .map(drop)
                .map_err(|e| c.err(ErrorKind::UnsupportedPattern, kw, ptr, format!("{p:?}: {e}")))
        });
        self.location = outer;
        checked?;
        let width = lexer::repeat_width(&ast);
        if width > 1 {
            let site =
                crate::WidePattern { pointer: ptr.to_owned(), keyword: kw.to_owned(), width };
            self.wide_patterns.push(site);
        }
        Ok(ast)
    }

    /// The regex of a registered format (`Options::formats`), translated
    /// once per compilation.
    fn custom_format(&mut self, name: &str, ptr: &str) -> Result<Option<RegexAst>> {
        let Some(src) = self.options.formats.get(name) else { return Ok(None) };
        if let Some(rx) = self.custom_formats.get(name) {
            return Ok(Some(rx.clone()));
        }
        let whole = Value::String(format!("^(?:{src})$"));
        let rx = self.pattern("format", ptr, &whole).map_err(|e| {
            let msg =
                format!("the registered format {name:?} is not a valid regex: {}", e.message());
            self.err(ErrorKind::UnsupportedPattern, "format", ptr, msg)
        })?;
        self.custom_formats.insert(name.to_string(), rx.clone());
        Ok(Some(rx))
    }

    /// The regex a `format` adds to a string schema at `ptr`: a registered
    /// or built-in format's, or none for an unknown format, which is an
    /// annotation (a warning; an error with `Options::strict_formats`).
    pub(crate) fn format_regex(&mut self, name: &str, ptr: &str) -> Result<Option<RegexAst>> {
        if let Some(rx) = self.custom_format(name, ptr)? {
            return Ok(Some(rx));
        }
        if let Some(rx) = formats::lookup(name) {
            return Ok(Some(rx));
        }
        self.unknown_format(name, ptr)?;
        Ok(None)
    }

    /// The regex whose complement is the negation of `format` at `ptr`
    /// (under `not`, `oneOf`, `if`): the format's own regex when it is the
    /// format's whole language, a superset of it otherwise (so the
    /// negation is a subset of the true one: a stricter grammar), none for
    /// an unknown format (an annotation always holds, so its negation
    /// never does).
    pub(crate) fn format_complement(&mut self, name: &str, ptr: &str) -> Result<Option<RegexAst>> {
        if let Some(rx) = self.custom_format(name, ptr)? {
            return Ok(Some(rx));
        }
        if let Some(rx) = formats::lookup_superset(name) {
            return Ok(Some(rx));
        }
        self.unknown_format(name, ptr)?;
        Ok(None)
    }

    fn unknown_format(&mut self, name: &str, ptr: &str) -> Result<()> {
        if self.options.strict_formats {
            return Err(self.err(
                ErrorKind::UnknownFormat,
                "format",
                ptr,
                format!("unknown format {name:?}"),
            ));
        }
        self.warn("format", ptr, format!("unknown format {name:?} taken as an annotation"));
        Ok(())
    }
}

/// The most automaton states [`Compiler::regex_never_finite`] explores.
pub(crate) const MAX_FINITENESS_STATES: usize = 4_096;

/// [`Compiler::regex_never_finite`] on a built regex: explores the states
/// reachable from the start (one byte per alphabet class), keeps the live
/// ones (those that reach an accepting state), and looks for a live state
/// with no live successor.
fn never_finite(mut rx: Regex) -> bool {
    let mut reps: Vec<u8> = Vec::new();
    let mut class_seen = vec![false; 256];
    for b in 0..=255u8 {
        let c = rx.alpha().map(b);
        if !std::mem::replace(&mut class_seen[c], true) {
            reps.push(b);
        }
    }
    let start = rx.initial_state();
    if start.is_dead() {
        return false;
    }
    let mut index = std::collections::HashMap::new();
    let mut states = vec![start];
    let mut succ: Vec<Vec<usize>> = Vec::new();
    index.insert(start.as_usize(), 0usize);
    let mut i = 0;
    while i < states.len() {
        let mut out = Vec::new();
        for &b in &reps {
            let t = rx.transition(states[i], b);
            if t.is_dead() {
                continue;
            }
            let j = *index.entry(t.as_usize()).or_insert_with(|| {
                states.push(t);
                states.len() - 1
            });
            if states.len() > MAX_FINITENESS_STATES {
                return false;
            }
            out.push(j);
        }
        out.sort_unstable();
        out.dedup();
        succ.push(out);
        i += 1;
    }
    let n = states.len();
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, out) in succ.iter().enumerate() {
        for &j in out {
            pred[j].push(i);
        }
    }
    // Live: reaches an accepting state.
    let mut live = vec![false; n];
    let mut queue: Vec<usize> = (0..n).filter(|&i| rx.is_accepting(states[i])).collect();
    for &i in &queue {
        live[i] = true;
    }
    while let Some(j) = queue.pop() {
        for &i in &pred[j] {
            if !std::mem::replace(&mut live[i], true) {
                queue.push(i);
            }
        }
    }
    if !live[0] {
        return false;
    }
    // A live state whose successors are all dead ends the longest match
    // of its (then finite) language; every finite live state leads to one.
    // Without one, every live state reaches a cycle of live states.
    (0..n).all(|i| !live[i] || succ[i].iter().any(|&j| live[j]))
}
