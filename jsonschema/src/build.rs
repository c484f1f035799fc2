//! Raw JSON Schema to the normalized schema: keywords, `$ref`, applicators.

use std::collections::HashMap;

use derivre::{RegexAst, RegexBuilder};
use serde_json::{Map, Value};

use crate::cache::RegexMemo;
use crate::ecma;
use crate::error::{Error, ErrorKind, Result};
use crate::formats;
use crate::intersect::{normalize_array, normalize_object};
use crate::ir::{ArraySchema, DefId, NumberSchema, ObjectSchema, Schema, StringSchema, any_key};
use crate::number::{Bound, Decimal};
use crate::options::Options;
use crate::resolve::{Index, escape_token, lookup};

/// Keywords of the JSON Schema vocabularies this compiler does not implement.
const UNSUPPORTED: &[&str] = &["$recursiveRef", "$recursiveAnchor"];

/// Keywords read by the typed core (`type` and per-type assertions).
const CORE: &[&str] = &[
    "type",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyNames",
];

/// Whether a keyword exists in the draft (keywords of later drafts are
/// unknown, hence ignored, in schemas that declare an earlier one).
pub(crate) fn in_draft(k: &str, draft: u32) -> bool {
    let since = match k {
        "const" | "contains" | "propertyNames" => 6,
        "if" => 7,
        "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "minContains"
        | "maxContains"
        | "$recursiveRef" => 2019,
        "prefixItems" | "$dynamicRef" => 2020,
        _ => 0,
    };
    draft >= since
}

/// Keywords whose presence next to `$ref` requires an intersection.
fn is_assertion(k: &str) -> bool {
    CORE.contains(&k)
        || UNSUPPORTED.contains(&k)
        || matches!(
            k,
            "enum"
                | "$dynamicRef"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "const"
                | "allOf"
                | "anyOf"
                | "oneOf"
                | "not"
                | "if"
                | "dependentRequired"
                | "dependentSchemas"
                | "dependencies"
        )
}

struct Def {
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
const NESTED: &str = "schema nested too deeply";

/// The message of an intersection with a recursive definition that cannot
/// be written as a finite grammar.
const RECURSIVE_MEET: &str =
    "a recursive $ref combined with other keywords whose intersection unfolds without end";

/// The most definitions made by intersections with definitions being
/// compiled (each distinct pair once).
const MAX_MEETS: usize = 1_000;

/// The state of one compilation.
pub(crate) struct Compiler<'a> {
    pub(crate) doc: &'a Value,
    pub(crate) index: Index,
    pub(crate) options: &'a Options,
    defs: Vec<Def>,
    def_by_ptr: HashMap<String, DefId>,
    /// The definitions made by intersections, by (definition, the other
    /// schema's debug form, order).
    meets: HashMap<(DefId, String, bool), DefId>,
    nodes: usize,
    pub(crate) warnings: Vec<String>,
    /// The answers of `regex_is_empty` and `regex_matches` so far.
    pub(crate) regex_memo: RegexMemo,
    /// The JSON pointer of the schema object being compiled (or of the
    /// definition being lowered): where an engine fault is reported.
    pub(crate) location: String,
    /// Whether the document uses `unevaluatedProperties`/`unevaluatedItems`.
    pub(crate) uses_unevaluated: bool,
}

fn ptr_join(ptr: &str, k: &str) -> String {
    format!("{ptr}/{}", escape_token(k))
}

impl<'a> Compiler<'a> {
    pub(crate) fn new(doc: &'a Value, options: &'a Options) -> Compiler<'a> {
        Compiler {
            doc,
            index: Index::build(doc),
            options,
            defs: Vec::new(),
            def_by_ptr: HashMap::new(),
            meets: HashMap::new(),
            nodes: 0,
            warnings: Vec::new(),
            regex_memo: RegexMemo::default(),
            location: String::new(),
            uses_unevaluated: crate::unevaluated::uses_unevaluated(doc),
        }
    }

    pub(crate) fn err(
        &self,
        kind: ErrorKind,
        kw: &str,
        ptr: &str,
        msg: impl Into<String>,
    ) -> Error {
        Error::new(kind, kw, ptr, msg)
    }

    fn invalid(&self, kw: &str, ptr: &str, msg: &str) -> Error {
        Error::new(ErrorKind::InvalidSchema, kw, ptr, msg)
    }

    /// Counts work and depth against the limits.
    pub(crate) fn tick(&mut self, ptr: &str, depth: usize) -> Result<()> {
        self.nodes += 1;
        if self.nodes > self.options.limits.max_nodes {
            return Err(self.err(ErrorKind::LimitExceeded, "", ptr, "too many schema nodes"));
        }
        if depth > self.options.limits.max_depth {
            return Err(self.err(ErrorKind::LimitExceeded, "", ptr, NESTED));
        }
        Ok(())
    }

    /// An unsupported keyword: an error, or a warning in lenient mode.
    fn unsupported(&mut self, kind: ErrorKind, kw: &str, ptr: &str, msg: String) -> Result<()> {
        if self.options.lenient {
            self.warnings.push(format!("{kw} at \"{ptr}\": {msg} (ignored)"));
            Ok(())
        } else {
            Err(self.err(kind, kw, ptr, msg))
        }
    }

    // ----- regex helpers -----

    /// Runs `f` (calls into derivre), turning a panic inside derivre into
    /// [`ErrorKind::EngineFault`] at the current location: bad input is an
    /// error, never a panic.
    fn guarded<T>(&self, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
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
        let r = memo.matches(ast, s, || self.regex_matches_uncached(ast, s));
        self.regex_memo = memo;
        r
    }

    /// [`regex_is_empty`](Self::regex_is_empty) computed by derivre.
    pub(crate) fn regex_is_empty_uncached(&mut self, ast: &RegexAst) -> Result<Option<bool>> {
        let fuel = self.options.limits.regex_fuel;
        self.guarded("an emptiness check", || {
            let mut b = RegexBuilder::new();
            let e = b
                .mk(ast)
                .map_err(|e| self.err(ErrorKind::UnsupportedPattern, "", "", e.to_string()))?;
            match b.to_regex_limited(e, fuel) {
                Ok(mut r) => Ok(Some(r.always_empty())),
                Err(_) => Ok(None),
            }
        })
    }

    /// [`regex_matches`](Self::regex_matches) computed by derivre.
    pub(crate) fn regex_matches_uncached(&mut self, ast: &RegexAst, s: &str) -> Result<bool> {
        self.guarded("a match", || {
            let mut b = RegexBuilder::new();
            let e = b
                .mk(ast)
                .map_err(|e| self.err(ErrorKind::UnsupportedPattern, "", "", e.to_string()))?;
            let mut r = b.to_regex(e);
            Ok(r.is_match(s))
        })
    }

    pub(crate) fn pattern(&mut self, kw: &str, ptr: &str, p: &Value) -> Result<RegexAst> {
        let p = p.as_str().ok_or_else(|| self.invalid(kw, ptr, "a pattern must be a string"))?;
        let rx = ecma::translate(p)
            .map_err(|m| self.err(ErrorKind::UnsupportedPattern, kw, ptr, format!("{p:?}: {m}")))?;
        let ast = RegexAst::Regex(rx);
        let outer = std::mem::replace(&mut self.location, ptr.to_string());
        let checked = self.guarded("a pattern's translation", || {
            RegexBuilder::new().mk(&ast).map(drop).map_err(|e| {
                self.err(ErrorKind::UnsupportedPattern, kw, ptr, format!("{p:?}: {e}"))
            })
        });
        self.location = outer;
        checked?;
        Ok(ast)
    }

    // ----- definitions -----

    fn def_for(&mut self, pointer: &str) -> DefId {
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
                let v = lookup(self.doc, &ptr).unwrap_or(&Value::Bool(true));
                self.compile_value(v, &ptr, depth + 1)
            }
        };
        self.defs[d].in_progress = false;
        let s = r?;
        self.defs[d].schema = Some(s.clone());
        Ok(s)
    }

    /// The definition `$ref` (or `$dynamicRef`, resolved statically) names.
    fn ref_target(&mut self, m: &Map<String, Value>, ptr: &str, kw: &str) -> Result<Option<DefId>> {
        let Some(r) = m.get(kw) else { return Ok(None) };
        let r = r.as_str().ok_or_else(|| self.invalid(kw, ptr, "must be a string"))?;
        let target = if kw == "$dynamicRef" {
            self.index.resolve_dynamic(self.doc, ptr, r).map_err(|()| {
                let msg = format!("{r:?} resolves through the dynamic scope (several anchors)");
                self.err(ErrorKind::UnsupportedKeyword, kw, ptr, msg)
            })?
        } else {
            self.index.resolve(self.doc, ptr, r)
        };
        let target = target.ok_or_else(|| {
            let msg = format!("cannot resolve {r:?} in this document");
            self.err(ErrorKind::UnresolvedRef, kw, ptr, msg)
        })?;
        Ok(Some(self.def_for(&target)))
    }

    // ----- the main walk -----

    /// Compiles the schema `v` found at `ptr`.
    pub(crate) fn compile_value(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        let outer = std::mem::replace(&mut self.location, ptr.to_string());
        let schema = self.compile_value_here(v, ptr, depth);
        self.location = outer;
        schema
    }

    /// [`compile_value`](Self::compile_value) with `location` set to `ptr`.
    fn compile_value_here(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        self.tick(ptr, depth)?;
        let m = match v {
            Value::Bool(true) => return Ok(Schema::Any),
            Value::Bool(false) => return Ok(Schema::Never),
            Value::Object(m) => m,
            _ => return Err(self.invalid("", ptr, "a schema must be an object or a boolean")),
        };
        if let Some(d) = self.ref_target(m, ptr, "$ref")? {
            let alone = self.index.legacy || !m.keys().any(|k| is_assertion(k));
            if alone {
                return Ok(Schema::Ref(d));
            }
        } else if in_draft("$dynamicRef", self.index.draft) {
            let others = m.keys().any(|k| k != "$dynamicRef" && is_assertion(k));
            if let Some(d) = self.ref_target(m, ptr, "$dynamicRef")?.filter(|_| !others) {
                return Ok(Schema::Ref(d));
            }
        }
        let mut acc = Schema::Any;
        // The typed core joins at its first keyword other than `type`, so
        // that `properties` orders the object where it appears.
        let draft = self.index.draft;
        let core_at = m
            .keys()
            .position(|k| CORE.contains(&k.as_str()) && k != "type" && in_draft(k, draft))
            .or_else(|| m.keys().position(|k| k == "type"));
        for (pos, (k, val)) in m.iter().enumerate() {
            if !in_draft(k, draft) {
                continue;
            }
            let kptr = ptr_join(ptr, k);
            let part = match k.as_str() {
                "$ref" | "$dynamicRef" => Schema::Ref(self.ref_target(m, ptr, k)?.unwrap_or(0)),
                "allOf" => {
                    let items = self.schema_array(k, ptr, val)?;
                    let mut s = Schema::Any;
                    for (i, item) in items.iter().enumerate() {
                        let c = self.compile_value(item, &format!("{kptr}/{i}"), depth + 1)?;
                        s = self.intersect(s, c, depth + 1)?;
                    }
                    s
                }
                "anyOf" => {
                    let items = self.schema_array(k, ptr, val)?;
                    let mut bs = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        bs.push(self.compile_value(item, &format!("{kptr}/{i}"), depth + 1)?);
                    }
                    Schema::any_of(bs)
                }
                "oneOf" => self.one_of(val, ptr, depth)?,
                "not" => self.complement(val, &kptr, depth + 1)?,
                "if" => self.if_then_else(m, ptr, depth)?,
                "enum" => {
                    let vals = val
                        .as_array()
                        .ok_or_else(|| self.invalid(k, ptr, "enum must be an array"))?;
                    let mut bs = Vec::new();
                    for v in vals {
                        bs.push(self.constant(v, &kptr)?);
                    }
                    Schema::any_of(bs)
                }
                "const" => self.constant(val, &kptr)?,
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    self.dependencies(k, val, ptr, depth)?
                }
                k if CORE.contains(&k) => {
                    if core_at != Some(pos) {
                        continue;
                    }
                    self.core(m, ptr, depth)?
                }
                k if UNSUPPORTED.contains(&k) => {
                    self.unsupported(
                        ErrorKind::UnsupportedKeyword,
                        k,
                        ptr,
                        format!("`{k}` is not supported"),
                    )?;
                    continue;
                }
                _ => continue,
            };
            acc = self.intersect(acc, part, depth + 1)?;
            if acc.is_never() {
                break;
            }
        }
        self.apply_unevaluated(m, ptr, acc, depth)
    }

    fn schema_array<'v>(&self, k: &str, ptr: &str, v: &'v Value) -> Result<&'v Vec<Value>> {
        v.as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| self.invalid(k, ptr, "must be a non-empty array of schemas"))
    }

    fn one_of(&mut self, val: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        let kptr = ptr_join(ptr, "oneOf");
        let items = self.schema_array("oneOf", ptr, val)?.clone();
        let mut bs = Vec::new();
        for (i, item) in items.iter().enumerate() {
            bs.push(self.compile_value(item, &format!("{kptr}/{i}"), depth + 1)?);
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

    /// True when the intersection of `a` and `b` is provably empty.
    fn disjoint(&mut self, a: &Schema, b: &Schema, depth: usize) -> Result<bool> {
        let saved = self.nodes;
        let r = match self.intersect(a.clone(), b.clone(), depth + 1) {
            Ok(s) => self.provably_empty(&s, depth + 1)?,
            Err(e) if *e.kind() == ErrorKind::LimitExceeded => return Err(e),
            Err(_) => false,
        };
        self.nodes = saved.max(self.nodes / 2).min(self.nodes);
        Ok(r)
    }

    pub(crate) fn provably_empty(&mut self, s: &Schema, depth: usize) -> Result<bool> {
        self.tick("", depth)?;
        Ok(match s {
            Schema::Never => true,
            Schema::AnyOf(bs) => {
                for b in bs {
                    if !self.provably_empty(b, depth + 1)? {
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
                    if self.provably_empty(&ks, depth + 1)? {
                        return Ok(true);
                    }
                }
                false
            }
            Schema::Array(a) => {
                for p in a.prefix.iter().take(a.min) {
                    if self.provably_empty(p, depth + 1)? {
                        return Ok(true);
                    }
                }
                false
            }
            _ => false,
        })
    }

    fn if_then_else(&mut self, m: &Map<String, Value>, ptr: &str, depth: usize) -> Result<Schema> {
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

    fn dependencies(&mut self, k: &str, val: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        let m = val.as_object().ok_or_else(|| self.invalid(k, ptr, "must be an object"))?;
        let kptr = ptr_join(ptr, k);
        let mut acc = Schema::Any;
        for (prop, dep) in m {
            let absent = Schema::Object(ObjectSchema {
                properties: vec![(prop.clone(), Schema::Never)],
                ..ObjectSchema::default()
            });
            let present = Schema::Object(ObjectSchema {
                required: vec![prop.clone()],
                ..ObjectSchema::default()
            });
            let then = match dep {
                Value::Array(names) if k != "dependentSchemas" => {
                    let mut req = vec![prop.clone()];
                    for n in names {
                        let n = n.as_str().ok_or_else(|| {
                            self.invalid(k, ptr, "dependency names must be strings")
                        })?;
                        req.push(n.to_string());
                    }
                    Schema::Object(ObjectSchema { required: req, ..ObjectSchema::default() })
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

    /// A `const` value (or one `enum` value) as a schema.
    pub(crate) fn constant(&mut self, v: &Value, ptr: &str) -> Result<Schema> {
        self.tick(ptr, 0)?;
        Ok(match v {
            Value::Null => Schema::Null,
            Value::Bool(b) => Schema::Boolean(Some(*b)),
            Value::Number(n) => {
                let d = Decimal::from_json(n, self.options.limits.max_number_digits).ok_or_else(
                    || self.err(ErrorKind::LimitExceeded, "const", ptr, "number too long"),
                )?;
                let b = Bound { value: d, exclusive: false };
                Schema::Number(NumberSchema {
                    min: Some(b.clone()),
                    max: Some(b),
                    ..NumberSchema::default()
                })
            }
            Value::String(s) => Schema::String(StringSchema {
                regexes: vec![RegexAst::Literal(s.clone())],
                ..StringSchema::default()
            }),
            Value::Array(a) => {
                let mut prefix = Vec::with_capacity(a.len());
                for x in a {
                    prefix.push(self.constant(x, ptr)?);
                }
                Schema::Array(ArraySchema {
                    min: a.len(),
                    max: Some(a.len()),
                    prefix,
                    items: Box::new(Schema::Never),
                    ..ArraySchema::default()
                })
            }
            Value::Object(m) => {
                let mut properties = Vec::with_capacity(m.len());
                for (k, x) in m {
                    properties.push((k.clone(), self.constant(x, ptr)?));
                }
                Schema::Object(ObjectSchema {
                    required: m.keys().cloned().collect(),
                    properties,
                    regions: Vec::new(),
                    ..ObjectSchema::default()
                })
            }
        })
    }

    fn usize_kw(&self, m: &Map<String, Value>, k: &str, ptr: &str) -> Result<Option<usize>> {
        match m.get(k) {
            None => Ok(None),
            Some(v) => {
                let f = v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0);
                match f {
                    Some(f) => Ok(Some(if f > usize::MAX as f64 / 2.0 {
                        usize::MAX / 2
                    } else {
                        f as usize
                    })),
                    None => Err(self.invalid(k, ptr, "must be a non-negative integer")),
                }
            }
        }
    }

    fn decimal_kw(&self, m: &Map<String, Value>, k: &str, ptr: &str) -> Result<Option<Decimal>> {
        match m.get(k) {
            None | Some(Value::Bool(_)) => Ok(None),
            Some(Value::Number(n)) => {
                Decimal::from_json(n, self.options.limits.max_number_digits).map(Some).ok_or_else(
                    || self.err(ErrorKind::LimitExceeded, k, ptr, "number has too many digits"),
                )
            }
            Some(_) => Err(self.invalid(k, ptr, "must be a number")),
        }
    }

    /// `type` and the per-type keywords.
    fn core(&mut self, m: &Map<String, Value>, ptr: &str, depth: usize) -> Result<Schema> {
        let types: Vec<String> = match m.get("type") {
            None => ["null", "boolean", "number", "string", "array", "object"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .map(|t| t.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.invalid("type", ptr, "type names must be strings"))?,
            Some(_) => return Err(self.invalid("type", ptr, "must be a string or an array")),
        };
        let has_number = types.iter().any(|t| t == "number");
        let mut branches = Vec::new();
        for t in &types {
            let s = match t.as_str() {
                "null" => Schema::Null,
                "boolean" => Schema::Boolean(None),
                "integer" if has_number => continue,
                "integer" | "number" => self.number_core(m, ptr, t == "integer")?,
                "string" => self.string_core(m, ptr)?,
                "array" => self.array_core(m, ptr, depth)?,
                "object" => self.object_core(m, ptr, depth)?,
                other => {
                    return Err(self.invalid("type", ptr, &format!("unknown type {other:?}")));
                }
            };
            branches.push(s);
        }
        Ok(Schema::any_of(branches))
    }

    fn number_core(&mut self, m: &Map<String, Value>, ptr: &str, integer: bool) -> Result<Schema> {
        let mut n = NumberSchema { integer, ..NumberSchema::default() };
        let bound = |v: Option<Decimal>, exclusive| v.map(|value| Bound { value, exclusive });
        // draft-04: boolean exclusiveMinimum/exclusiveMaximum modify minimum/maximum.
        let ex_min_bool = m.get("exclusiveMinimum").and_then(Value::as_bool).unwrap_or(false);
        let ex_max_bool = m.get("exclusiveMaximum").and_then(Value::as_bool).unwrap_or(false);
        let mins = [
            bound(self.decimal_kw(m, "minimum", ptr)?, ex_min_bool),
            bound(self.decimal_kw(m, "exclusiveMinimum", ptr)?, true),
        ];
        let maxs = [
            bound(self.decimal_kw(m, "maximum", ptr)?, ex_max_bool),
            bound(self.decimal_kw(m, "exclusiveMaximum", ptr)?, true),
        ];
        let base = Schema::Number(n.clone());
        let mut acc = base;
        for b in mins.into_iter().flatten() {
            let s = Schema::Number(NumberSchema { min: Some(b), ..NumberSchema::default() });
            acc = self.intersect(acc, s, 0)?;
        }
        for b in maxs.into_iter().flatten() {
            let s = Schema::Number(NumberSchema { max: Some(b), ..NumberSchema::default() });
            acc = self.intersect(acc, s, 0)?;
        }
        if let Some(d) = self.decimal_kw(m, "multipleOf", ptr)? {
            if d.neg || d.is_zero() {
                return Err(self.invalid("multipleOf", ptr, "must be positive"));
            }
            if crate::number::multiple_of(&d).is_none() {
                return Err(self.err(
                    ErrorKind::Inexpressible,
                    "multipleOf",
                    ptr,
                    format!("multipleOf {d} has too many significant digits"),
                ));
            }
            if let Schema::Number(x) = &mut acc {
                x.multiple_of.push(d);
            }
        }
        if let Schema::Number(x) = &acc {
            n = x.clone();
            return Ok(Schema::Number(n));
        }
        Ok(acc)
    }

    fn string_core(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Schema> {
        let mut s = StringSchema {
            min_len: self.usize_kw(m, "minLength", ptr)?.unwrap_or(0),
            max_len: self.usize_kw(m, "maxLength", ptr)?,
            regexes: Vec::new(),
        };
        if let Some(p) = m.get("pattern") {
            let rx = self.pattern("pattern", ptr, p)?;
            s.regexes.push(rx);
        }
        if let Some(f) = m.get("format") {
            let f = f.as_str().ok_or_else(|| self.invalid("format", ptr, "must be a string"))?;
            match formats::lookup(f) {
                Some(rx) => s.regexes.push(rx),
                None => self.unsupported(
                    ErrorKind::UnknownFormat,
                    "format",
                    ptr,
                    format!("unknown format {f:?}"),
                )?,
            }
        }
        if s.max_len.is_some_and(|x| x < s.min_len) {
            return Ok(Schema::Never);
        }
        Ok(Schema::String(s))
    }

    fn array_core(&mut self, m: &Map<String, Value>, ptr: &str, depth: usize) -> Result<Schema> {
        let mut a = ArraySchema {
            min: self.usize_kw(m, "minItems", ptr)?.unwrap_or(0),
            max: self.usize_kw(m, "maxItems", ptr)?,
            unique: (m.get("uniqueItems") == Some(&Value::Bool(true))).then(|| ptr.to_string()),
            ..ArraySchema::default()
        };
        let mut prefix_src = None;
        if let Some(p) = m.get("prefixItems").filter(|_| self.index.draft >= 2020) {
            prefix_src = Some(("prefixItems", p));
        }
        match m.get("items") {
            Some(items @ Value::Array(_)) => prefix_src = Some(("items", items)),
            Some(items) => {
                let s = self.compile_value(items, &ptr_join(ptr, "items"), depth + 1)?;
                a.items = Box::new(s);
                a.evaluated = usize::MAX;
            }
            None => {}
        }
        if let Some(c) = m.get("contains").filter(|_| self.index.draft >= 6) {
            let min = if self.index.draft >= 2019 {
                self.usize_kw(m, "minContains", ptr)?.unwrap_or(1)
            } else {
                1
            };
            let max = self.usize_kw(m, "maxContains", ptr)?.filter(|_| self.index.draft >= 2019);
            if let Some(max) = max {
                // At most `max` items match: the others are written through
                // the complement of `contains`.
                let kptr = ptr_join(ptr, "contains");
                let s = self.compile_value(c, &kptr, depth + 1)?;
                let not_s = self.complement(c, &kptr, depth + 1).map_err(|e| {
                    let msg = format!("`contains` cannot be negated ({})", e.message());
                    self.err(ErrorKind::Inexpressible, "maxContains", ptr, msg)
                })?;
                a.contains_at_most.push((s, not_s, max));
            }
            if min > 0 || self.uses_unevaluated {
                let s = self.compile_value(c, &ptr_join(ptr, "contains"), depth + 1)?;
                if self.uses_unevaluated {
                    a.evaluated_contains.push(s.clone());
                }
                if min > 0 {
                    a.contains.push((s, min));
                }
            }
        }
        if let Some((kw, p)) = prefix_src {
            let list =
                p.as_array().ok_or_else(|| self.invalid(kw, ptr, "must be an array of schemas"))?;
            let kptr = ptr_join(ptr, kw);
            for (i, item) in list.iter().enumerate() {
                a.prefix.push(self.compile_value(item, &format!("{kptr}/{i}"), depth + 1)?);
            }
            a.evaluated = a.evaluated.max(list.len());
            if kw == "items"
                && let Some(add) = m.get("additionalItems")
            {
                a.evaluated = usize::MAX;
                a.items = Box::new(self.compile_value(
                    add,
                    &ptr_join(ptr, "additionalItems"),
                    depth + 1,
                )?);
            }
        }
        Ok(normalize_array(a))
    }

    fn object_core(&mut self, m: &Map<String, Value>, ptr: &str, depth: usize) -> Result<Schema> {
        let mut o = ObjectSchema {
            min: self.usize_kw(m, "minProperties", ptr)?.unwrap_or(0),
            max: self.usize_kw(m, "maxProperties", ptr)?,
            regions: Vec::new(),
            ..ObjectSchema::default()
        };
        if let Some(props) = m.get("properties") {
            let props = props
                .as_object()
                .ok_or_else(|| self.invalid("properties", ptr, "must be an object"))?;
            let kptr = ptr_join(ptr, "properties");
            for (k, v) in props {
                let s = self.compile_value(v, &ptr_join(&kptr, k), depth + 1)?;
                o.properties.push((k.clone(), s));
            }
        }
        let mut patterns = Vec::new();
        if let Some(pp) = m.get("patternProperties") {
            let pp = pp
                .as_object()
                .ok_or_else(|| self.invalid("patternProperties", ptr, "must be an object"))?;
            let kptr = ptr_join(ptr, "patternProperties");
            for (p, v) in pp {
                let rx = self.pattern("patternProperties", ptr, &Value::String(p.clone()))?;
                let s = self.compile_value(v, &ptr_join(&kptr, p), depth + 1)?;
                patterns.push((rx, s));
            }
        }
        let additional = match m.get("additionalProperties") {
            Some(v) => self.compile_value(v, &ptr_join(ptr, "additionalProperties"), depth + 1)?,
            None if self.options.forbid_additional_properties => Schema::Never,
            None => Schema::Any,
        };
        // Properties also take the schemas of the patterns their names match.
        for i in 0..o.properties.len() {
            for (rx, ps) in &patterns {
                if self.regex_matches(rx, &o.properties[i].0)? {
                    let cur = std::mem::replace(&mut o.properties[i].1, Schema::Never);
                    o.properties[i].1 = self.intersect(cur, ps.clone(), depth + 1)?;
                }
            }
        }
        o.evaluated = if m.contains_key("additionalProperties") {
            any_key()
        } else {
            let names = o.properties.iter().map(|(k, _)| RegexAst::Literal(k.clone()));
            let keys: Vec<RegexAst> = names.chain(patterns.iter().map(|p| p.0.clone())).collect();
            if keys.is_empty() { RegexAst::NoMatch } else { RegexAst::Or(keys) }
        };
        o.regions = self.regions(patterns, additional, ptr, depth)?;
        if let Some(req) = m.get("required") {
            let req =
                req.as_array().ok_or_else(|| self.invalid("required", ptr, "must be an array"))?;
            for r in req {
                let r = r
                    .as_str()
                    .ok_or_else(|| self.invalid("required", ptr, "names must be strings"))?;
                if !o.required.iter().any(|x| x == r) {
                    o.required.push(r.to_string());
                }
            }
        }
        if let Some(pn) = m.get("propertyNames").filter(|_| self.index.draft >= 6) {
            let s = self.compile_value(pn, &ptr_join(ptr, "propertyNames"), depth + 1)?;
            if let Some(key_rx) = self.key_regex(&s, ptr, depth)? {
                for i in 0..o.properties.len() {
                    if !self.regex_matches(&key_rx, &o.properties[i].0)? {
                        o.properties[i].1 = Schema::Never;
                    }
                }
                for r in &mut o.regions {
                    r.0 = RegexAst::And(vec![r.0.clone(), key_rx.clone()]);
                }
                // Required names outside `properties` are checked at lowering
                // through the regions, which now carry the constraint.
            }
        }
        Ok(normalize_object(o))
    }
}
