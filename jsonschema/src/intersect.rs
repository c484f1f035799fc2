//! Intersection of normalized schemas (`allOf`, sibling keywords, `$ref` siblings).

use std::sync::Arc;

use derivre::RegexAst;

use crate::build::Compiler;
use crate::error::{ErrorKind, Result};
use crate::ir::{ArraySchema, NumberSchema, ObjectSchema, Schema, StringSchema};
use crate::number::Bound;

fn tighter_min(a: Option<Bound>, b: Option<Bound>) -> Option<Bound> {
    match (a, b) {
        (Some(a), Some(b)) => {
            Some(if a.value > b.value || (a.value == b.value && a.exclusive) { a } else { b })
        }
        (a, b) => a.or(b),
    }
}

fn tighter_max(a: Option<Bound>, b: Option<Bound>) -> Option<Bound> {
    match (a, b) {
        (Some(a), Some(b)) => {
            Some(if a.value < b.value || (a.value == b.value && a.exclusive) { a } else { b })
        }
        (a, b) => a.or(b),
    }
}

fn min_opt(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

pub(crate) fn number_is_empty(n: &NumberSchema) -> bool {
    if n.integer && n.non_integer {
        return true;
    }
    match (&n.min, &n.max) {
        (Some(lo), Some(hi)) => {
            lo.value > hi.value || (lo.value == hi.value && (lo.exclusive || hi.exclusive))
        }
        _ => false,
    }
}

impl Compiler<'_> {
    /// The intersection of two schemas.
    pub(crate) fn intersect(&mut self, a: Schema, b: Schema, depth: usize) -> Result<Schema> {
        self.tick("", depth)?;
        Ok(match (a, b) {
            (Schema::Never, _) | (_, Schema::Never) => Schema::Never,
            (Schema::Any, x) | (x, Schema::Any) => x,
            (Schema::Ref(d), Schema::Ref(e)) if d == e => Schema::Ref(d),
            // Keep the left operand on the left: property order follows it.
            // A definition still being compiled (recursion) meets `x` in a
            // definition of its own, computed when first used (after it):
            // recursion stays recursion.
            (Schema::Ref(d), x) if self.def_pending(d) => self.defer_meet(d, x, true)?,
            (x, Schema::Ref(d)) if self.def_pending(d) => self.defer_meet(d, x, false)?,
            (Schema::Ref(d), x) => self.meet_def(d, x, true, depth)?,
            (x, Schema::Ref(d)) => self.meet_def(d, x, false, depth)?,
            (Schema::AnyOf(xs), y) => {
                let mut out = Vec::with_capacity(xs.len());
                for x in xs {
                    let yc = self.charged_clone(&y)?;
                    let r = self.intersect(x, yc, depth + 1)?;
                    if !r.is_never() {
                        out.push(r);
                    }
                }
                self.check_branches(out.len())?;
                Schema::any_of(out)
            }
            (y, Schema::AnyOf(xs)) => {
                let mut out = Vec::with_capacity(xs.len());
                for x in xs {
                    let yc = self.charged_clone(&y)?;
                    let r = self.intersect(yc, x, depth + 1)?;
                    if !r.is_never() {
                        out.push(r);
                    }
                }
                self.check_branches(out.len())?;
                Schema::any_of(out)
            }
            (Schema::Null, Schema::Null) => Schema::Null,
            (Schema::Boolean(a), Schema::Boolean(b)) => match (a, b) {
                (Some(x), Some(y)) if x != y => Schema::Never,
                (a, b) => Schema::Boolean(a.or(b)),
            },
            (Schema::Number(a), Schema::Number(b)) => {
                let mut multiple_of = a.multiple_of;
                for m in b.multiple_of {
                    if !multiple_of.contains(&m) {
                        multiple_of.push(m);
                    }
                }
                let mut excluded = a.excluded;
                excluded.extend(b.excluded);
                let mut not_multiple_of = a.not_multiple_of;
                not_multiple_of.extend(b.not_multiple_of);
                let n = NumberSchema {
                    integer: a.integer || b.integer,
                    non_integer: a.non_integer || b.non_integer,
                    min: tighter_min(a.min, b.min),
                    max: tighter_max(a.max, b.max),
                    multiple_of,
                    not_multiple_of,
                    excluded,
                };
                if number_is_empty(&n) { Schema::Never } else { Schema::Number(n) }
            }
            (Schema::String(a), Schema::String(b)) => {
                let mut regexes = a.regexes;
                regexes.extend(b.regexes);
                self.check_string_regexes(&regexes)?;
                let s = StringSchema {
                    min_len: a.min_len.max(b.min_len),
                    max_len: min_opt(a.max_len, b.max_len),
                    regexes,
                };
                if s.max_len.is_some_and(|m| m < s.min_len) {
                    Schema::Never
                } else {
                    Schema::String(s)
                }
            }
            (Schema::Array(a), Schema::Array(b)) => {
                self.intersect_arrays(Arc::unwrap_or_clone(a), Arc::unwrap_or_clone(b), depth)?
            }
            (Schema::Object(a), Schema::Object(b)) => {
                self.intersect_objects(Arc::unwrap_or_clone(a), Arc::unwrap_or_clone(b), depth)?
            }
            _ => Schema::Never,
        })
    }

    fn intersect_arrays(&mut self, a: ArraySchema, b: ArraySchema, depth: usize) -> Result<Schema> {
        let n = a.prefix.len().max(b.prefix.len());
        let mut prefix = Vec::with_capacity(n);
        for i in 0..n {
            let x = self.charged_clone(a.prefix.get(i).unwrap_or(&a.items))?;
            let y = self.charged_clone(b.prefix.get(i).unwrap_or(&b.items))?;
            prefix.push(self.intersect(x, y, depth + 1)?);
        }
        let items = self.intersect(*a.items, *b.items, depth + 1)?;
        let mut contains = a.contains;
        contains.extend(b.contains);
        let mut contains_at_most = a.contains_at_most;
        contains_at_most.extend(b.contains_at_most);
        let mut evaluated_contains = a.evaluated_contains;
        evaluated_contains.extend(b.evaluated_contains);
        Ok(normalize_array(ArraySchema {
            contains,
            contains_at_most,
            evaluated: a.evaluated.max(b.evaluated),
            evaluated_contains,
            prefix,
            items: Box::new(items),
            min: a.min.max(b.min),
            max: min_opt(a.max, b.max),
            unique: a.unique.or(b.unique),
        }))
    }

    /// The schema a key takes in `o` (property, region, or `Never`).
    pub(crate) fn key_schema(&mut self, o: &ObjectSchema, key: &str) -> Result<Schema> {
        if let Some((_, s)) = o.properties.iter().find(|(k, _)| k == key) {
            return self.charged_clone(s);
        }
        for (rx, s) in &o.regions {
            if self.regex_matches(rx, key)? {
                return self.charged_clone(s);
            }
        }
        Ok(Schema::Never)
    }

    fn intersect_objects(
        &mut self,
        a: ObjectSchema,
        b: ObjectSchema,
        depth: usize,
    ) -> Result<Schema> {
        let mut names: Vec<String> = a.properties.iter().map(|(k, _)| k.clone()).collect();
        for (k, _) in &b.properties {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
        let mut properties = Vec::with_capacity(names.len());
        for k in names {
            let x = self.key_schema(&a, &k)?;
            let y = self.key_schema(&b, &k)?;
            let s = self.intersect(x, y, depth + 1)?;
            properties.push((k, s));
        }
        let mut regions = Vec::new();
        for (ra, sa) in &a.regions {
            for (rb, sb) in &b.regions {
                let rx = and_keys(ra, rb);
                if self.regex_is_empty(&rx)? == Some(true) {
                    continue;
                }
                let (sa, sb) = (self.charged_clone(sa)?, self.charged_clone(sb)?);
                let s = self.intersect(sa, sb, depth + 1)?;
                if !s.is_never() {
                    regions.push((rx, s));
                }
            }
        }
        self.check_branches(regions.len())?;
        let mut required = a.required;
        for k in b.required {
            if !required.contains(&k) {
                required.push(k);
            }
        }
        let mut witnesses = a.witnesses;
        witnesses.extend(b.witnesses);
        Ok(normalize_object(ObjectSchema {
            evaluated: crate::unevaluated::union_keys(a.evaluated, b.evaluated),
            properties,
            regions,
            required,
            min: a.min.max(b.min),
            max: min_opt(a.max, b.max),
            witnesses,
        }))
    }

    /// The regex-count limit on one string's regexes, checked before any
    /// derivre work on their intersection.
    pub(crate) fn check_string_regexes(&self, regexes: &[RegexAst]) -> Result<()> {
        let n = crate::cache::costly_regexes(regexes);
        let max = self.options.limits.max_string_regexes;
        if n > max {
            return Err(self.err(
                ErrorKind::LimitExceeded,
                "",
                &self.location,
                format!(
                    "a string must match {n} regexes (patterns, formats, negations) at once, \
                     more than {max} (Limits::max_string_regexes)"
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn check_branches(&self, n: usize) -> Result<()> {
        if n > self.options.limits.max_branches {
            return Err(self.err(
                ErrorKind::LimitExceeded,
                "",
                "",
                format!("a union grew to {n} branches"),
            ));
        }
        Ok(())
    }
}

/// The intersection of two key regexes, without the growth of nesting one
/// `And` in another at every intersection: `(?s:.*)` is the identity,
/// conjunctions are flattened and a conjunct already there is left out
/// (an `allOf` of 5,000 objects used to nest 5,000 `And`s and run derivre
/// on each).
pub(crate) fn and_keys(a: &RegexAst, b: &RegexAst) -> RegexAst {
    let is_any = |r: &RegexAst| matches!(r, RegexAst::Regex(x) if x == "(?s:.*)");
    if is_any(a) {
        return b.clone();
    }
    if is_any(b) {
        return a.clone();
    }
    let mut parts: Vec<RegexAst> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for r in [a, b] {
        let xs = match r {
            RegexAst::And(xs) => xs.as_slice(),
            r => std::slice::from_ref(r),
        };
        for x in xs {
            let mut k = String::new();
            crate::cache::write_key(x, &mut k);
            if !keys.contains(&k) {
                keys.push(k);
                parts.push(x.clone());
            }
        }
    }
    if parts.len() == 1 { parts.pop().unwrap_or(RegexAst::NoMatch) } else { RegexAst::And(parts) }
}

/// Detects the obviously empty arrays.
pub(crate) fn normalize_array(mut a: ArraySchema) -> Schema {
    if let Some(i) = a.prefix.iter().position(Schema::is_never) {
        a.max = Some(a.max.map_or(i, |m| m.min(i)));
    }
    if a.items.is_never() {
        let p = a.prefix.len();
        a.max = Some(a.max.map_or(p, |m| m.min(p)));
    }
    if a.max.is_some_and(|m| m < a.min) {
        return Schema::Never;
    }
    Schema::Array(Arc::new(a))
}

/// Detects the obviously empty objects.
pub(crate) fn normalize_object(o: ObjectSchema) -> Schema {
    if o.max.is_some_and(|m| m < o.min) || o.max.is_some_and(|m| m < o.required.len()) {
        return Schema::Never;
    }
    for r in &o.required {
        if let Some((_, s)) = o.properties.iter().find(|(k, _)| k == r)
            && s.is_never()
        {
            return Schema::Never;
        }
    }
    Schema::Object(Arc::new(o))
}
