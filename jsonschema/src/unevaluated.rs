//! `unevaluatedProperties` and `unevaluatedItems`.
//!
//! Every object (array) branch of a normalized schema records which keys
//! (leading items, `contains` matches) the keywords of its schema object and
//! of its in-place applicators evaluate ([`ObjectSchema::evaluated`],
//! [`ArraySchema::evaluated`]): intersection unions them, as `allOf` does
//! with annotations; a union keeps them per branch; a complement has none,
//! as `not` drops annotations. After the other keywords of a schema object,
//! its `unevaluatedProperties` schema constrains the keys outside its
//! branch's evaluated set, and then every key counts as evaluated.
//!
//! Per branch is exact for `oneOf`, `if`/`then`/`else` and `allOf`. When
//! several `anyOf` branches hold at once, the spec collects the annotations
//! of all of them while a branch here only knows its own, so the grammar may
//! reject an instance whose keys are evaluated by different branches: a
//! stricter grammar, never a looser one.

use std::sync::Arc;

use derivre::RegexAst;
use serde_json::{Map, Value};

use crate::build::{Compiler, in_draft};
use crate::error::Result;
use crate::ir::{ArraySchema, ObjectSchema, Schema, any_key};

/// The union of two sets of evaluated keys.
pub(crate) fn union_keys(a: RegexAst, b: RegexAst) -> RegexAst {
    let is_any = |r: &RegexAst| matches!(r, RegexAst::Regex(x) if x == "(?s:.*)");
    match (a, b) {
        (RegexAst::NoMatch, x) | (x, RegexAst::NoMatch) => x,
        (a, _) if is_any(&a) => a,
        (_, b) if is_any(&b) => b,
        (RegexAst::Or(mut xs), RegexAst::Or(ys)) => {
            xs.extend(ys);
            RegexAst::Or(xs)
        }
        (RegexAst::Or(mut xs), y) | (y, RegexAst::Or(mut xs)) => {
            xs.push(y);
            RegexAst::Or(xs)
        }
        (a, b) => RegexAst::Or(vec![a, b]),
    }
}

/// Whether a document uses either keyword anywhere (otherwise the evaluated
/// sets are never read, and complements need not clear them).
pub(crate) fn uses_unevaluated(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, v)| {
            k == "unevaluatedProperties" || k == "unevaluatedItems" || uses_unevaluated(v)
        }),
        Value::Array(a) => a.iter().any(uses_unevaluated),
        _ => false,
    }
}

impl Compiler<'_> {
    /// Applies the `unevaluatedProperties` and `unevaluatedItems` of the
    /// schema object `m` (at `ptr`) to `acc`, the intersection of its other
    /// keywords.
    pub(crate) fn apply_unevaluated(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        mut acc: Schema,
        depth: usize,
    ) -> Result<Schema> {
        for (kw, objects) in [("unevaluatedItems", false), ("unevaluatedProperties", true)] {
            let Some(v) = m.get(kw).filter(|_| in_draft(kw, self.index.draft)) else { continue };
            let u = self.compile_value(v, &format!("{ptr}/{kw}"), depth + 1)?;
            acc = self.constrain_unevaluated(acc, &u, objects, depth + 1)?;
        }
        Ok(acc)
    }

    fn constrain_unevaluated(
        &mut self,
        s: Schema,
        u: &Schema,
        objects: bool,
        depth: usize,
    ) -> Result<Schema> {
        self.tick("", depth)?;
        Ok(match s {
            Schema::AnyOf(bs) => {
                let mut out = Vec::with_capacity(bs.len());
                for b in bs {
                    out.push(self.constrain_unevaluated(b, u, objects, depth + 1)?);
                }
                Schema::any_of(out)
            }
            Schema::Any => {
                let bs = Schema::AnyOf(Schema::typed_any());
                self.constrain_unevaluated(bs, u, objects, depth + 1)?
            }
            Schema::Ref(d) => {
                let s = self.resolve_def(d, depth + 1)?;
                self.constrain_unevaluated(s, u, objects, depth + 1)?
            }
            Schema::Object(o) if objects => {
                let ev = o.evaluated.clone();
                if matches!(&ev, RegexAst::Regex(x) if x == "(?s:.*)") {
                    return Ok(Schema::Object(o));
                }
                let mut regions = Vec::new();
                if !matches!(ev, RegexAst::NoMatch) {
                    regions.push((ev.clone(), Schema::Any));
                }
                if !u.is_never() {
                    let rest = match ev {
                        RegexAst::NoMatch => any_key(),
                        ev => RegexAst::Not(Box::new(ev)),
                    };
                    regions.push((rest, u.clone()));
                }
                let c = ObjectSchema { regions, evaluated: any_key(), ..ObjectSchema::default() };
                self.intersect(Schema::Object(o), Schema::Object(Arc::new(c)), depth + 1)?
            }
            Schema::Array(a) if !objects => {
                if a.evaluated == usize::MAX {
                    return Ok(Schema::Array(a));
                }
                let mut later = vec![u.clone()];
                later.extend(a.evaluated_contains.iter().cloned());
                let c = ArraySchema {
                    prefix: vec![Schema::Any; a.evaluated],
                    items: Box::new(Schema::any_of(later)),
                    evaluated: usize::MAX,
                    ..ArraySchema::default()
                };
                self.intersect(Schema::Array(a), Schema::Array(Arc::new(c)), depth + 1)?
            }
            s => s,
        })
    }

    /// `s` with nothing evaluated at its top level (a complement's result:
    /// `not` drops annotations). A `$ref` is inlined when the document uses
    /// the unevaluated keywords, so that its definition's sets are cleared too.
    pub(crate) fn clear_evaluated(&mut self, s: Schema, depth: usize) -> Result<Schema> {
        if !self.uses_unevaluated {
            return Ok(s);
        }
        self.tick("", depth)?;
        Ok(match s {
            Schema::AnyOf(bs) => {
                let mut out = Vec::with_capacity(bs.len());
                for b in bs {
                    out.push(self.clear_evaluated(b, depth + 1)?);
                }
                Schema::any_of(out)
            }
            Schema::Ref(d) => {
                let s = self.resolve_def(d, depth + 1)?;
                self.clear_evaluated(s, depth + 1)?
            }
            Schema::Object(o) => Schema::Object(Arc::new(ObjectSchema {
                evaluated: RegexAst::NoMatch,
                ..Arc::unwrap_or_clone(o)
            })),
            Schema::Array(a) => Schema::Array(Arc::new(ArraySchema {
                evaluated: 0,
                evaluated_contains: Vec::new(),
                ..Arc::unwrap_or_clone(a)
            })),
            s => s,
        })
    }
}
