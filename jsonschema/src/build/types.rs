//! The typed core: `type` and the per-type keywords, and `const`/`enum` values.

use std::sync::Arc;

use derivre::RegexAst;
use serde_json::{Map, Value};

use super::{Compiler, ptr_join};
use crate::error::{ErrorKind, Result};
use crate::intersect::{normalize_array, normalize_object};
use crate::ir::{ArraySchema, NumberSchema, ObjectSchema, Schema, StringSchema, any_key};
use crate::number::{Bound, Decimal};

impl Compiler<'_> {
    /// A `const` value (or one `enum` value) as a schema.
    pub(crate) fn constant(&mut self, v: &Value, ptr: &str) -> Result<Schema> {
        self.tick(ptr, 0)?;
        Ok(match v {
            Value::Null => Schema::Null,
            Value::Bool(b) => Schema::Boolean(Some(*b)),
            Value::Number(n) => {
                let d = self.decimal(n, "const", ptr)?;
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
                Schema::Array(Arc::new(ArraySchema {
                    min: a.len(),
                    max: Some(a.len()),
                    prefix,
                    items: Box::new(Schema::Never),
                    ..ArraySchema::default()
                }))
            }
            Value::Object(m) => {
                let mut properties = Vec::with_capacity(m.len());
                for (k, x) in m {
                    properties.push((k.clone(), self.constant(x, ptr)?));
                }
                Schema::Object(Arc::new(ObjectSchema {
                    required: m.keys().cloned().collect(),
                    properties,
                    regions: Vec::new(),
                    ..ObjectSchema::default()
                }))
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
            Some(Value::Number(n)) => self.decimal(n, k, ptr).map(Some),
            Some(_) => Err(self.invalid(k, ptr, "must be a number")),
        }
    }

    /// `type` and the per-type keywords.
    pub(super) fn core(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        depth: usize,
    ) -> Result<Schema> {
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
                // Items and members are one value further in (`level`).
                "array" | "object" => {
                    self.level += 1;
                    let r = if t == "array" {
                        self.array_core(m, ptr, depth)
                    } else {
                        self.object_core(m, ptr, depth)
                    };
                    self.level -= 1;
                    r?
                }
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
            s.regexes.extend(self.format_regex(f, ptr)?);
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
