//! Arrays: counting rules over positions, `contains` counts, and unique
//! items (permutation phrases with distinct members: named scalar values,
//! free schemas, or a completion search; see DESIGN.md, "uniqueItems").

use std::collections::{HashMap, VecDeque};

use derivre::RegexAst;

use super::{Distinct, Lowerer};
use crate::error::{ErrorKind, Result};
use crate::grammar::{NonterminalId, Symbol};
use crate::ir::{ArraySchema, DefId, NumberSchema, Schema};
use crate::number::Bound;

impl Lowerer<'_, '_> {
    pub(super) fn array(&mut self, a: &ArraySchema, depth: usize) -> Result<Option<Symbol>> {
        let mut max = a.max;
        if let Some(ptr) = a.unique.as_ref().filter(|_| max.is_none_or(|m| m > 1)) {
            if let Some(values) = self.distinct_items(a) {
                return self.array_of_distinct(a, &values, &[], depth);
            }
            if let Some((values, free)) = self.free_distinct_items(a) {
                return self.array_of_distinct(a, &values, &free, depth);
            }
            if let Some(array) = self.array_of_searched(a, depth)? {
                return Ok(array);
            }
            if self.c.options.lenient {
                self.c.warn("uniqueItems", ptr, "uniqueItems ignored");
            } else {
                return Err(self.c.err(
                    ErrorKind::Inexpressible,
                    "uniqueItems",
                    ptr,
                    "uniqueItems is not expressible beside several contains constraints, \
                     contains beside prefixItems, or minContains/maxContains above 4",
                ));
            }
        }
        let k = a.prefix.len();
        let mut prefix = Vec::with_capacity(k);
        for p in &a.prefix {
            let sym = self.lower(p, depth + 1)?;
            if sym.is_none() {
                max = Some(max.map_or(prefix.len(), |m| m.min(prefix.len())));
                break;
            }
            prefix.push(sym);
        }
        let items = if max.is_some_and(|m| m <= prefix.len()) {
            None
        } else {
            self.lower(&a.items, depth + 1)?
        };
        if items.is_none() {
            max = Some(max.map_or(prefix.len(), |m| m.min(prefix.len())));
        }
        if max.is_some_and(|m| m < a.min) {
            return Ok(None);
        }
        let k = prefix.len();
        let top = max.unwrap_or(k.max(a.min).max(1));
        if a.contains.is_empty() && a.contains_at_most.is_empty() {
            let mut ids = Vec::with_capacity(top + 1);
            for _ in 0..=top {
                ids.push(self.new_nt("array-rest".to_string())?);
            }
            for i in 0..=top {
                let mut alts = Vec::new();
                if i >= a.min {
                    alts.push(vec![Symbol::Lexeme(self.rbracket)]);
                }
                let el = if i < k { prefix[i] } else { items };
                let can_add = max.is_none_or(|m| i < m);
                if let (Some(el), true) = (el, can_add) {
                    let next = if max.is_some() { i + 1 } else { (i + 1).min(top) };
                    let mut alt = Vec::new();
                    if i > 0 {
                        alt.push(Symbol::Lexeme(self.comma));
                    }
                    alt.push(el);
                    alt.push(Symbol::Nonterminal(ids[next]));
                    alts.push(alt);
                }
                self.set_alts(ids[i], alts);
            }
            let nt = self.alt_nt(
                "array",
                vec![vec![Symbol::Lexeme(self.lbracket), Symbol::Nonterminal(ids[0])]],
            )?;
            return Ok(Some(Symbol::Nonterminal(nt)));
        }
        self.array_contains(a, &prefix, items, max, top, depth)
    }

    /// Arrays with `contains`: the state also counts, per constraint, the
    /// matching items seen (saturating at its minimum; an upper bound
    /// `maxContains` is a constraint of its own, whose count stops at the
    /// bound and whose non-matching items are written as its complement).
    fn array_contains(
        &mut self,
        a: &ArraySchema,
        prefix: &[Option<Symbol>],
        items: Option<Symbol>,
        max: Option<usize>,
        top: usize,
        depth: usize,
    ) -> Result<Option<Symbol>> {
        // (schema, its complement when bounded above, minimum, cap): a count
        // saturates at `cap`, which a bounded constraint never passes.
        let cons: Vec<(&Schema, Option<&Schema>, usize, usize)> = a
            .contains
            .iter()
            .map(|(s, n)| (s, None, *n, *n))
            .chain(a.contains_at_most.iter().map(|(s, not_s, m)| (s, Some(not_s), 0, *m)))
            .collect();
        let nc = cons.len();
        let states: usize = cons.iter().map(|c| c.3 + 1).product();
        if nc > 3 || states > 64 {
            return Err(self.c.err(
                ErrorKind::LimitExceeded,
                "contains",
                "",
                "too many or too large contains/minContains constraints on one array",
            ));
        }
        let k = prefix.len();
        // Element options per position class (prefix index, or `k` for items):
        // (value symbol, subset of constraints it satisfies).
        let mut opts: Vec<Vec<(Symbol, u32)>> = Vec::with_capacity(k + 1);
        for (i, plain) in prefix.iter().copied().chain([items]).enumerate() {
            let base = if i < k { a.prefix[i].clone() } else { (*a.items).clone() };
            let mut o = Vec::new();
            if let Some(p) = plain {
                let bounded = cons.iter().any(|c| c.1.is_some());
                if !bounded {
                    o.push((p, 0u32));
                }
                for mask in u32::from(!bounded)..(1 << nc) {
                    let mut v = base.clone();
                    for (t, (s, not_s, _, _)) in cons.iter().enumerate() {
                        if mask & (1 << t) != 0 {
                            v = self.c.intersect(v, (*s).clone(), depth + 1)?;
                        } else if let Some(not_s) = not_s {
                            v = self.c.intersect(v, (*not_s).clone(), depth + 1)?;
                        }
                    }
                    if let Some(sym) = self.lower(&v, depth + 1)? {
                        o.push((sym, mask));
                    }
                }
            }
            opts.push(o);
        }
        let bump = |counts: &[usize], mask: u32| -> Vec<usize> {
            counts
                .iter()
                .enumerate()
                .map(|(t, &c)| if mask & (1 << t) != 0 { (c + 1).min(cons[t].3) } else { c })
                .collect()
        };
        // An item matching a bounded constraint whose count is at its bound
        // would exceed it.
        let exceeds = |counts: &[usize], mask: u32| {
            cons.iter()
                .enumerate()
                .any(|(t, c)| c.1.is_some() && mask & (1 << t) != 0 && counts[t] >= c.3)
        };
        type Key = (usize, Vec<usize>);
        let mut ids: HashMap<Key, NonterminalId> = HashMap::new();
        let mut queue: VecDeque<Key> = VecDeque::new();
        let mut get =
            |l: &mut Self, key: Key, queue: &mut VecDeque<Key>| -> Result<NonterminalId> {
                if let Some(&id) = ids.get(&key) {
                    return Ok(id);
                }
                let id = l.new_nt("array-rest".to_string())?;
                ids.insert(key.clone(), id);
                queue.push_back(key);
                Ok(id)
            };
        let first = get(self, (0, vec![0; nc]), &mut queue)?;
        while let Some((i, counts)) = queue.pop_front() {
            let id = get(self, (i, counts.clone()), &mut queue)?;
            let mut alts = Vec::new();
            let done = counts.iter().zip(&cons).all(|(c, con)| *c >= con.2);
            if i >= a.min && done {
                alts.push(vec![Symbol::Lexeme(self.rbracket)]);
            }
            if max.is_none_or(|m| i < m) {
                let next_i = if max.is_some() { i + 1 } else { (i + 1).min(top.max(k)) };
                for &(sym, mask) in &opts[i.min(k)] {
                    if exceeds(&counts, mask) {
                        continue;
                    }
                    let next = get(self, (next_i, bump(&counts, mask)), &mut queue)?;
                    let mut alt = Vec::new();
                    if i > 0 {
                        alt.push(Symbol::Lexeme(self.comma));
                    }
                    alt.push(sym);
                    alt.push(Symbol::Nonterminal(next));
                    alts.push(alt);
                }
            }
            self.set_alts(id, alts);
        }
        let nt = self.alt_nt(
            "array",
            vec![vec![Symbol::Lexeme(self.lbracket), Symbol::Nonterminal(first)]],
        )?;
        Ok(Some(Symbol::Nonterminal(nt)))
    }
}

/// The members of a searched array's phrase: each a symbol and its name
/// (`None`: repeatable); the required names; the most items the members
/// allow (`None`: unbounded).
struct SearchedMembers {
    members: Vec<(Symbol, Option<u32>)>,
    required: Vec<u32>,
    cap: Option<usize>,
}

/// The largest `minContains` or `maxContains` beside `uniqueItems`: the
/// matching items are that many names of one phrase, whose states are the
/// sets of names used (at most `2^4` per count).
pub(crate) const MAX_UNIQUE_CONTAINS: usize = 4;

/// The integers of a free integer item: no fraction, no exponent.
pub(crate) const FREE_INT: &str = "-?(0|[1-9][0-9]*)";
/// The numbers of a free number item (less the zeros): no exponent.
const FREE_NUMBER: &str = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?";
/// Every spelling of zero without exponent.
const ZERO_NUMBER: &str = r"-?0(\.0+)?";

fn zero() -> crate::number::Decimal {
    integer(0)
}

fn integer(v: i64) -> crate::number::Decimal {
    crate::number::Decimal { neg: v < 0, int: v.unsigned_abs().to_string(), frac: String::new() }
}

/// The integers of a free integer item within its bounds, written without
/// fraction or exponent ([`FREE_INT`]).
fn free_integer(n: &NumberSchema) -> RegexAst {
    let mut parts = vec![RegexAst::Regex(FREE_INT.into())];
    parts.extend(n.min.iter().map(crate::number::ge));
    parts.extend(n.max.iter().map(crate::number::le));
    match parts.len() {
        1 => parts.pop().unwrap_or(RegexAst::NoMatch),
        _ => RegexAst::And(parts),
    }
}

/// Named values (each with the schema of that one value), and a rest.
type Split = (Vec<(Scalar, Schema)>, Option<Schema>);

/// The most values of a bounded integer item named one by one.
const MAX_NAMED_INTEGERS: i64 = 256;

/// The least (`lower`) or greatest integer within bound `b`; `None` past
/// `i64`.
fn integer_bound(b: &Bound, lower: bool) -> Option<i64> {
    let t: i64 = b.value.int.parse().ok()?;
    let v = if b.value.neg { -t } else { t };
    let fraction = !b.value.frac.is_empty();
    Some(match (lower, fraction) {
        // A fraction: the next integer inward; the value is never one.
        (true, true) => v + i64::from(!b.value.neg),
        (false, true) => v - i64::from(b.value.neg),
        (true, false) => v + i64::from(b.exclusive),
        (false, false) => v - i64::from(b.exclusive),
    })
}

/// A bounded integer item as named values and a free rest, so that the
/// values near zero, whose prefixes may be finished (after `0`, `-1`),
/// are each a name (at most once) and the rest can always grow: within
/// `[lo, hi]` every value is named (at most [`MAX_NAMED_INTEGERS`]); with
/// only `lo <= 0` the values `lo..=0` are named and the rest is `>= 1`;
/// with only `hi >= 0`, `0..=hi` and `<= -1`. A rest that stays bounded
/// away from zero is checked as free by the caller. `None` for other
/// number schemas (divisors, excluded values, fractions, unbounded).
fn split_integer(n: &NumberSchema) -> Option<Split> {
    if !n.integer
        || n.non_integer
        || !n.multiple_of.is_empty()
        || !n.not_multiple_of.is_empty()
        || !n.excluded.is_empty()
    {
        return None;
    }
    let lo = n.min.as_ref().map(|b| integer_bound(b, true));
    let hi = n.max.as_ref().map(|b| integer_bound(b, false));
    let named = |from: i64, to: i64| -> Vec<(Scalar, Schema)> {
        (from..=to)
            .map(|v| {
                let bound = Bound { value: integer(v), exclusive: false };
                let one = NumberSchema {
                    integer: true,
                    min: Some(bound.clone()),
                    max: Some(bound),
                    ..NumberSchema::default()
                };
                (Scalar::Number(integer(v)), Schema::Number(one))
            })
            .collect()
    };
    let rest = |min: Option<i64>, max: Option<i64>| {
        let bound = |v: i64| Bound { value: integer(v), exclusive: false };
        Schema::Number(NumberSchema {
            integer: true,
            min: min.map(bound),
            max: max.map(bound),
            ..NumberSchema::default()
        })
    };
    Some(match (lo, hi) {
        (Some(lo), Some(hi)) => {
            let (lo, hi) = (lo?, hi?);
            if hi < lo {
                (Vec::new(), None)
            } else if hi - lo < MAX_NAMED_INTEGERS {
                (named(lo, hi), None)
            } else {
                return None;
            }
        }
        (Some(lo), None) => match lo? {
            lo if lo >= 1 => (Vec::new(), Some(rest(Some(lo), None))),
            lo if -lo < MAX_NAMED_INTEGERS => (named(lo, 0), Some(rest(Some(1), None))),
            _ => return None,
        },
        (None, Some(hi)) => match hi? {
            hi if hi <= -1 => (Vec::new(), Some(rest(None, Some(hi)))),
            hi if hi < MAX_NAMED_INTEGERS => (named(0, hi), Some(rest(None, Some(-1)))),
            _ => return None,
        },
        (None, None) => return None,
    })
}

/// Zero, as the named value beside a free number (every spelling
/// without exponent: `0`, `-0.00`).
static ZERO: std::sync::LazyLock<Schema> = std::sync::LazyLock::new(|| {
    let bound = crate::number::Bound { value: zero(), exclusive: false };
    Schema::Number(crate::ir::NumberSchema {
        min: Some(bound.clone()),
        max: Some(bound),
        ..crate::ir::NumberSchema::default()
    })
});

/// A scalar JSON value, as the key of a value set (numbers in canonical
/// decimal form, so `1` and `1.0` are one value).
#[derive(PartialEq, Eq)]
enum Scalar {
    Null,
    Bool(bool),
    Number(crate::number::Decimal),
    String(String),
}

/// The values of a schema that allows finitely many scalar values, each
/// with the schema of that one value; `None` when the set is not that
/// (objects, arrays, open strings or ranges of numbers).
fn finite_scalars(s: &Schema) -> Option<Vec<(Scalar, Schema)>> {
    Some(match s {
        Schema::Never => Vec::new(),
        Schema::Null => vec![(Scalar::Null, Schema::Null)],
        Schema::Boolean(b) => [false, true]
            .into_iter()
            .filter(|v| b.is_none_or(|b| b == *v))
            .map(|v| (Scalar::Bool(v), Schema::Boolean(Some(v))))
            .collect(),
        Schema::String(st) => match st.regexes.as_slice() {
            [RegexAst::Literal(t)] => {
                let n = t.chars().count();
                let fits = st.min_len <= n && st.max_len.is_none_or(|m| n <= m);
                if fits { vec![(Scalar::String(t.clone()), s.clone())] } else { Vec::new() }
            }
            _ => return None,
        },
        Schema::Number(n) => match (&n.min, &n.max) {
            (Some(lo), Some(hi))
                if lo.value == hi.value
                    && !lo.exclusive
                    && !hi.exclusive
                    && (!n.integer || lo.value.frac.is_empty())
                    && (!n.non_integer || !lo.value.frac.is_empty())
                    && n.multiple_of.is_empty()
                    && n.not_multiple_of.is_empty()
                    && n.excluded.is_empty() =>
            {
                vec![(Scalar::Number(lo.value.clone()), s.clone())]
            }
            _ => return None,
        },
        Schema::AnyOf(bs) => {
            let mut out: Vec<(Scalar, Schema)> = Vec::new();
            for b in bs {
                for (v, sv) in finite_scalars(b)? {
                    if !out.iter().any(|(w, _)| *w == v) {
                        out.push((v, sv));
                    }
                }
            }
            out
        }
        _ => return None,
    })
}

impl Lowerer<'_, '_> {
    /// The item values of an array with `uniqueItems`, when they are
    /// finitely many scalars and every item takes them (no `prefixItems`,
    /// no `contains`).
    fn distinct_items(&mut self, a: &ArraySchema) -> Option<Vec<Schema>> {
        if !a.prefix.is_empty() || !a.contains.is_empty() || !a.contains_at_most.is_empty() {
            return None;
        }
        let items = self.through_refs(&a.items);
        Some(finite_scalars(&items)?.into_iter().map(|(_, s)| s).collect())
    }

    /// `s` with the references at its top and at its union's branches
    /// replaced by their definitions (compiled now if need be), so that an
    /// `enum` behind a `$ref` counts as finitely many values; a definition
    /// on the way or failing stays a reference.
    fn through_refs(&mut self, s: &Schema) -> Schema {
        let mut hops = 0;
        let mut s = s.clone();
        while let Schema::Ref(d) = s
            && hops < 16
            && !self.c.def_pending(d)
            && let Ok(next) = self.c.resolve_def(d, 0)
        {
            s = next;
            hops += 1;
        }
        match s {
            Schema::AnyOf(bs) if bs.iter().any(|b| matches!(b, Schema::Ref(_))) => {
                Schema::AnyOf(bs.iter().map(|b| self.through_refs(b)).collect())
            }
            s => s,
        }
    }

    /// The item schemas of an array with `uniqueItems` whose items are a
    /// union of finitely many scalar values and *free* schemas, when every
    /// item takes them (no `prefixItems`, no `contains`): the scalar values,
    /// and the free schemas.
    ///
    /// A schema is free when from every position inside an item that its
    /// last lexeme may go on from, infinitely many distinct values can
    /// still complete it: strings without maxLength (and no
    /// `max_string_length` cap) whose patterns and format leave no prefix
    /// with finitely many completions (decided on their automaton,
    /// [`regex_never_finite`](crate::build::Compiler::regex_never_finite)),
    /// integers without divisors or excluded values (nor a
    /// `max_number_length` cap) whose bounds let every prefix grow (the
    /// values near zero are named first, [`split_integer`]), open objects (without a
    /// `max_additional_properties` cap, which leaves a full object one
    /// completion), written without a fraction or exponent (`1.0`
    /// is refused there: a documented subset). Then the parser's
    /// check when an item completes (or when its last lexeme must end: the
    /// closing quote) keeps masks exact: a prefix of an item always has a
    /// completion that no earlier item equals. Numbers with exponents are
    /// not free (after `0e` every completion is zero), nor are bounded
    /// strings, numbers, objects and arrays (their completions may all be
    /// taken), which stay an error.
    fn free_distinct_items(&mut self, a: &ArraySchema) -> Option<(Vec<Schema>, Vec<Schema>)> {
        if !a.prefix.is_empty() || !a.contains.is_empty() || !a.contains_at_most.is_empty() {
            return None;
        }
        let branches = match self.through_refs(&a.items) {
            Schema::AnyOf(bs) => bs,
            Schema::Any => Schema::typed_any(),
            s => vec![s],
        };
        let (mut finite, mut free) = (Vec::new(), Vec::new());
        for b in branches {
            if finite_scalars(&b).is_none()
                && let Schema::Number(n) = &b
                && let Some((values, rest)) = split_integer(n)
            {
                finite.extend(values);
                match rest {
                    Some(r) if self.is_free(&r, &mut Vec::new()) => free.push(r),
                    Some(_) => return None,
                    None => {}
                }
                continue;
            }
            match finite_scalars(&b) {
                Some(values) => finite.extend(values),
                None if self.is_free(&b, &mut Vec::new()) => {
                    // A number without constraints: zero (all its
                    // spellings) is one named value, the others are free.
                    if let Schema::Number(n) = &b
                        && !n.integer
                    {
                        finite.push((Scalar::Number(zero()), ZERO.clone()));
                    }
                    free.push(b)
                }
                None => return None,
            }
        }
        let mut values: Vec<(Scalar, Schema)> = Vec::new();
        for (v, s) in finite {
            if !values.iter().any(|(w, _)| *w == v) {
                values.push((v, s));
            }
        }
        Some((values.into_iter().map(|(_, s)| s).collect(), free))
    }

    /// Whether `s` is free (see [`free_distinct_items`](Self::free_distinct_items)).
    fn is_free(&mut self, s: &Schema, seen: &mut Vec<DefId>) -> bool {
        match s {
            // Patterns and formats: free when no prefix of their matches
            // has finitely many completions (`^[a-z_]+$` is free,
            // `^[a-z]{3}$` and `^(0|[1-9][0-9]*)$` are not).
            Schema::String(st) => {
                st.max_len.is_none()
                    && self.c.options.max_string_length.is_none()
                    && (st.regexes.is_empty() || {
                        let content = crate::lower::string_content_regex(st, None);
                        self.c.regex_never_finite(&content).unwrap_or(false)
                    })
            }
            // Bounded integers too when every prefix can still grow:
            // `minimum: 1` is free, `minimum: 0` is not (after `0`), so
            // [`split_integer`] names the values up to zero first.
            Schema::Number(n) => {
                !n.non_integer
                    && self.c.options.max_number_length.is_none()
                    && n.multiple_of.is_empty()
                    && n.not_multiple_of.is_empty()
                    && n.excluded.is_empty()
                    && (n.min.is_none() && n.max.is_none()
                        || n.integer
                            && self.c.regex_never_finite(&free_integer(n)).unwrap_or(false))
            }
            // Containers that can always grow: inside one, whatever its
            // members so far, another item (or a member under a fresh key)
            // can still come before the closing `]`/`}`, which ends the item,
            // so infinitely many values remain.
            Schema::Array(x) => {
                x.max.is_none()
                    && x.unique.is_none()
                    && x.contains_at_most.is_empty()
                    && self.inhabited(&x.items, seen)
            }
            Schema::Object(o) => {
                self.c.options.max_additional_properties.is_none()
                    && self.c.options.max_key_length.is_none()
                    && o.max.is_none()
                    && o.regions.iter().any(|(k, v)| {
                        // A region of infinitely many keys (`^x-`) always
                        // has a fresh one.
                        (format!("{k:?}") == format!("{:?}", crate::ir::any_key())
                            || self.c.regex_never_finite(k).unwrap_or(false))
                            && self.inhabited(v, seen)
                    })
            }
            Schema::Ref(d) => self.through_def(*d, seen, |l, s, seen| l.is_free(s, seen)),
            _ => false,
        }
    }

    /// Whether `s` provably has a value (a sufficient test: what it cannot
    /// tell counts as empty, which only keeps `uniqueItems` an error).
    fn inhabited(&mut self, s: &Schema, seen: &mut Vec<DefId>) -> bool {
        match s {
            Schema::Any | Schema::Null | Schema::Boolean(_) => true,
            Schema::Number(n) => {
                !crate::intersect::number_is_empty(n)
                    && n.multiple_of.is_empty()
                    && n.not_multiple_of.is_empty()
            }
            Schema::String(st) => {
                st.regexes.is_empty() && st.max_len.is_none_or(|m| m >= st.min_len)
            }
            Schema::Array(x) => x.min == 0 && x.contains.is_empty(),
            Schema::Object(o) => o.required.is_empty() && o.min == 0 && o.witnesses.is_empty(),
            Schema::AnyOf(bs) => bs.iter().any(|b| self.inhabited(b, seen)),
            Schema::Ref(d) => self.through_def(*d, seen, |l, s, seen| l.inhabited(s, seen)),
            Schema::Never => false,
        }
    }

    /// `f` on the schema of definition `d` (compiled now if need be); false
    /// for a definition already on the way (`seen`) or one that fails.
    fn through_def(
        &mut self,
        d: DefId,
        seen: &mut Vec<DefId>,
        f: impl FnOnce(&mut Self, &Schema, &mut Vec<DefId>) -> bool,
    ) -> bool {
        if seen.contains(&d) || self.c.def_pending(d) {
            return false;
        }
        let Ok(s) = self.c.resolve_def(d, 0) else { return false };
        seen.push(d);
        let r = f(self, &s, seen);
        seen.pop();
        r
    }

    /// `[` v1 `,` v2 … `]` with distinct values among `values` and
    /// `free`: a permutation phrase with one member per value (each its
    /// own name, so at most once; every spelling of a value is that
    /// member) and one unnamed member per free schema; with free members
    /// the parser also checks that every item's JSON value differs from
    /// the earlier ones (`earley::Permutation::distinct`). Within
    /// `minItems`/`maxItems`.
    fn array_of_distinct(
        &mut self,
        a: &ArraySchema,
        values: &[Schema],
        free: &[Schema],
        depth: usize,
    ) -> Result<Option<Symbol>> {
        let mut members = Vec::with_capacity(values.len() + free.len());
        for (i, v) in values.iter().enumerate() {
            if let Some(sym) = self.lower(v, depth + 1)? {
                members.push((sym, Some(i as u32)));
            }
        }
        let named = members.len();
        for f in free {
            let sym = match f {
                // Without the zero fraction `1.0` allows (after `1.` every
                // completion is 1): a subset, so that the integer stays free.
                Schema::Number(n) if n.integer => {
                    Some(Symbol::Lexeme(self.lexeme("integer", free_integer(n))))
                }
                // Without exponents (after `0e` every completion is zero) and
                // without zero, a named value of its own: a subset again.
                Schema::Number(_) => {
                    let rx = RegexAst::And(vec![
                        RegexAst::Regex(FREE_NUMBER.into()),
                        RegexAst::Not(Box::new(RegexAst::Regex(ZERO_NUMBER.into()))),
                    ]);
                    Some(Symbol::Lexeme(self.lexeme("number", rx)))
                }
                _ => self.lower(f, depth + 1)?,
            };
            if let Some(sym) = sym {
                members.push((sym, None));
            }
        }
        let distinct = if members.len() > named { Distinct::Free } else { Distinct::No };
        if distinct == Distinct::No && a.min > members.len() {
            return Ok(None);
        }
        let brackets = (self.lbracket, self.rbracket);
        let bounds = (a.min, a.max);
        let array =
            self.bracketed_phrase("array", brackets, members, Vec::new(), bounds, distinct)?;
        Ok(Some(array))
    }

    /// `[` v1 `,` v2 … `]` with pairwise distinct items of any schema: one
    /// unnamed member for `items`, and with `prefixItems` one named member
    /// per position, in order ([`earley::Permutation::ordered`]); with one
    /// `contains` constraint instead, named slots for the matching items
    /// (see [`contains_members`](Self::contains_members)). Checked by the
    /// parser when an item completes, with a completion search after every
    /// byte inside the array ([`earley::Permutation::search`]), which keeps
    /// masks exact where an item may leave only earlier items to complete
    /// it (a bounded string, a closed object). Numbers inside the items
    /// take one spelling per value (no exponent, no trailing zero in a
    /// fraction: a documented subset), so that the search meets finitely
    /// many spellings of each value. `None` when the array has more than
    /// one `contains` constraint, one beside `prefixItems`, or one whose
    /// count passes [`MAX_UNIQUE_CONTAINS`].
    fn array_of_searched(
        &mut self,
        a: &ArraySchema,
        depth: usize,
    ) -> Result<Option<Option<Symbol>>> {
        let constraints = a.contains.len() + a.contains_at_most.len();
        if constraints > 1 || (constraints == 1 && !a.prefix.is_empty()) {
            return Ok(None);
        }
        let outer = std::mem::replace(&mut self.canonical, true);
        let lowered = if constraints == 1 {
            self.contains_members(a, depth)
        } else {
            self.searched_members(a, depth).map(Some)
        };
        self.canonical = outer;
        let Some(SearchedMembers { members, required, cap }) = lowered? else { return Ok(None) };
        let max = match (a.max, cap) {
            (Some(m), Some(c)) => Some(m.min(c)),
            (m, c) => m.or(c),
        };
        if max.is_some_and(|m| m < a.min.max(required.len())) {
            return Ok(Some(None));
        }
        let brackets = (self.lbracket, self.rbracket);
        let bounds = (a.min, max);
        let mode = if a.prefix.is_empty() { Distinct::Searched } else { Distinct::SearchedInOrder };
        let array = self.bracketed_phrase("array", brackets, members, required, bounds, mode)?;
        Ok(Some(Some(array)))
    }

    /// The members of a searched array with one `contains` constraint on
    /// `S` (no `prefixItems`): at least `n` matching items are `n`
    /// required names, each a slot for an item of `items ∧ S`, and an
    /// unnamed member for any item; at most `m` are `m` optional names of
    /// `items ∧ S` and an unnamed member of `items ∧ ¬S`. Names cost phrase
    /// states (a set of names per count), so `n` and `m` stop at
    /// [`MAX_UNIQUE_CONTAINS`] (`None` past it). Returns the members, the
    /// required names and the most items (`None`: unbounded).
    fn contains_members(
        &mut self,
        a: &ArraySchema,
        depth: usize,
    ) -> Result<Option<SearchedMembers>> {
        let (s, not_s, n) = match (a.contains.first(), a.contains_at_most.first()) {
            (Some((s, n)), None) => (s, None, *n),
            (None, Some((s, not_s, m))) => (s, Some(not_s), *m),
            _ => return Ok(None),
        };
        if n > MAX_UNIQUE_CONTAINS {
            return Ok(None);
        }
        let matching = self.c.intersect((*a.items).clone(), s.clone(), depth + 1)?;
        let matching = self.lower(&matching, depth + 1)?;
        let rest = match not_s {
            None => self.lower(&a.items, depth + 1)?,
            Some(not_s) => {
                let rest = self.c.intersect((*a.items).clone(), not_s.clone(), depth + 1)?;
                self.lower(&rest, depth + 1)?
            }
        };
        let mut members = Vec::with_capacity(n + 1);
        if let Some(sym) = matching {
            members.extend((0..n as u32).map(|i| (sym, Some(i))));
        }
        // At least `n`: every name is required.
        let required: Vec<u32> = if not_s.is_none() { (0..n as u32).collect() } else { Vec::new() };
        if matching.is_none() && !required.is_empty() {
            // No item can match, yet some must: the array cannot be (its
            // cap is below its required names).
            return Ok(Some(SearchedMembers { members: Vec::new(), required, cap: Some(0) }));
        }
        let cap = match rest {
            Some(sym) => {
                members.push((sym, None));
                None
            }
            None => Some(members.len()),
        };
        Ok(Some(SearchedMembers { members, required, cap }))
    }

    /// The members of [`array_of_searched`](Self::array_of_searched): the
    /// `prefixItems` named by position up to the first that has no value,
    /// then `items` unnamed; and the most items that allows (`None`:
    /// unbounded).
    fn searched_members(&mut self, a: &ArraySchema, depth: usize) -> Result<SearchedMembers> {
        let mut members = Vec::with_capacity(a.prefix.len() + 1);
        for (i, p) in a.prefix.iter().enumerate() {
            match self.lower(p, depth + 1)? {
                Some(sym) => members.push((sym, Some(i as u32))),
                None => return Ok(SearchedMembers { members, required: Vec::new(), cap: Some(i) }),
            }
        }
        match self.lower(&a.items, depth + 1)? {
            Some(sym) => members.push((sym, None)),
            None => {
                let cap = Some(a.prefix.len());
                return Ok(SearchedMembers { members, required: Vec::new(), cap });
            }
        }
        Ok(SearchedMembers { members, required: Vec::new(), cap: None })
    }
}
