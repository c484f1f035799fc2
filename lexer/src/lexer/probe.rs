//! Probes: regular expressions asked about a lexer state ("does every word of
//! this probe continue the lexeme in progress?"), the question the slicer
//! asks before it skips a slice of the vocabulary.
//!
//! A probe is parsed once with `regex-syntax` ([`ProbeRegex`]) and translated
//! node by node into derivre expressions: into a private expression set for
//! matching token bytes ([`ProbeMatcher`]), and into a lexer's own set
//! ([`Lexer::add_probe`]) so that derivre can compare it with the lexer's
//! derivatives. One translation serves both, so the words a matcher accepts
//! are exactly the words of the probe the lexer reasons about.

use derivre::ExprRef;
use derivre::raw::{DerivCache, ExprSet, RelevanceCache};
use regex_syntax::hir::{Class, Hir, HirKind};
use regex_syntax::utf8::Utf8Sequences;
use rustc_hash::FxHashMap;

use super::{Lexer, StateId};
use crate::error::LexerErrorKind;
use crate::spec::LexemeId;

/// Words per derivre byte set (256 bits in `u32` words).
const SET_WORDS: usize = 8;

/// A regular expression for probing lexer states; see [`Lexer::add_probe`].
///
/// Syntax: the `regex` crate's (Unicode classes match whole UTF-8
/// characters), anchored at both ends; look-around assertions (`^`, `$`,
/// `\b`) are refused.
#[derive(Clone, Debug)]
pub struct ProbeRegex {
    pattern: String,
    hir: Hir,
}

/// Why a probe pattern was refused: it does not parse, or it uses a feature
/// probes do not support.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeError {
    pattern: String,
    message: String,
}

impl ProbeError {
    /// The refused pattern.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// What is wrong with it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid probe regex /{}/: {}", self.pattern, self.message)
    }
}

impl std::error::Error for ProbeError {}

impl ProbeRegex {
    /// Parses `pattern`.
    ///
    /// # Errors
    /// A syntax error, or a look-around assertion.
    pub fn new(pattern: &str) -> Result<ProbeRegex, ProbeError> {
        let err = |message: String| ProbeError { pattern: pattern.to_string(), message };
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(pattern)
            .map_err(|e| err(e.to_string()))?;
        if has_look(&hir) {
            return Err(err("look-around assertions (^, $, \\b) are not supported".into()));
        }
        Ok(ProbeRegex { pattern: pattern.to_string(), hir })
    }

    /// The pattern as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether every word of `self` is a word of `other`: `Some(answer)`,
    /// or `None` when `fuel` (derivre relevance steps) runs out.
    pub fn is_subset_of(&self, other: &ProbeRegex, fuel: u64) -> Option<bool> {
        let mut exprs = ExprSet::new(256);
        let memo = &mut ClassMemo::default();
        let a = translate(&mut exprs, &self.hir, &mut Vec::new(), memo);
        let b = translate(&mut exprs, &other.hir, &mut Vec::new(), memo);
        let not_b = exprs.mk_not(b);
        let diff = exprs.mk_and(&mut vec![a, not_b]);
        let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            RelevanceCache::new().is_non_empty_limited(&mut exprs, diff, fuel)
        }));
        match step {
            Ok(Ok(non_empty)) => Some(!non_empty),
            _ => None,
        }
    }

    /// A matcher for whole byte strings (token bytes).
    pub fn matcher(&self) -> ProbeMatcher {
        let mut exprs = ExprSet::new(256);
        let root = translate(&mut exprs, &self.hir, &mut Vec::new(), &mut ClassMemo::default());
        ProbeMatcher { exprs, deriv: DerivCache::new(), root }
    }
}

/// Matches whole byte strings against one [`ProbeRegex`] (derivatives with
/// a cache: O(bytes) look-ups once warm).
#[derive(Clone)]
pub struct ProbeMatcher {
    exprs: ExprSet,
    deriv: DerivCache,
    root: ExprRef,
}

impl std::fmt::Debug for ProbeMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeMatcher").field("exprs", &self.exprs.len()).finish()
    }
}

impl ProbeMatcher {
    /// Whether the probe matches all of `bytes`. A fault inside derivre
    /// counts as no match (callers use "no match" as the safe answer).
    pub fn is_match(&mut self, bytes: &[u8]) -> bool {
        let mut e = self.root;
        for &b in bytes {
            let (exprs, deriv) = (&mut self.exprs, &mut self.deriv);
            let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                deriv.derivative(exprs, e, b)
            }));
            match step {
                Ok(d) if d != ExprRef::NO_MATCH => e = d,
                _ => return false,
            }
        }
        self.exprs.is_nullable(e)
    }
}

/// One byte of each class of the partition of all bytes by (lexer class,
/// set of `ranges` holding the byte), the first in byte order.
///
/// Membership changes only at a range's ends, so the bytes are cut into at
/// most `2 * ranges.len() + 1` runs; runs with equal memberships share a
/// probe class, computed once per run instead of once per byte.
/// `lexer_class` numbers classes below 256 (a partition of the bytes has at
/// most 256 classes).
fn class_reps(ranges: &[(u8, u8)], lexer_class: impl Fn(u8) -> usize) -> Vec<u8> {
    // Equal ranges give equal memberships (a Unicode class repeats the
    // continuation-byte range in most of its UTF-8 sequences).
    let mut unique = ranges.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let ranges = &unique[..];
    let mut cuts = vec![false; 257];
    for &(lo, hi) in ranges {
        cuts[lo as usize] = true;
        cuts[hi as usize + 1] = true;
    }
    // The probe class of each run's bytes, numbered by first appearance.
    let mut memberships: FxHashMap<Vec<bool>, u32> = FxHashMap::default();
    let mut probe_class = [0u32; 256];
    let mut current = 0;
    for b in 0..=255u8 {
        if b == 0 || cuts[b as usize] {
            let inside: Vec<bool> = ranges.iter().map(|&(lo, hi)| lo <= b && b <= hi).collect();
            let n = memberships.len() as u32;
            current = *memberships.entry(inside).or_insert(n);
        }
        probe_class[b as usize] = current;
    }
    // The (lexer class, probe class) pairs seen: per probe class, a
    // 256-bit set of lexer classes (there are at most 256 of those).
    let mut seen = vec![[0u64; 4]; memberships.len()];
    (0..=255u8)
        .filter(|&b| {
            let c = lexer_class(b);
            debug_assert!(c < 256, "a byte class id is below 256");
            let c = c % 256;
            let row = &mut seen[probe_class[b as usize] as usize];
            let bit = 1u64 << (c % 64);
            let new = row[c / 64] & bit == 0;
            row[c / 64] |= bit;
            new
        })
        .collect()
}

/// The id of a probe added to one lexer (and to the lexers cloned from it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ProbeId(u32);

/// A lexer's probes and its cache of containment answers.
#[derive(Clone, Debug, Default)]
pub(super) struct Probes {
    /// `(pattern, expression in the lexer's set)`, indexed by [`ProbeId`].
    exprs: Vec<(String, ExprRef)>,
    /// Per probe, one byte of each class of the partition that refines both
    /// the lexer's byte classes and the probe's byte sets: bytes of one
    /// class have the same derivatives in the probe and in every lexeme.
    reps: Vec<Vec<u8>>,
    /// (probe derivative, lexeme derivative) pairs from which every prefix
    /// of every word of the probe keeps the lexeme alive: the pairs of
    /// successful explorations (each reached pair was checked with all its
    /// successors), so that later explorations stop there.
    proven_pairs: rustc_hash::FxHashSet<(ExprRef, ExprRef)>,
    /// `(dense state index, probe)` to the answer of
    /// [`Lexer::state_contains_prefixes`]; answers never change, since
    /// states and expressions are immutable once interned.
    answers: FxHashMap<(u32, u32), Option<bool>>,
    /// The Unicode classes translated into the lexer's set so far.
    classes: ClassMemo,
}

impl Lexer {
    /// Adds `probe` to this lexer's expression set (once: adding the same
    /// pattern again returns the same id). The lexers cloned from this one
    /// afterwards know the probe too.
    pub fn add_probe(&mut self, probe: &ProbeRegex) -> ProbeId {
        if let Some(i) = self.probes.exprs.iter().position(|(p, _)| *p == probe.pattern) {
            return ProbeId(i as u32);
        }
        let mut ranges = Vec::new();
        let e = translate(&mut self.exprs, &probe.hir, &mut ranges, &mut self.probes.classes);
        self.probes.exprs.push((probe.pattern.clone(), e));
        let reps = class_reps(&ranges, |b| self.classes.class(b));
        self.probes.reps.push(reps);
        ProbeId(self.probes.exprs.len() as u32 - 1)
    }

    /// The live (lexeme name, derivative) pairs of `state`, the derivatives
    /// printed by derivre (for diagnostics; at most `max_len` characters
    /// each).
    pub fn describe_state(&self, state: StateId, max_len: usize) -> Vec<(String, String)> {
        self.pairs_of(self.state_index(state))
            .chunks_exact(2)
            .map(|p| {
                let name = self.lexemes[p[0] as usize].name.clone();
                (name, self.exprs.expr_to_string_max_len(ExprRef::new(p[1]), max_len))
            })
            .collect()
    }

    /// Whether every word of `probe` continues the lexeme in progress in
    /// `state`, byte by byte, without ending it: for each word `w` and each
    /// non-empty prefix `u` of `w`, [`next_bytes`](Lexer::next_bytes)`(state,
    /// u)` is alive and is not a lazy end. A parser in `state` then accepts
    /// every byte string the probe matches.
    ///
    /// `Some(true)`: proven (some greedy lexeme of `state` has every word of
    /// the probe among the prefixes of its derivative, and no lazy lexeme is
    /// alive). `Some(false)`: not proven (derivre's containment check is
    /// incomplete: a `false` is not a disproof). `None`: not proven because
    /// `fuel` (units of derivre's relevance search, per lexeme) ran out or
    /// the expression set is near [`LexerLimits::max_exprs`](crate::LexerLimits).
    /// Answers are cached per (state, probe); a fuel failure is cached too.
    ///
    /// # Panics
    /// When `probe` comes from another lexer with fewer probes.
    pub fn state_contains_prefixes(
        &mut self,
        state: StateId,
        probe: ProbeId,
        fuel: u64,
    ) -> Option<bool> {
        let small = self.probes.exprs[probe.0 as usize].1;
        let key = (self.state_index(state) as u32, probe.0);
        if let Some(&a) = self.probes.answers.get(&key) {
            return a;
        }
        let answer = self.contains_uncached(state, small, probe.0 as usize, fuel);
        self.probes.answers.insert(key, answer);
        answer
    }

    fn contains_uncached(
        &mut self,
        state: StateId,
        small: ExprRef,
        probe: usize,
        fuel: u64,
    ) -> Option<bool> {
        if state.is_dead() || small == ExprRef::NO_MATCH || self.error.is_some() {
            return Some(false);
        }
        let pairs = self.pairs_of(self.state_index(state)).to_vec();
        // A live lazy lexeme could end at a prefix of a word: not proven.
        if pairs.chunks_exact(2).any(|p| self.lexemes[p[0] as usize].lazy) {
            return Some(false);
        }
        let mut out_of_fuel = false;
        for p in pairs.chunks_exact(2) {
            // The check adds expressions; keep well clear of the limit so
            // that probing never makes the lexer fail where it would not.
            if self.exprs.len() - self.base_exprs > self.limits.max_exprs / 2 {
                return None;
            }
            let big = ExprRef::new(p[1]);
            let (exprs, deriv, relevance) = (&mut self.exprs, &mut self.deriv, &mut self.relevance);
            let (reps, proven) = (&self.probes.reps[probe], &mut self.probes.proven_pairs);
            let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // derivre's check first (cheap, shape-based); when it finds
                // no proof, explore the pairs of derivatives.
                match relevance
                    .is_contained_in_prefixes(exprs, deriv, small, big, fuel, true)
                    .map_err(|_| ())
                {
                    // Only intersections (JSON keys other than the known
                    // names) are worth exploring: derivre answers repeats,
                    // and exploring a lexeme that changes state on every
                    // byte (`maxLength`) cost 15 ms a mask (DESIGN.md).
                    Ok(false) if is_and(exprs, big) => {
                        explore(exprs, deriv, relevance, (small, big), reps, proven, fuel)
                    }
                    // Concatenations and alternatives (unanchored patterns,
                    // `C* "lit" C* "`): derivre's check on their parts.
                    Ok(false) => by_parts(exprs, deriv, relevance, small, big, fuel, 0),
                    r => r,
                }
            }));
            match step {
                Ok(Ok(true)) => return Some(true),
                Ok(Ok(false)) => {}
                Ok(Err(_)) => out_of_fuel = true,
                Err(_) => {
                    // derivre's set may be inconsistent after a fault: stop
                    // the lexer, as a fault in a transition does.
                    let lexeme = LexemeId(p[0]);
                    let name = self.lexemes[lexeme.index()].name.clone();
                    self.set_error(LexerErrorKind::EngineFault { lexeme, name });
                    return None;
                }
            }
        }
        if out_of_fuel { None } else { Some(false) }
    }
}

/// The most (probe derivative, lexeme derivative) pairs one exploration
/// visits before giving up ("not proven").
const MAX_PAIRS: usize = 256;

/// Whether every non-empty prefix `u` of every word of `small` leaves
/// `big`'s derivative by `u` non-empty, by exploring the pairs
/// `(small_u, big_u)` depth first over one byte per class (`reps`),
/// stopping at pairs already `proven` (and adding its own on success).
/// `Ok(false)`: some prefix kills `big` (or the pairs exceeded
/// [`MAX_PAIRS`]: not proven either way); `Err`: an emptiness check ran out
/// of fuel.
///
/// Sound because every prefix of a word of `small` is reached (a byte whose
/// probe derivative is `NO_MATCH` starts no word, and bytes of one class have
/// equal derivatives on both sides), and each reached `big_u` is checked.
fn explore(
    exprs: &mut ExprSet,
    deriv: &mut DerivCache,
    relevance: &mut RelevanceCache,
    start: (ExprRef, ExprRef),
    reps: &[u8],
    proven: &mut rustc_hash::FxHashSet<(ExprRef, ExprRef)>,
    fuel: u64,
) -> Result<bool, ()> {
    if proven.contains(&start) {
        return Ok(true);
    }
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![start];
    seen.insert(start);
    // One budget for the whole exploration: a tenth of `fuel` derivre cost
    // units (expression nodes built and visited). A failed exploration is
    // paid again at every new state (each byte of a known key makes one);
    // at the full `fuel` the worst masks took 90 ms on MaskBench.
    let cost_limit = exprs.cost().saturating_add(fuel / 10);
    while let Some((r, d)) = stack.pop() {
        for &b in reps {
            let r2 = deriv.derivative(exprs, r, b);
            if r2 == ExprRef::NO_MATCH {
                continue;
            }
            let d2 = deriv.derivative(exprs, d, b);
            if d2 == ExprRef::NO_MATCH {
                return Ok(false);
            }
            if !exprs.is_positive(d2)
                && !relevance.is_non_empty_limited(exprs, d2, fuel).map_err(|_| ())?
            {
                return Ok(false);
            }
            if exprs.cost() > cost_limit {
                return Ok(false);
            }
            if !proven.contains(&(r2, d2)) && seen.insert((r2, d2)) {
                if seen.len() > MAX_PAIRS {
                    return Ok(false);
                }
                stack.push((r2, d2));
            }
        }
    }
    proven.extend(seen);
    Ok(true)
}

/// How deep [`by_parts`] descends into concatenations and alternatives.
const MAX_PARTS_DEPTH: usize = 12;

/// Whether every word of `small` is a prefix of a word of `big`, by the
/// structure of `big` down to parts derivre's check reads (sound, not
/// complete; `Ok(false)` is "not proven"):
///
/// - `big = A·B` with `B` non-empty: the prefixes of words of `A` are
///   prefixes of words of `big`, so a proof for `A` is one for `big`; and
///   when `A` is nullable, a proof for `B` is one too (`ε·b = b`).
/// - `big = A | B | …`: a proof for one alternative.
/// - otherwise derivre's shape-based check on the part.
///
/// This proves a JSON string with an unanchored pattern, `C* "lit" C* "`
/// after the opening quote: `C*` is a repeat of the string characters.
fn by_parts(
    exprs: &mut ExprSet,
    deriv: &mut DerivCache,
    relevance: &mut RelevanceCache,
    small: ExprRef,
    big: ExprRef,
    fuel: u64,
    depth: usize,
) -> Result<bool, ()> {
    if depth > MAX_PARTS_DEPTH {
        return Ok(false);
    }
    let tag = format!("{:?}", exprs.get_tag(big));
    let parts: Vec<ExprRef> = exprs.get(big).args().to_vec();
    match (tag.as_str(), parts.as_slice()) {
        ("Concat", &[a, b]) => {
            let b_live = exprs.is_positive(b)
                || relevance.is_non_empty_limited(exprs, b, fuel).map_err(|_| ())?;
            if b_live && by_parts(exprs, deriv, relevance, small, a, fuel, depth + 1)? {
                return Ok(true);
            }
            if exprs.is_nullable(a) {
                return by_parts(exprs, deriv, relevance, small, b, fuel, depth + 1);
            }
            Ok(false)
        }
        ("Or", alts) => {
            for &alt in alts.iter().take(16) {
                if by_parts(exprs, deriv, relevance, small, alt, fuel, depth + 1)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        // The whole expression was asked already.
        _ if depth == 0 => Ok(false),
        _ => {
            relevance.is_contained_in_prefixes(exprs, deriv, small, big, fuel, true).map_err(|_| ())
        }
    }
}

/// Whether `e` is an intersection. derivre does not export its tag type,
/// so the tag is compared by name.
fn is_and(exprs: &ExprSet, e: ExprRef) -> bool {
    format!("{:?}", exprs.get_tag(e)) == "And"
}

fn has_look(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Look(_) => true,
        HirKind::Repetition(r) => has_look(&r.sub),
        HirKind::Capture(c) => has_look(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().any(has_look),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => false,
    }
}

fn byte_set(exprs: &mut ExprSet, lo: u8, hi: u8, ranges: &mut Vec<(u8, u8)>) -> ExprRef {
    ranges.push((lo, hi));
    let mut set = [0u32; SET_WORDS];
    for b in lo..=hi {
        set[b as usize / 32] |= 1 << (b % 32);
    }
    exprs.mk_byte_set(&set)
}

/// The derivre expression of `h` in `exprs` (recursion bounded by
/// regex-syntax's nesting limit); every byte range it tests is pushed on
/// `ranges`.
/// Translated Unicode classes (by their ranges), with the byte ranges they
/// test: a lexer's probes share their character class (the JSON string
/// slices differ in the count only), and translating one costs tens of
/// microseconds (derivre simplifies the union of its UTF-8 sequences).
pub(super) type ClassMemo = FxHashMap<Vec<(char, char)>, (ExprRef, Vec<(u8, u8)>)>;

fn translate(
    exprs: &mut ExprSet,
    h: &Hir,
    ranges: &mut Vec<(u8, u8)>,
    memo: &mut ClassMemo,
) -> ExprRef {
    match h.kind() {
        HirKind::Empty => ExprRef::EMPTY_STRING,
        // Refused by `ProbeRegex::new`; never reached.
        HirKind::Look(_) => ExprRef::NO_MATCH,
        HirKind::Literal(lit) => {
            ranges.extend(lit.0.iter().map(|&b| (b, b)));
            exprs.mk_byte_literal(&lit.0)
        }
        HirKind::Class(Class::Bytes(c)) => {
            let mut set = [0u32; SET_WORDS];
            for r in c.ranges() {
                ranges.push((r.start(), r.end()));
                for b in r.start()..=r.end() {
                    set[b as usize / 32] |= 1 << (b % 32);
                }
            }
            exprs.mk_byte_set(&set)
        }
        HirKind::Class(Class::Unicode(c)) => {
            let key: Vec<(char, char)> = c.ranges().iter().map(|r| (r.start(), r.end())).collect();
            if let Some((e, tested)) = memo.get(&key) {
                ranges.extend_from_slice(tested);
                return *e;
            }
            let (mut alts, mut tested) = (Vec::new(), Vec::new());
            for r in c.ranges() {
                for seq in Utf8Sequences::new(r.start(), r.end()) {
                    let parts: Vec<ExprRef> = seq
                        .as_slice()
                        .iter()
                        .map(|br| byte_set(exprs, br.start, br.end, &mut tested))
                        .collect();
                    alts.push(exprs.mk_concat_vec(&parts));
                }
            }
            let e = exprs.mk_or(&mut alts);
            ranges.extend_from_slice(&tested);
            memo.insert(key, (e, tested));
            e
        }
        HirKind::Repetition(r) => {
            let e = translate(exprs, &r.sub, ranges, memo);
            exprs.mk_repeat(e, r.min, r.max.unwrap_or(u32::MAX))
        }
        HirKind::Capture(c) => translate(exprs, &c.sub, ranges, memo),
        HirKind::Concat(v) => {
            let parts: Vec<ExprRef> = v.iter().map(|x| translate(exprs, x, ranges, memo)).collect();
            exprs.mk_concat_vec(&parts)
        }
        HirKind::Alternation(v) => {
            let mut alts: Vec<ExprRef> =
                v.iter().map(|x| translate(exprs, x, ranges, memo)).collect();
            exprs.mk_or(&mut alts)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::class_reps;

    /// The byte-by-byte definition: a byte is a representative when no
    /// earlier byte has its lexer class and its range memberships.
    fn naive(ranges: &[(u8, u8)], lexer_class: impl Fn(u8) -> usize) -> Vec<u8> {
        let mut seen = std::collections::HashSet::new();
        (0..=255u8)
            .filter(|&b| {
                let inside: Vec<bool> = ranges.iter().map(|&(lo, hi)| lo <= b && b <= hi).collect();
                seen.insert((lexer_class(b), inside))
            })
            .collect()
    }

    #[test]
    fn runs_give_the_representatives_of_bytes() {
        // A small linear congruential generator: seeded, no dependency.
        let mut x = 0x2545_f491_u32;
        let mut next = move || {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 16) as u8
        };
        for case in 0..500 {
            let n = case % 7;
            let ranges: Vec<(u8, u8)> = (0..n)
                .map(|_| {
                    let (a, b) = (next(), next());
                    (a.min(b), a.max(b))
                })
                .collect();
            let modulus = 1 + (case % 5) as u8;
            let class = |b: u8| (b % modulus) as usize + usize::from(b > 127);
            assert_eq!(class_reps(&ranges, class), naive(&ranges, class), "{ranges:?}");
        }
        let repeated = [(0x80, 0xBF), (0xC2, 0xDF), (0x80, 0xBF), (0x80, 0xBF), (0x20, 0x21)];
        let class = |b: u8| usize::from(b > 0x9F);
        assert_eq!(class_reps(&repeated, class), naive(&repeated, class));
        assert_eq!(class_reps(&[(0, 255)], |_| 0), [0]);
        assert_eq!(class_reps(&[], |_| 0), [0]);
    }
}
