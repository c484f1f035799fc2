//! Definitions: `$ref` targets compiled once, and the intersections made
//! with definitions still being compiled (recursion stays recursion).

pub(super) struct Def {
    pointer: String,
    schema: Option<Schema>,
    in_progress: bool,
    /// A definition made by an intersection: `(d, x, d_first)` stands for
    /// `d ∩ x` (`x ∩ d` when not `d_first`, which keeps property order),
    /// made while `d` was still being compiled (a recursive `$ref` under
    /// `allOf` or beside other keywords) and computed when first used.
    meet: Option<(DefId, Schema, bool)>,
}

/// The message of the depth limit.
pub(super) const NESTED: &str = "schema nested too deeply";

/// The message of an intersection with a recursive definition that cannot
/// be written as a finite grammar.
const RECURSIVE_MEET: &str =
    "a recursive $ref combined with other keywords whose intersection unfolds without end";

/// The most definitions made by intersections with definitions being
/// compiled (each distinct pair once).
const MAX_MEETS: usize = 1_000;

use serde_json::{Map, Value};

use super::Compiler;
use crate::error::{ErrorKind, Result};
use crate::ir::{DefId, Schema};

impl Compiler<'_> {
    pub(super) fn def_for(&mut self, pointer: &str) -> DefId {
        if let Some(&d) = self.def_by_ptr.get(pointer) {
            return d;
        }
        let d = self.defs.len();
        let def =
            Def { pointer: pointer.to_string(), schema: None, in_progress: false, meet: None };
        self.defs.push(def);
        self.def_by_ptr.insert(pointer.to_string(), d);
        d
    }

    /// Whether definition `d` cannot be resolved now: it, or the
    /// definition an intersection made it from, is being compiled.
    pub(crate) fn def_pending(&self, d: DefId) -> bool {
        let def = &self.defs[d];
        def.in_progress || def.meet.as_ref().is_some_and(|(base, _, _)| self.def_pending(*base))
    }

    /// `Ref(d) ∩ x` (or `x ∩ Ref(d)`) while `d` is being compiled: a
    /// definition of its own, computed when first used (after `d`), so
    /// that recursion through `d` stays recursion. One per distinct pair.
    pub(crate) fn defer_meet(&mut self, d: DefId, x: Schema, d_first: bool) -> Result<Schema> {
        let key = (d, format!("{x:?}"), d_first);
        if let Some(&e) = self.meets.get(&key) {
            return Ok(Schema::Ref(e));
        }
        let pointer = self.defs[d].pointer.clone();
        if self.meets.len() >= MAX_MEETS {
            return Err(self.err(
                ErrorKind::LimitExceeded,
                "$ref",
                &pointer,
                "too many intersections with recursive definitions",
            ));
        }
        let e = self.defs.len();
        self.defs.push(Def {
            pointer,
            schema: None,
            in_progress: false,
            meet: Some((d, x, d_first)),
        });
        self.meets.insert(key, e);
        Ok(Schema::Ref(e))
    }

    /// The JSON pointer of a definition.
    pub(crate) fn def_pointer(&self, d: DefId) -> &str {
        &self.defs[d].pointer
    }

    /// The compiled schema of a definition, compiling it on first use.
    pub(crate) fn resolve_def(&mut self, d: DefId, depth: usize) -> Result<Schema> {
        if let Some(s) = &self.defs[d].schema {
            return Ok(s.clone());
        }
        let ptr = self.defs[d].pointer.clone();
        if self.defs[d].in_progress {
            return Err(self.err(ErrorKind::Inexpressible, "$ref", &ptr, RECURSIVE_MEET));
        }
        self.defs[d].in_progress = true;
        let r = match self.defs[d].meet.clone() {
            Some((base, x, first)) => {
                // The base itself (an error if it is still being
                // compiled), not `Ref(base)`, which would defer again.
                let s = self.resolve_def(base, depth + 1)?;
                let (a, b) = if first { (s, x) } else { (x, s) };
                // An intersection whose two sides recurse in step (a
                // recursive definition against a schema whose own
                // recursion mirrors it) unfolds without end: the depth
                // limit stops it, reported as what it is.
                self.intersect(a, b, depth + 1).map_err(|e| {
                    if *e.kind() == ErrorKind::LimitExceeded && e.message() == NESTED {
                        self.err(ErrorKind::Inexpressible, "$ref", &ptr, RECURSIVE_MEET)
                    } else {
                        e
                    }
                })
            }
            None => {
                let v = self.index.get(self.doc, &ptr).unwrap_or(&Value::Bool(true));
                self.compile_value(v, &ptr, depth + 1)
            }
        };
        self.defs[d].in_progress = false;
        let s = r?;
        self.defs[d].schema = Some(s.clone());
        Ok(s)
    }

    /// The definition `$ref` (or `$dynamicRef`, resolved statically) names.
    pub(super) fn ref_target(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        kw: &str,
    ) -> Result<Option<DefId>> {
        let Some(r) = m.get(kw) else { return Ok(None) };
        let r = r.as_str().ok_or_else(|| self.invalid(kw, ptr, "must be a string"))?;
        let unresolved = |c: &Self| {
            let why = c.index.resolve(c.doc, ptr, r).err().unwrap_or_default();
            c.err(ErrorKind::UnresolvedRef, kw, ptr, format!("cannot resolve {r:?}: {why}"))
        };
        let target = if kw == "$dynamicRef" {
            self.index.resolve_dynamic(self.doc, ptr, r).map_err(|()| {
                let msg = format!("{r:?} resolves through the dynamic scope (several anchors)");
                self.err(ErrorKind::UnsupportedKeyword, kw, ptr, msg)
            })?
        } else {
            self.index.resolve(self.doc, ptr, r).ok()
        };
        let target = target.ok_or_else(|| unresolved(self))?;
        Ok(Some(self.def_for(&target)))
    }
}
