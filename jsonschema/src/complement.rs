//! The complement of a raw schema, for `not`, `if` (its `else` side) and
//! overlapping `oneOf` branches.
//!
//! A schema is the conjunction of its keywords, so its complement is the
//! union of the complements of its keywords. Each keyword with an exact,
//! expressible complement contributes one; annotations and unknown keywords
//! contribute nothing; any other assertion keyword is an error.

use std::sync::Arc;

use derivre::RegexAst;
use serde_json::Value;

use crate::build::Compiler;
use crate::error::{ErrorKind, Result};
use crate::ir::{ArraySchema, NumberSchema, ObjectSchema, Schema, StringSchema, any_key};
use crate::number::Bound;
use crate::resolve::escape_token;

mod values;

fn number(min: Option<Bound>, max: Option<Bound>) -> Schema {
    Schema::Number(NumberSchema { min, max, ..NumberSchema::default() })
}

impl Compiler<'_> {
    /// The schema accepting exactly the values `v` (at `ptr`) rejects.
    pub(crate) fn complement(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        let level = self.level;
        let r = self.complement_keywords(v, ptr, depth);
        self.level = level;
        r
    }

    /// [`complement`](Self::complement), whose keywords on items and
    /// members raise `level` while they are negated.
    fn complement_keywords(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        self.tick(ptr, depth)?;
        let level = self.level;
        let m = match v {
            Value::Bool(b) => return Ok(if *b { Schema::Never } else { Schema::Any }),
            Value::Object(m) => m,
            _ => {
                return Err(self.err(
                    ErrorKind::InvalidSchema,
                    "",
                    ptr,
                    "a schema must be an object or a boolean",
                ));
            }
        };
        let inexpressible = |c: &Self, k: &str| {
            Err(c.err(
                ErrorKind::Inexpressible,
                k,
                ptr,
                format!("the negation of `{k}` is not supported"),
            ))
        };
        let legacy_ref = self.index.legacy && m.contains_key("$ref");
        let mut branches = Vec::new();
        for (k, val) in m {
            if (legacy_ref && k != "$ref") || !crate::build::in_draft(k, self.index.draft) {
                continue;
            }
            let kptr = format!("{ptr}/{}", escape_token(k));
            let inside = matches!(
                k.as_str(),
                "properties"
                    | "additionalProperties"
                    | "patternProperties"
                    | "propertyNames"
                    | "prefixItems"
                    | "items"
                    | "additionalItems"
                    | "contains"
            );
            self.level = level + usize::from(inside);
            let part = match k.as_str() {
                "$ref" => {
                    let r = val.as_str().unwrap_or("");
                    let target = self.index.resolve(self.doc, ptr, r).map_err(|why| {
                        let msg = format!("cannot resolve {r:?}: {why}");
                        self.err(ErrorKind::UnresolvedRef, "$ref", ptr, msg)
                    })?;
                    let tv = self.index.get(self.doc, &target).unwrap_or(&Value::Bool(true));
                    self.complement_target(tv, &target, depth + 1)?
                }
                "type" => {
                    let names: Vec<&str> = match val {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => return inexpressible(self, k),
                    };
                    let mut bs: Vec<Schema> = Schema::typed_any()
                        .into_iter()
                        .filter(|s| !names.contains(&s.type_name().unwrap_or("")))
                        .collect();
                    if names.contains(&"integer") && !names.contains(&"number") {
                        bs.retain(|s| s.type_name() != Some("number"));
                        bs.push(Schema::Number(NumberSchema {
                            non_integer: true,
                            ..NumberSchema::default()
                        }));
                    }
                    Schema::any_of(bs)
                }
                "enum" => match val.as_array() {
                    Some(vals) => {
                        self.check_list(k, ptr, vals.len())?;
                        let vals: Vec<&Value> = vals.iter().collect();
                        self.complement_values(&vals, ptr, depth + 1)?
                    }
                    None => return inexpressible(self, k),
                },
                "const" => self.complement_values(&[val], ptr, depth + 1)?,
                "required" => {
                    let mut bs: Vec<Schema> = non_objects();
                    for r in val.as_array().into_iter().flatten().filter_map(Value::as_str) {
                        bs.push(Schema::Object(Arc::new(ObjectSchema {
                            properties: vec![(r.to_string(), Schema::Never)],
                            ..ObjectSchema::default()
                        })));
                    }
                    if bs.len() == 5 {
                        continue;
                    }
                    Schema::any_of(bs)
                }
                "properties" => {
                    let mut bs = Vec::new();
                    for (p, s) in val.as_object().into_iter().flatten() {
                        let c =
                            self.complement(s, &format!("{kptr}/{}", escape_token(p)), depth + 1)?;
                        if c.is_never() {
                            continue;
                        }
                        bs.push(Schema::Object(Arc::new(ObjectSchema {
                            properties: vec![(p.clone(), c)],
                            required: vec![p.clone()],
                            ..ObjectSchema::default()
                        })));
                    }
                    Schema::any_of(bs)
                }
                "minLength" | "maxLength" => {
                    let Some(n) = val.as_u64().map(|n| n as usize) else {
                        return inexpressible(self, k);
                    };
                    let s = if k == "minLength" {
                        if n == 0 {
                            continue;
                        }
                        StringSchema { max_len: Some(n - 1), ..StringSchema::default() }
                    } else {
                        StringSchema { min_len: n + 1, ..StringSchema::default() }
                    };
                    Schema::String(s)
                }
                "pattern" => {
                    let rx = self.pattern("pattern", ptr, val)?;
                    Schema::String(StringSchema {
                        regexes: vec![RegexAst::Not(Box::new(rx))],
                        ..StringSchema::default()
                    })
                }
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    let Some(n) = val.as_number() else { return inexpressible(self, k) };
                    let d = self.decimal(n, k, ptr)?;
                    if self.index.legacy && (k == "minimum" || k == "maximum") {
                        // draft-04 boolean exclusives change the meaning of these.
                        if m.get(&format!("exclusiveM{}", &k[1..])).is_some_and(Value::is_boolean) {
                            return inexpressible(self, k);
                        }
                    }
                    match k.as_str() {
                        "minimum" => number(None, Some(Bound { value: d, exclusive: true })),
                        "exclusiveMinimum" => {
                            number(None, Some(Bound { value: d, exclusive: false }))
                        }
                        "maximum" => number(Some(Bound { value: d, exclusive: true }), None),
                        _ => number(Some(Bound { value: d, exclusive: false }), None),
                    }
                }
                "additionalProperties" => {
                    let c = self.complement(val, &kptr, depth + 1)?;
                    if c.is_never() {
                        continue;
                    }
                    let mut known: Vec<RegexAst> = Vec::new();
                    if let Some(props) = m.get("properties").and_then(Value::as_object) {
                        known.extend(props.keys().map(|k| RegexAst::Literal(k.clone())));
                    }
                    if let Some(pp) = m.get("patternProperties").and_then(Value::as_object) {
                        for p in pp.keys() {
                            known.push(self.pattern(
                                "patternProperties",
                                ptr,
                                &Value::String(p.clone()),
                            )?);
                        }
                    }
                    let rx = if known.is_empty() {
                        any_key()
                    } else {
                        RegexAst::Not(Box::new(RegexAst::Or(known)))
                    };
                    witness(rx, c)
                }
                "patternProperties" => {
                    let mut bs = Vec::new();
                    for (p, sub) in val.as_object().into_iter().flatten() {
                        let c = self.complement(
                            sub,
                            &format!("{kptr}/{}", escape_token(p)),
                            depth + 1,
                        )?;
                        if c.is_never() {
                            continue;
                        }
                        let rx =
                            self.pattern("patternProperties", ptr, &Value::String(p.clone()))?;
                        bs.push(witness(rx, c));
                    }
                    Schema::any_of(bs)
                }
                "propertyNames" => {
                    let s = self.compile_value(val, &kptr, depth + 1)?;
                    match self.key_regex(&s, ptr, depth + 1)? {
                        None => continue,
                        Some(rx) => witness(RegexAst::Not(Box::new(rx)), Schema::Any),
                    }
                }
                "prefixItems" | "items" if val.is_array() => {
                    // As the typed core reads them: `prefixItems` from
                    // 2020-12 on, an array-form `items` taking its place.
                    let shadowed = m.get("items").is_some_and(Value::is_array);
                    if k == "prefixItems" && (self.index.draft < 2020 || shadowed) {
                        continue;
                    }
                    // Some item of the prefix fails its schema: one branch
                    // per position, the array long enough to have it.
                    let items: &[Value] = val.as_array().map_or(&[], Vec::as_slice);
                    self.check_list(k, ptr, items.len())?;
                    let mut bs = Vec::new();
                    for (i, b) in items.iter().enumerate() {
                        let c = self.complement(b, &format!("{kptr}/{i}"), depth + 1)?;
                        if c.is_never() {
                            continue;
                        }
                        let mut prefix = vec![Schema::Any; i];
                        prefix.push(c);
                        bs.push(Schema::Array(Arc::new(ArraySchema {
                            prefix,
                            min: i + 1,
                            ..ArraySchema::default()
                        })));
                    }
                    Schema::any_of(bs)
                }
                "items" if val.is_object() || val.is_boolean() => {
                    if m.contains_key("prefixItems") && self.index.draft >= 2020 {
                        return inexpressible(self, k);
                    }
                    let c = self.complement(val, &kptr, depth + 1)?;
                    if c.is_never() {
                        continue;
                    }
                    Schema::Array(Arc::new(ArraySchema {
                        contains: vec![(c, 1)],
                        ..ArraySchema::default()
                    }))
                }
                "oneOf" => {
                    // Not exactly one: none of the branches, or at least two.
                    let items: &[Value] = val.as_array().map_or(&[], Vec::as_slice);
                    self.check_list(k, ptr, items.len())?;
                    let mut none = Schema::Any;
                    let mut pos = Vec::with_capacity(items.len());
                    for (i, b) in items.iter().enumerate() {
                        let bp = format!("{kptr}/{i}");
                        let c = self.complement(b, &bp, depth + 1)?;
                        none = self.intersect(none, c, depth + 1)?;
                        pos.push(self.compile_value(b, &bp, depth + 1)?);
                    }
                    let mut bs = vec![none];
                    for i in 0..pos.len() {
                        for j in i + 1..pos.len() {
                            let (x, y) =
                                (self.charged_clone(&pos[i])?, self.charged_clone(&pos[j])?);
                            bs.push(self.intersect(x, y, depth + 1)?);
                            self.check_branches(bs.len())?;
                        }
                    }
                    Schema::any_of(bs)
                }
                "contains" if !m.contains_key("minContains") && !m.contains_key("maxContains") => {
                    let c = self.complement(val, &kptr, depth + 1)?;
                    Schema::Array(Arc::new(ArraySchema {
                        items: Box::new(c),
                        ..ArraySchema::default()
                    }))
                }
                "multipleOf" => {
                    let Some(n) = val.as_number() else { return inexpressible(self, k) };
                    let d = Some(self.decimal(n, k, ptr)?).filter(|d| {
                        !d.neg && !d.is_zero() && crate::number::multiple_of(d).is_some()
                    });
                    let Some(d) = d else {
                        return inexpressible(self, k);
                    };
                    Schema::Number(NumberSchema {
                        not_multiple_of: vec![d],
                        ..NumberSchema::default()
                    })
                }
                "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
                    let Some(n) = val.as_u64().map(|n| n as usize) else {
                        return inexpressible(self, k);
                    };
                    let (min, max) = if k.starts_with("min") {
                        if n == 0 {
                            continue;
                        }
                        (0, Some(n - 1))
                    } else {
                        (n + 1, None)
                    };
                    if k.ends_with("Items") {
                        Schema::Array(Arc::new(ArraySchema { min, max, ..ArraySchema::default() }))
                    } else {
                        Schema::Object(Arc::new(ObjectSchema {
                            min,
                            max,
                            ..ObjectSchema::default()
                        }))
                    }
                }
                "anyOf" => {
                    let mut acc = Schema::Any;
                    let items: &[Value] = val.as_array().map_or(&[], Vec::as_slice);
                    self.check_list(k, ptr, items.len())?;
                    for (i, b) in items.iter().enumerate() {
                        let c = self.complement(b, &format!("{kptr}/{i}"), depth + 1)?;
                        acc = self.intersect(acc, c, depth + 1)?;
                    }
                    acc
                }
                "allOf" => {
                    let mut bs = Vec::new();
                    let items: &[Value] = val.as_array().map_or(&[], Vec::as_slice);
                    self.check_list(k, ptr, items.len())?;
                    for (i, b) in items.iter().enumerate() {
                        bs.push(self.complement(b, &format!("{kptr}/{i}"), depth + 1)?);
                    }
                    Schema::any_of(bs)
                }
                "not" => self.compile_value(val, &kptr, depth + 1)?,
                "if" => {
                    // Not `(I ∩ T) ∪ (¬I ∩ E)`: `(I ∩ ¬T) ∪ (¬I ∩ ¬E)`.
                    let (then, els) = (m.get("then"), m.get("else"));
                    if then.is_none() && els.is_none() {
                        continue;
                    }
                    let i = self.compile_value(val, &kptr, depth + 1)?;
                    let ni = self.complement(val, &kptr, depth + 1)?;
                    let side = |c: &mut Self, v: Option<&Value>, name: &str| match v {
                        Some(v) => c.complement(v, &format!("{ptr}/{name}"), depth + 1),
                        None => Ok(Schema::Never),
                    };
                    let nt = side(self, then, "then")?;
                    let ne = side(self, els, "else")?;
                    let a = self.intersect(i, nt, depth + 1)?;
                    let b = self.intersect(ni, ne, depth + 1)?;
                    Schema::any_of(vec![a, b])
                }
                "then" | "else" => continue,
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    // An object with the key that lacks a name it needs, or
                    // fails the schema it brings.
                    let Some(deps) = val.as_object() else { return inexpressible(self, k) };
                    let mut bs = Vec::new();
                    for (prop, dep) in deps {
                        // Listed, so that it keeps its place in schema order.
                        let present = || ObjectSchema {
                            properties: vec![(prop.clone(), Schema::Any)],
                            required: vec![prop.clone()],
                            ..ObjectSchema::default()
                        };
                        match dep {
                            Value::Array(names) if k != "dependentSchemas" => {
                                for n in names {
                                    let Some(n) = n.as_str() else {
                                        return inexpressible(self, k);
                                    };
                                    let mut o = present();
                                    if n == prop {
                                        continue;
                                    }
                                    o.properties.push((n.to_string(), Schema::Never));
                                    bs.push(Schema::Object(Arc::new(o)));
                                }
                            }
                            dep if k != "dependentRequired" => {
                                let dptr = format!("{kptr}/{}", escape_token(prop));
                                let c = self.complement(dep, &dptr, depth + 1)?;
                                let o = Schema::Object(Arc::new(present()));
                                bs.push(self.intersect(o, c, depth + 1)?);
                            }
                            _ => return inexpressible(self, k),
                        }
                    }
                    Schema::any_of(bs)
                }
                "uniqueItems" if val == &Value::Bool(false) => continue,
                "format" => {
                    let Some(name) = val.as_str() else { return inexpressible(self, k) };
                    match self.format_complement(name, ptr)? {
                        Some(rx) => Schema::String(StringSchema {
                            regexes: vec![RegexAst::Not(Box::new(rx))],
                            ..StringSchema::default()
                        }),
                        None => continue,
                    }
                }
                k if is_vocabulary(k) => return inexpressible(self, k),
                _ => continue,
            };
            branches.push(part);
            self.check_branches(branches.len())?;
        }
        self.clear_evaluated(Schema::any_of(branches), depth)
    }
}

/// Objects with at least one member whose key matches `rx` and value `s`.
fn witness(rx: RegexAst, s: Schema) -> Schema {
    Schema::Object(Arc::new(ObjectSchema { witnesses: vec![(rx, s)], ..ObjectSchema::default() }))
}

fn non_objects() -> Vec<Schema> {
    Schema::typed_any().into_iter().filter(|s| s.type_name() != Some("object")).collect()
}

/// Whether `k` is an assertion or applicator keyword of the JSON Schema vocabularies.
pub(crate) fn is_vocabulary(k: &str) -> bool {
    matches!(
        k,
        "type"
            | "enum"
            | "const"
            | "multipleOf"
            | "maximum"
            | "exclusiveMaximum"
            | "minimum"
            | "exclusiveMinimum"
            | "maxLength"
            | "minLength"
            | "pattern"
            | "maxItems"
            | "minItems"
            | "uniqueItems"
            | "maxContains"
            | "minContains"
            | "maxProperties"
            | "minProperties"
            | "required"
            | "dependentRequired"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "not"
            | "if"
            | "then"
            | "else"
            | "dependentSchemas"
            | "prefixItems"
            | "items"
            | "contains"
            | "properties"
            | "patternProperties"
            | "additionalProperties"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "$ref"
            | "$dynamicRef"
            | "format"
            | "additionalItems"
            | "dependencies"
            | "$recursiveRef"
    )
}
