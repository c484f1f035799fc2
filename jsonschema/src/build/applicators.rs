//! `oneOf` (disjointness proofs and complements), `if`/`then`/`else` and
//! the dependency keywords.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Compiler, ptr_join};
use crate::error::{ErrorKind, Result};
use crate::ir::{DefId, ObjectSchema, Schema};

impl<'a> Compiler<'a> {
    /// `ctx ∧ oneOf(val)`, where `val` is the `oneOf` array of the schema
    /// object at `ptr`: `oneOf(ctx ∧ B_i)`, since a value of `ctx` matches
    /// exactly one `B_i` exactly when it matches exactly one `ctx ∧ B_i`.
    /// Meeting the context first lets the disjointness proofs use it: the
    /// branches of JSON Patch's operation differ only by an `op` constant
    /// that the context requires, and without it each branch took the
    /// complements of the five others (`Github_medium---o89003`: 5.4 ms to
    /// compile, llguidance 1.9 ms to its first mask).
    pub(super) fn one_of_in(
        &mut self,
        ctx: Schema,
        val: &Value,
        ptr: &str,
        depth: usize,
    ) -> Result<Schema> {
        let kptr = ptr_join(ptr, "oneOf");
        let items = self.schema_array("oneOf", ptr, val)?;
        let mut bs = Vec::new();
        let with_ctx = !matches!(ctx, Schema::Any);
        for (i, item) in items.iter().enumerate() {
            let b = self.compile_value(item, &format!("{kptr}/{i}"), depth + 1)?;
            bs.push(if with_ctx {
                let c = self.charged_clone(&ctx)?;
                self.intersect(c, b, depth + 1)?
            } else {
                b
            });
        }
        if self.options.coerce_one_of || self.options.lenient {
            return Ok(Schema::any_of(bs));
        }
        let mut out = Vec::with_capacity(bs.len());
        for i in 0..bs.len() {
            let mut b = bs[i].clone();
            for j in 0..bs.len() {
                if i == j || b.is_never() {
                    continue;
                }
                if self.disjoint(&b, &bs[j], depth)? {
                    continue;
                }
                // Overlapping branches: exclude the other branch exactly.
                let not_j = self
                    .complement(&items[j], &format!("{kptr}/{j}"), depth + 1)
                    .map_err(|e| {
                        self.err(
                            ErrorKind::Inexpressible,
                            "oneOf",
                            ptr,
                            format!(
                                "branches {i} and {j} may overlap and branch {j} cannot be negated ({})",
                                e.message()
                            ),
                        )
                    })?;
                b = self.intersect(b, not_j, depth + 1)?;
            }
            out.push(b);
        }
        Ok(Schema::any_of(out))
    }

    /// `item`'s `oneOf` array and the pointer of its schema object, when
    /// `item` asserts nothing else, or is a `$ref` (alone) to such a
    /// schema.
    pub(super) fn lone_one_of<'v>(
        &mut self,
        item: &'v Value,
        ptr: &str,
    ) -> Result<Option<(&'v Value, String)>>
    where
        'a: 'v,
    {
        let draft = self.index.draft;
        fn only_one_of(v: &Value, draft: u32) -> Option<&Value> {
            let m = v.as_object()?;
            let one = m.get("oneOf")?;
            let alone = m.keys().all(|k| k == "oneOf" || !super::is_assertion(k));
            (alone && super::in_draft("oneOf", draft)).then_some(one)
        }
        if let Some(one) = only_one_of(item, draft) {
            return Ok(Some((one, ptr.to_owned())));
        }
        let Some(m) = item.as_object() else { return Ok(None) };
        if m.keys().any(|k| k != "$ref" && super::is_assertion(k)) {
            return Ok(None);
        }
        let Some(d) = self.ref_target(m, ptr, "$ref")? else { return Ok(None) };
        let target_ptr = self.def_pointer(d).to_owned();
        let (index, doc) = (self.index, self.doc);
        Ok(index
            .get(doc, &target_ptr)
            .and_then(|v| only_one_of(v, draft))
            .map(|one| (one, target_ptr)))
    }

    /// True when the intersection of `a` and `b` is provably empty.
    fn disjoint(&mut self, a: &Schema, b: &Schema, depth: usize) -> Result<bool> {
        // Two string enums: compare the strings, not every pair of them.
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        if constant_strings(a, &mut xs) && constant_strings(b, &mut ys) {
            let xs: std::collections::HashSet<&str> = xs.into_iter().collect();
            return Ok(!ys.iter().any(|y| xs.contains(y)));
        }
        let saved = self.nodes;
        let (a, b) = (self.charged_clone(a)?, self.charged_clone(b)?);
        let r = match self.intersect(a, b, depth + 1) {
            Ok(s) => self.provably_empty(&s, &mut Vec::new(), depth + 1)?,
            Err(e) if *e.kind() == ErrorKind::LimitExceeded => return Err(e),
            Err(_) => false,
        };
        self.nodes = saved.max(self.nodes / 2).min(self.nodes);
        Ok(r)
    }

    /// True when `s` provably has no value. A definition met again inside
    /// itself (`open` lists the ones being looked into) is not proved empty
    /// there: the proof needs a finite reason.
    pub(crate) fn provably_empty(
        &mut self,
        s: &Schema,
        open: &mut Vec<DefId>,
        depth: usize,
    ) -> Result<bool> {
        self.tick("", depth)?;
        Ok(match s {
            Schema::Never => true,
            Schema::AnyOf(bs) => {
                for b in bs {
                    if !self.provably_empty(b, open, depth + 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            Schema::String(st) => {
                let rx = crate::lower::string_content_regex(st, None);
                self.regex_is_empty(&rx)? == Some(true)
            }
            Schema::Object(o) => {
                for r in &o.required {
                    let ks = self.key_schema(o, r)?;
                    if self.provably_empty(&ks, open, depth + 1)? {
                        return Ok(true);
                    }
                }
                false
            }
            Schema::Array(a) => {
                for p in a.prefix.iter().take(a.min) {
                    if self.provably_empty(p, open, depth + 1)? {
                        return Ok(true);
                    }
                }
                false
            }
            // An intersection with a recursive definition is a definition
            // computed when first used: look inside it.
            Schema::Ref(d) if !open.contains(d) && !self.def_pending(*d) => {
                let body = self.resolve_def(*d, depth + 1)?;
                open.push(*d);
                let r = self.provably_empty(&body, open, depth + 1);
                open.pop();
                r?
            }
            _ => false,
        })
    }

    pub(super) fn if_then_else(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        depth: usize,
    ) -> Result<Schema> {
        let (Some(cond), then, els) = (m.get("if"), m.get("then"), m.get("else")) else {
            return Ok(Schema::Any);
        };
        if then.is_none() && els.is_none() {
            return Ok(Schema::Any);
        }
        let iptr = ptr_join(ptr, "if");
        let i = self.compile_value(cond, &iptr, depth + 1)?;
        let t = match then {
            Some(t) => self.compile_value(t, &ptr_join(ptr, "then"), depth + 1)?,
            None => Schema::Any,
        };
        let e = match els {
            Some(e) => self.compile_value(e, &ptr_join(ptr, "else"), depth + 1)?,
            None => Schema::Any,
        };
        let ni = self.complement(cond, &iptr, depth + 1).map_err(|err| {
            self.err(
                ErrorKind::Inexpressible,
                "if",
                ptr,
                format!("the `if` schema cannot be negated: {}", err.message()),
            )
        })?;
        let a = self.intersect(i, t, depth + 1)?;
        let b = self.intersect(ni, e, depth + 1)?;
        Ok(Schema::any_of(vec![a, b]))
    }

    pub(super) fn dependencies(
        &mut self,
        k: &str,
        val: &Value,
        ptr: &str,
        depth: usize,
    ) -> Result<Schema> {
        let m = val.as_object().ok_or_else(|| self.invalid(k, ptr, "must be an object"))?;
        let kptr = ptr_join(ptr, k);
        let mut acc = Schema::Any;
        for (prop, dep) in m {
            let absent = Schema::Object(Arc::new(ObjectSchema {
                properties: vec![(prop.clone(), Schema::Never)],
                ..ObjectSchema::default()
            }));
            let present = Schema::Object(Arc::new(ObjectSchema {
                required: vec![prop.clone()],
                ..ObjectSchema::default()
            }));
            let then = match dep {
                Value::Array(names) if k != "dependentSchemas" => {
                    let mut req = vec![prop.clone()];
                    for n in names {
                        let n = n.as_str().ok_or_else(|| {
                            self.invalid(k, ptr, "dependency names must be strings")
                        })?;
                        req.push(n.to_string());
                    }
                    Schema::Object(Arc::new(ObjectSchema {
                        required: req,
                        ..ObjectSchema::default()
                    }))
                }
                _ if k == "dependentRequired" => {
                    return Err(self.invalid(k, ptr, "values must be arrays of names"));
                }
                dep => {
                    let s = self.compile_value(dep, &ptr_join(&kptr, prop), depth + 1)?;
                    self.intersect(present, s, depth + 1)?
                }
            };
            let mut branches: Vec<Schema> = Schema::typed_any()
                .into_iter()
                .filter(|s| s.type_name() != Some("object"))
                .collect();
            branches.push(absent);
            branches.push(then);
            acc = self.intersect(acc, Schema::any_of(branches), depth + 1)?;
        }
        Ok(acc)
    }
}

/// Appends the strings of `s` to `out` when `s` is a union of string
/// constants (the `enum`s and `const`s of strings), each given as a literal
/// that its other regexes and length bounds may only keep or drop (answered
/// without derivre); false otherwise (`out` is then partial).
fn constant_strings<'s>(s: &'s Schema, out: &mut Vec<&'s str>) -> bool {
    match s {
        Schema::Never => true,
        Schema::AnyOf(bs) => bs.iter().all(|b| constant_strings(b, out)),
        Schema::String(st) => {
            let Some(derivre::RegexAst::Literal(l)) = st.regexes.first() else {
                return false;
            };
            let mut kept = true;
            for r in &st.regexes[1..] {
                match crate::cache::quick_match(r, l) {
                    Some(m) => kept &= m,
                    None => return false,
                }
            }
            let n = l.chars().count();
            if kept && st.min_len <= n && st.max_len.is_none_or(|m| n <= m) {
                out.push(l);
            }
            true
        }
        _ => false,
    }
}
