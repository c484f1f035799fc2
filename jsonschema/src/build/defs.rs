//! Definitions: `$ref` targets compiled once, and the intersections and
//! complements that recursion turns into definitions of their own.
//!
//! Intersecting with a recursive definition, or negating one, unfolds its
//! body, and the body meets the definition again one value further in.
//! Unfolded naively that never ends (it used to stop at
//! `Limits::max_depth`). Instead:
//! - an intersection `d ∩ x` with a recursive `d` is a definition of its
//!   own, computed when first used (one per distinct pair), so the
//!   unfolding takes one step at a time and meets the pair again as a
//!   reference: the product of the two recursions;
//! - the complement of a `$ref` target is registered while it unfolds, and
//!   meeting it again inside refers to a definition that receives the
//!   result. A repeat is accepted only inside an array item or object
//!   member of the first occurrence (`Compiler::level` rose in between),
//!   so every cycle of the new rules consumes part of the value; a repeat
//!   at the same level (recursion through `allOf`/`anyOf` alone) is an
//!   error: the least fixed point of such rules is not the complement.

pub(super) struct Def {
    pointer: String,
    schema: Option<Schema>,
    in_progress: bool,
    /// A definition made by an intersection: `(d, x, d_first)` stands for
    /// `d ∩ x` (`x ∩ d` when not `d_first`, which keeps property order),
    /// made while `d` was still being compiled (a recursive `$ref` under
    /// `allOf` or beside other keywords) or because `d` is recursive, and
    /// computed when first used (then taken).
    meet: Option<(DefId, Schema, bool)>,
    /// Whether the definition refers to itself (known once compiled).
    recursive: Option<bool>,
}

/// The message of the depth limit.
pub(super) const NESTED: &str = "schema nested too deeply";

/// The message of an intersection with a recursive definition that cannot
/// be written as a finite grammar.
const RECURSIVE_MEET: &str =
    "a recursive $ref combined with other keywords whose intersection unfolds without end";

/// The message of a recursion that comes back without entering a value.
const UNGUARDED: &str =
    "a recursive $ref that reaches itself without entering an array item or object member";

/// The most definitions made by intersections with recursive definitions
/// and complements of them (each distinct pair or target once).
const MAX_MEETS: usize = 10_000;

use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value};

use super::Compiler;
use crate::error::{ErrorKind, Result};
use crate::ir::{DefId, Schema};

/// A 128-bit digest of a schema (two hashes with different seeds over its
/// whole structure, see `Hash for Schema`): the key of an intersection
/// without keeping a copy of its schema, which for a large schema met by
/// many recursive definitions took gigabytes. Two different schemas share
/// a digest with probability about `2^-128` per pair.
///
/// It was a hash of the schema's `Debug` text once: formatting cost half
/// the compile time of the schemas that meet recursive definitions, and
/// derivre's `Debug` of a regex stops after 512 characters, so two meets
/// differing only deep inside a regex (a long `enum` under `not`) shared a
/// key and one took the other's grammar.
pub(crate) type Digest = (u64, u64);

fn digest(x: &Schema) -> Digest {
    /// Both hashers fed in one walk of the schema.
    struct Two(DefaultHasher, DefaultHasher);
    impl Hasher for Two {
        fn write(&mut self, bytes: &[u8]) {
            self.0.write(bytes);
            self.1.write(bytes);
        }
        fn finish(&self) -> u64 {
            self.0.finish()
        }
    }
    let mut h = Two(DefaultHasher::new(), DefaultHasher::new());
    h.1.write_u64(0x9e37_79b9_7f4a_7c15);
    x.hash(&mut h);
    (h.0.finish(), h.1.finish())
}

impl Compiler<'_> {
    pub(super) fn def_for(&mut self, pointer: &str) -> DefId {
        if let Some(&d) = self.def_by_ptr.get(pointer) {
            return d;
        }
        let d = self.defs.len();
        let def = Def {
            pointer: pointer.to_string(),
            schema: None,
            in_progress: false,
            meet: None,
            recursive: None,
        };
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
        // Digesting `x` reads all of it: charged as a copy.
        let room = self.copy_room();
        self.charge(x.size_up_to(room))?;
        let key = (d, digest(&x), d_first);
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
            recursive: None,
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
        if self.defs[d].schema.is_some() {
            // A copy, charged as one.
            let room = self.copy_room();
            let n = self.defs[d].schema.as_ref().map_or(0, |s| s.size_up_to(room));
            self.charge(n)?;
            return Ok(self.defs[d].schema.clone().unwrap_or(Schema::Never));
        }
        let ptr = self.defs[d].pointer.clone();
        if self.defs[d].in_progress {
            return Err(self.err(ErrorKind::Inexpressible, "$ref", &ptr, RECURSIVE_MEET));
        }
        self.defs[d].in_progress = true;
        // An intersection's other side is needed once: taken, not copied
        // (a large schema met by many recursive definitions is kept only
        // until its meet is computed).
        let meet = self.defs[d].meet.take();
        let was_meet = meet.is_some();
        let r = match meet {
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
        // A failed meet stays pending: resolving it again is an error, never
        // the base's schema.
        self.defs[d].in_progress = was_meet && r.is_err();
        let s = r?;
        self.defs[d].schema = Some(s.clone());
        Ok(s)
    }

    /// Whether definition `d` (compiled) can reach itself through `$ref`s.
    /// A definition not yet compiled on the way counts as reaching it, so
    /// the answer errs towards the memoized unfolding, which is only slower.
    pub(crate) fn def_recursive(&mut self, d: DefId) -> bool {
        if let Some(r) = self.defs[d].recursive {
            return r;
        }
        let Some(s) = &self.defs[d].schema else { return true };
        let mut seen = std::collections::HashSet::new();
        let mut todo = s.refs();
        let mut r = false;
        while let Some(e) = todo.pop() {
            if e == d {
                r = true;
                break;
            }
            if !seen.insert(e) {
                continue;
            }
            match &self.defs[e].schema {
                Some(s) => todo.extend(s.refs()),
                None => {
                    r = true;
                    break;
                }
            }
        }
        self.defs[d].recursive = Some(r);
        r
    }

    /// `d ∩ x` (`x ∩ d` when not `d_first`) for a definition `d` not being
    /// compiled: its body meets `x` at once, unless `d` is recursive; then
    /// the pair is a definition computed when first used, so that the
    /// unfolding stops where it meets the pair again (the product of the
    /// two recursions, each pair of rules once, however deep the values).
    pub(crate) fn meet_def(
        &mut self,
        d: DefId,
        x: Schema,
        d_first: bool,
        depth: usize,
    ) -> Result<Schema> {
        if self.defs[d].schema.is_none() {
            // Compiled first, so that its recursion is known.
            self.resolve_def(d, depth + 1)?;
        }
        if self.def_recursive(d) {
            return self.defer_meet(d, x, d_first);
        }
        let s = self.resolve_def(d, depth + 1)?;
        if d_first { self.intersect(s, x, depth + 1) } else { self.intersect(x, s, depth + 1) }
    }

    /// The complement of the schema at `target` (a `$ref` target, whose
    /// value is `v`), a definition of its own when it recurses.
    pub(crate) fn complement_target(
        &mut self,
        v: &Value,
        target: &str,
        depth: usize,
    ) -> Result<Schema> {
        if let Some(&e) = self.complements.get(target) {
            return Ok(Schema::Ref(e));
        }
        if let Some((at, made)) = self.complementing.get(target).copied() {
            if at == self.level {
                return Err(self.err(ErrorKind::Inexpressible, "$ref", target, UNGUARDED));
            }
            let e = match made {
                Some(e) => e,
                None => {
                    let d = self.def_for(target);
                    let e = self.new_cycle_def(d)?;
                    self.complementing.insert(target.to_string(), (at, Some(e)));
                    e
                }
            };
            return Ok(Schema::Ref(e));
        }
        self.complementing.insert(target.to_string(), (self.level, None));
        let r = self.complement(v, target, depth);
        let made = self.complementing.remove(target).and_then(|(_, made)| made);
        let s = r?;
        // Kept for the next negation of the same target (another `oneOf`
        // branch, another `not`), which refers to it instead of copying.
        let e = match made {
            Some(e) => e,
            None => {
                let d = self.def_for(target);
                self.push_def(d)
            }
        };
        self.finish_cycle_def(e, &s);
        self.complements.insert(target.to_string(), e);
        Ok(s)
    }

    /// A definition for an unfolding that met itself: pending until
    /// [`finish_cycle_def`](Self::finish_cycle_def) gives it the result
    /// (left pending if the unfolding fails, so nothing can use it).
    fn new_cycle_def(&mut self, d: DefId) -> Result<DefId> {
        let pointer = self.defs[d].pointer.clone();
        self.cycle_defs += 1;
        if self.meets.len() + self.cycle_defs >= MAX_MEETS {
            return Err(self.err(
                ErrorKind::LimitExceeded,
                "$ref",
                &pointer,
                "too many intersections with recursive definitions",
            ));
        }
        Ok(self.push_def(d))
    }

    /// A new definition at the pointer of `d`, pending until it has a schema.
    fn push_def(&mut self, d: DefId) -> DefId {
        let pointer = self.defs[d].pointer.clone();
        self.defs.push(Def {
            pointer,
            schema: None,
            in_progress: true,
            meet: None,
            recursive: None,
        });
        self.defs.len() - 1
    }

    fn finish_cycle_def(&mut self, e: DefId, s: &Schema) {
        self.defs[e].schema = Some(s.clone());
        self.defs[e].in_progress = false;
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
