//! Object keys: the key regex of a `propertyNames` schema, and the disjoint
//! regions (regexes over decoded keys) that `patternProperties` and
//! `additionalProperties` split the keys outside `properties` into.

use derivre::RegexAst;

use crate::build::Compiler;
use crate::error::{ErrorKind, Result};
use crate::ir::{Schema, any_key};

impl Compiler<'_> {
    /// The regex a key must match under a `propertyNames` schema; `None` if any key.
    pub(crate) fn key_regex(
        &mut self,
        s: &Schema,
        ptr: &str,
        depth: usize,
    ) -> Result<Option<RegexAst>> {
        self.tick(ptr, depth)?;
        Ok(match s {
            Schema::Any => None,
            Schema::String(st) => Some(crate::lower::string_content_regex(st, None)),
            Schema::AnyOf(bs) => {
                let mut alts = Vec::new();
                for b in bs {
                    match self.key_regex(b, ptr, depth + 1)? {
                        None => return Ok(None),
                        Some(r) => alts.push(r),
                    }
                }
                Some(RegexAst::Or(alts))
            }
            Schema::Ref(d) => {
                let s = self.resolve_def(*d, depth + 1)?;
                self.key_regex(&s, ptr, depth + 1)?
            }
            _ => Some(RegexAst::NoMatch),
        })
    }

    /// Splits the keys not in `properties` into disjoint regions.
    pub(crate) fn regions(
        &mut self,
        patterns: Vec<(RegexAst, Schema)>,
        additional: Schema,
        ptr: &str,
        depth: usize,
    ) -> Result<Vec<(RegexAst, Schema)>> {
        if patterns.is_empty() {
            return Ok(if additional.is_never() { vec![] } else { vec![(any_key(), additional)] });
        }
        let n = patterns.len();
        let mut disjoint = true;
        'outer: for i in 0..n {
            for j in i + 1..n {
                let both = RegexAst::And(vec![patterns[i].0.clone(), patterns[j].0.clone()]);
                if self.regex_is_empty(&both)? != Some(true) {
                    disjoint = false;
                    break 'outer;
                }
            }
        }
        let none = RegexAst::Not(Box::new(RegexAst::Or(
            patterns.iter().map(|(r, _)| r.clone()).collect(),
        )));
        let mut out = Vec::new();
        if disjoint {
            for (r, s) in patterns {
                if !s.is_never() {
                    out.push((r, s));
                }
            }
        } else {
            if n > 8 {
                return Err(self.err(
                    ErrorKind::LimitExceeded,
                    "patternProperties",
                    ptr,
                    "more than 8 overlapping patterns",
                ));
            }
            for mask in 1u32..(1 << n) {
                let mut parts = Vec::new();
                let mut s = Schema::Any;
                for (i, (r, ps)) in patterns.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        parts.push(r.clone());
                        s = self.intersect(s, ps.clone(), depth + 1)?;
                    } else {
                        parts.push(RegexAst::Not(Box::new(r.clone())));
                    }
                }
                let rx = RegexAst::And(parts);
                if s.is_never() || self.regex_is_empty(&rx)? == Some(true) {
                    continue;
                }
                out.push((rx, s));
            }
        }
        if !additional.is_never() {
            out.push((none, additional));
        }
        Ok(out)
    }
}
