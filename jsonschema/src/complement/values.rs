//! The complement of finitely many JSON values: `not` of `enum` and `const`.
//!
//! Values are compared as JSON values: numbers by value (`1` and `1.0` are
//! one value), strings after escape decoding, object members in any order.
//! The complement is split by type. Scalars are excluded per type (the
//! other boolean, `NumberSchema::excluded`, the complement of a union of
//! string literals). Arrays and objects follow the listed constants down a
//! decision tree whose leaves each negate one item or member:
//!
//! - Arrays: an unlisted length, or a listed length `n` and items that no
//!   listed array of length `n` has. Among those, position by position:
//!   an item at position `i` that none of the arrays left has there (then
//!   any items after it), or one that some have, kept as a constant, and
//!   the same question at `i + 1` for the arrays that have it. One array
//!   left, `[c_1, …, c_n]`: some position `j` holds a value other than `c_j`
//!   (every other position any value).
//! - Objects: with the names of the listed objects `K`, in the order they
//!   first appear: pick a name `k` some object left has; an object lacks
//!   `k` (the question again for the listed objects without `k`), or has a
//!   value at `k` that none of them has, or one that some have (the
//!   question again for those). One object `C` left: the union of "lacks
//!   `k`" and "has `k` with a value other than `C[k]`" for each name `k` of
//!   `C` not yet decided, and "has more members than `C`". An object other
//!   than `C` either has another key set (then it lacks a key of `C` or has
//!   more members) or differs at some key; an object in the union differs
//!   from `C` by a key, a value or its size.
//!
//! Each branch holds at most one negated item or member and no witness,
//! so neither the witness bits of the object lowering nor the product of
//! the complements of several constants come in: the union grows with the
//! total size of the constants (a branch or two per item or member, one
//! per split), bounded by `Limits::max_branches`; the copies made along
//! the way are charged to `Limits::max_copied_nodes` and each level of
//! nesting counts toward `Limits::max_depth`.
//!
//! In schema property order (`PropertyOrder::Schema`) an object branch
//! lists every name of `K` that it constrains or that is still undecided,
//! in the order of `K`, and other keys come after them in any order: the
//! names of a constant come in the order it lists them, the one a
//! positive `const` compiles to. That is a subset of the complement (never
//! a value equal to a listed constant, in whatever order its keys come);
//! in any order it is exact.

use std::sync::Arc;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use derivre::RegexAst;
use serde_json::{Map, Value};

use crate::build::Compiler;
use crate::error::Result;
use crate::ir::{ArraySchema, NumberSchema, ObjectSchema, Schema, StringSchema};

/// Listed objects still to tell apart, and the objects that the decisions
/// taken so far leave (`context`): its `properties` list every name of the
/// listed objects, each `Any` while undecided, `Never` once decided absent
/// or a required constant once decided present.
type ObjectJob<'v> = (Vec<&'v Map<String, Value>>, ObjectSchema);

impl Compiler<'_> {
    /// Every value except the listed ones (`vals` at `ptr`).
    pub(crate) fn complement_values(
        &mut self,
        vals: &[&Value],
        ptr: &str,
        depth: usize,
    ) -> Result<Schema> {
        self.tick(ptr, depth)?;
        let mut null = true;
        let mut bools = [true, true];
        let mut nums = Vec::new();
        let mut strs = Vec::new();
        let mut arrays = Vec::new();
        let mut objects = Vec::new();
        for v in vals {
            match v {
                Value::Null => null = false,
                Value::Bool(b) => bools[*b as usize] = false,
                Value::Number(n) => nums.push(self.decimal(n, "enum", ptr)?),
                Value::String(s) => strs.push(RegexAst::Literal(s.clone())),
                Value::Array(_) => arrays.push(*v),
                Value::Object(_) => objects.push(*v),
            }
        }
        let mut bs = Vec::new();
        if null {
            bs.push(Schema::Null);
        }
        match bools {
            [true, true] => bs.push(Schema::Boolean(None)),
            [true, false] => bs.push(Schema::Boolean(Some(false))),
            [false, true] => bs.push(Schema::Boolean(Some(true))),
            _ => {}
        }
        bs.push(Schema::Number(NumberSchema { excluded: nums, ..NumberSchema::default() }));
        bs.push(Schema::String(StringSchema {
            regexes: if strs.is_empty() {
                vec![]
            } else {
                vec![RegexAst::Not(Box::new(RegexAst::Or(strs)))]
            },
            ..StringSchema::default()
        }));
        bs.push(self.arrays_except(&arrays, ptr, depth)?);
        bs.push(self.objects_except(&objects, ptr, depth)?);
        let s = Schema::any_of(bs);
        if let Schema::AnyOf(bs) = &s {
            self.check_branches(bs.len())?;
        }
        Ok(s)
    }

    /// The arrays other than the listed ones (`arrays`, all arrays).
    fn arrays_except(&mut self, arrays: &[&Value], ptr: &str, depth: usize) -> Result<Schema> {
        let mut by_len: BTreeMap<usize, Vec<&[Value]>> = BTreeMap::new();
        for (v, _) in self.group_by(arrays.iter().map(|&v| (v, ())).collect(), ptr)? {
            if let Some(a) = v.as_array() {
                by_len.entry(a.len()).or_default().push(a);
            }
        }
        let mut out = Vec::new();
        // The lengths below the first listed one, between listed ones, and
        // above the last.
        let mut lo = 0;
        for (n, group) in by_len {
            if n > lo {
                out.push(Schema::Array(Arc::new(ArraySchema {
                    min: lo,
                    max: Some(n - 1),
                    ..ArraySchema::default()
                })));
            }
            lo = n + 1;
            self.tuples_except(group, n, &mut out, ptr, depth)?;
        }
        out.push(Schema::Array(Arc::new(ArraySchema { min: lo, ..ArraySchema::default() })));
        self.check_branches(out.len())?;
        Ok(Schema::any_of(out))
    }

    /// Pushes onto `out` the arrays of length `n` other than those of
    /// `group` (distinct, of length `n`).
    fn tuples_except<'v>(
        &mut self,
        group: Vec<&'v [Value]>,
        n: usize,
        out: &mut Vec<Schema>,
        ptr: &str,
        depth: usize,
    ) -> Result<()> {
        // (arrays left, their common first items as constants)
        let mut todo: Vec<(Vec<&'v [Value]>, Vec<Schema>)> = vec![(group, Vec::new())];
        while let Some((group, fixed)) = todo.pop() {
            let i = fixed.len();
            if let [only] = group[..] {
                self.check_branches(out.len() + (n - i))?;
                for (j, c) in only.iter().enumerate().skip(i) {
                    let c = self.complement_values(&[c], ptr, depth + 1)?;
                    out.push(self.tuple(&fixed, j, c, n)?);
                }
                continue;
            }
            // Distinct arrays that agree before `i` differ at `i` or later,
            // so `i < n` (checked all the same: no index can panic).
            if i >= n {
                continue;
            }
            let parts =
                self.group_by(group.iter().filter_map(|&a| Some((a.get(i)?, a))).collect(), ptr)?;
            let values: Vec<&Value> = parts.iter().map(|(v, _)| *v).collect();
            let c = self.complement_values(&values, ptr, depth + 1)?;
            out.push(self.tuple(&fixed, i, c, n)?);
            self.check_branches(out.len())?;
            for (v, same) in parts {
                let mut next = self.copy_all(&fixed)?;
                next.push(self.constant(v, ptr)?);
                todo.push((same, next));
            }
        }
        Ok(())
    }

    /// The arrays of length `n` whose first items are `fixed` (copied),
    /// whose item `j` (at least `fixed.len()`) is `s`, and any other items.
    fn tuple(&mut self, fixed: &[Schema], j: usize, s: Schema, n: usize) -> Result<Schema> {
        let mut prefix = self.copy_all(fixed)?;
        self.charge(n - prefix.len())?;
        prefix.resize(n, Schema::Any);
        prefix[j] = s;
        Ok(Schema::Array(Arc::new(ArraySchema {
            prefix,
            items: Box::new(Schema::Never),
            min: n,
            max: Some(n),
            ..ArraySchema::default()
        })))
    }

    /// The objects other than the listed ones (`objects`, all objects).
    fn objects_except(&mut self, objects: &[&Value], ptr: &str, depth: usize) -> Result<Schema> {
        let distinct = self.group_by(objects.iter().map(|&v| (v, ())).collect(), ptr)?;
        let group: Vec<&Map<String, Value>> =
            distinct.iter().filter_map(|(v, _)| v.as_object()).collect();
        let mut names: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for k in group.iter().flat_map(|m| m.keys()) {
            if seen.insert(k) {
                names.push(k);
            }
        }
        self.charge(names.len())?;
        let context = ObjectSchema {
            properties: names.iter().map(|k| (k.to_string(), Schema::Any)).collect(),
            ..ObjectSchema::default()
        };
        let mut out = Vec::new();
        let mut todo: Vec<ObjectJob<'_>> = vec![(group, context)];
        while let Some((group, context)) = todo.pop() {
            let undecided = |o: &ObjectSchema, k: &str| {
                o.properties.iter().position(|(p, s)| p == k && matches!(s, Schema::Any))
            };
            match group[..] {
                [] => out.push(Schema::Object(Arc::new(context))),
                [only] => {
                    let open: Vec<(usize, &Value)> = only
                        .iter()
                        .filter_map(|(k, v)| Some((undecided(&context, k)?, v)))
                        .collect();
                    self.check_branches(out.len() + 2 * open.len() + 1)?;
                    for (p, v) in open {
                        let mut lacks = self.copy_object(&context)?;
                        lacks.properties[p].1 = Schema::Never;
                        out.push(Schema::Object(Arc::new(lacks)));
                        let c = self.complement_values(&[v], ptr, depth + 1)?;
                        out.push(Schema::Object(Arc::new(self.decide(&context, p, c)?)));
                    }
                    let mut more = self.copy_object(&context)?;
                    more.properties.retain(|(_, s)| !matches!(s, Schema::Any));
                    more.min = only.len() + 1;
                    out.push(Schema::Object(Arc::new(more)));
                }
                _ => {
                    // Distinct objects that agree on the decided names
                    // differ at an undecided name one of them has (without
                    // one, they would all be the object the decisions fix).
                    let split =
                        group.iter().flat_map(|m| m.keys()).find_map(|k| undecided(&context, k));
                    let Some(p) = split else { continue };
                    let k = context.properties[p].0.clone();
                    let without = group.iter().copied().filter(|m| !m.contains_key(&k)).collect();
                    let mut lacks = self.copy_object(&context)?;
                    lacks.properties[p].1 = Schema::Never;
                    todo.push((without, lacks));
                    let with = group.iter().filter_map(|&m| Some((m.get(&k)?, m))).collect();
                    let parts = self.group_by(with, ptr)?;
                    let values: Vec<&Value> = parts.iter().map(|(v, _)| *v).collect();
                    let c = self.complement_values(&values, ptr, depth + 1)?;
                    out.push(Schema::Object(Arc::new(self.decide(&context, p, c)?)));
                    for (v, same) in parts {
                        let c = self.constant(v, ptr)?;
                        todo.push((same, self.decide(&context, p, c)?));
                    }
                }
            }
            self.check_branches(out.len())?;
        }
        Ok(Schema::any_of(out))
    }

    /// A copy of `context` whose property `p` is required and takes `s`.
    fn decide(&mut self, context: &ObjectSchema, p: usize, s: Schema) -> Result<ObjectSchema> {
        let mut o = self.copy_object(context)?;
        o.required.push(o.properties[p].0.clone());
        o.properties[p].1 = s;
        Ok(o)
    }

    /// A copy of an object context (its properties and required names),
    /// charged.
    fn copy_object(&mut self, o: &ObjectSchema) -> Result<ObjectSchema> {
        let mut properties = Vec::with_capacity(o.properties.len());
        for (k, s) in &o.properties {
            properties.push((k.clone(), self.charged_clone(s)?));
        }
        Ok(ObjectSchema { properties, required: o.required.clone(), ..ObjectSchema::default() })
    }

    /// Copies of `schemas`, charged.
    fn copy_all(&mut self, schemas: &[Schema]) -> Result<Vec<Schema>> {
        schemas.iter().map(|s| self.charged_clone(s)).collect()
    }

    /// The `(value, item)` pairs grouped by equal values, in order of first
    /// appearance: (the first value, its items in order).
    fn group_by<'v, T>(
        &self,
        items: Vec<(&'v Value, T)>,
        ptr: &str,
    ) -> Result<Vec<(&'v Value, Vec<T>)>> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<(&'v Value, Vec<T>)> = Vec::new();
        for (v, x) in items {
            let mut text = String::new();
            self.canonical(v, ptr, &mut text)?;
            match index.get(&text) {
                Some(&g) => out[g].1.push(x),
                None => {
                    index.insert(text, out.len());
                    out.push((v, vec![x]));
                }
            }
        }
        Ok(out)
    }

    /// Writes the text of `v` that is the same for equal JSON values and
    /// only for them: numbers as exact decimals, strings decoded (then
    /// quoted), object members sorted by key.
    fn canonical(&self, v: &Value, ptr: &str, out: &mut String) -> Result<()> {
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                let _ = write!(out, "{}", self.decimal(n, "enum", ptr)?);
            }
            Value::String(s) => {
                let _ = write!(out, "{s:?}");
            }
            Value::Array(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.canonical(x, ptr, out)?;
                }
                out.push(']');
            }
            Value::Object(m) => {
                let mut members: Vec<(&String, &Value)> = m.iter().collect();
                members.sort_by(|a, b| a.0.cmp(b.0));
                out.push('{');
                for (i, (k, x)) in members.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k:?}:");
                    self.canonical(x, ptr, out)?;
                }
                out.push('}');
            }
        }
        Ok(())
    }
}
