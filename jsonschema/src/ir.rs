//! The normalized schema: a union of typed schemas, with `$ref`s kept for recursion.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use derivre::RegexAst;

use crate::number::{Bound, Decimal};

/// Index of a compiled `$ref` target.
pub(crate) type DefId = usize;

/// A normalized schema. Every constraint is represented exactly.
///
/// `Hash` (written out below, since derivre's `RegexAst` has none) reads
/// every field and every regex whole: the key of a deferred intersection
/// (`build/defs.rs`) is a digest of it. There is no `Eq`: schemas are
/// never compared, only digested.
#[derive(Clone, Debug)]
pub(crate) enum Schema {
    /// Every JSON value.
    Any,
    /// No JSON value.
    Never,
    Null,
    /// `Some(b)`: only that boolean.
    Boolean(Option<bool>),
    Number(NumberSchema),
    String(StringSchema),
    /// Shared: copies of a schema share its containers until one is
    /// changed (`Arc::make_mut`), so a copy costs one count.
    Array(Arc<ArraySchema>),
    Object(Arc<ObjectSchema>),
    /// A union.
    AnyOf(Vec<Schema>),
    /// The schema of a definition (a `$ref` target), compiled once.
    Ref(DefId),
}

#[derive(Clone, Debug, Default, Hash)]
pub(crate) struct NumberSchema {
    pub(crate) integer: bool,
    /// Only numbers with a non-zero fractional part (the complement of `integer`).
    pub(crate) non_integer: bool,
    pub(crate) min: Option<Bound>,
    pub(crate) max: Option<Bound>,
    /// Every `multipleOf` (all must hold).
    pub(crate) multiple_of: Vec<Decimal>,
    /// Divisors the value must not be a multiple of (from `not`).
    pub(crate) not_multiple_of: Vec<Decimal>,
    /// Values excluded (from `not` with `const`/`enum`).
    pub(crate) excluded: Vec<Decimal>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct StringSchema {
    /// Length bounds in characters.
    pub(crate) min_len: usize,
    pub(crate) max_len: Option<usize>,
    /// Regexes over the decoded string; all must match.
    pub(crate) regexes: Vec<RegexAst>,
}

#[derive(Clone, Debug, Hash)]
pub(crate) struct ArraySchema {
    pub(crate) prefix: Vec<Schema>,
    /// The schema of items after the prefix (`Never`: no more items).
    pub(crate) items: Box<Schema>,
    pub(crate) min: usize,
    pub(crate) max: Option<usize>,
    /// `uniqueItems: true`: the pointer of the schema holding it (for the
    /// error when it cannot be expressed).
    pub(crate) unique: Option<String>,
    /// Each entry requires at least `n` items matching the schema (`contains`
    /// with `minContains`).
    pub(crate) contains: Vec<(Schema, usize)>,
    /// Each entry allows at most `n` items matching the schema (`contains`
    /// with `maxContains`), with the schema's complement.
    pub(crate) contains_at_most: Vec<(Schema, Schema, usize)>,
    /// For `unevaluatedItems`: how many leading items `prefixItems`/`items`
    /// of this schema (or of an in-place applicator that holds) evaluate
    /// (`usize::MAX`: all) ...
    pub(crate) evaluated: usize,
    /// ... and the `contains` schemas whose matching items are evaluated too.
    /// Both are empty in complements (`not` drops annotations).
    pub(crate) evaluated_contains: Vec<Schema>,
}

impl Default for ArraySchema {
    fn default() -> ArraySchema {
        ArraySchema {
            prefix: Vec::new(),
            items: Box::new(Schema::Any),
            min: 0,
            max: None,
            unique: None,
            contains: Vec::new(),
            contains_at_most: Vec::new(),
            evaluated: 0,
            evaluated_contains: Vec::new(),
        }
    }
}

/// An object schema.
///
/// A key listed in `properties` takes that schema; any other key takes the
/// schema of the region (a regex over decoded keys) that matches it; a key in
/// no region is forbidden. Regions are pairwise disjoint.
#[derive(Clone, Debug)]
pub(crate) struct ObjectSchema {
    pub(crate) properties: Vec<(String, Schema)>,
    pub(crate) regions: Vec<(RegexAst, Schema)>,
    pub(crate) required: Vec<String>,
    pub(crate) min: usize,
    pub(crate) max: Option<usize>,
    /// Each witness requires at least one member whose key matches the
    /// regex and whose value matches the schema (from negated
    /// `additionalProperties`, `patternProperties`, `propertyNames`).
    pub(crate) witnesses: Vec<(RegexAst, Schema)>,
    /// For `unevaluatedProperties`: the keys (a regex over decoded keys) that
    /// `properties`, `patternProperties` or `additionalProperties` of this
    /// schema or of an in-place applicator that holds evaluate. A subset is
    /// always safe (stricter); complements evaluate nothing.
    pub(crate) evaluated: RegexAst,
}

impl Hash for Schema {
    fn hash<H: Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            Schema::Any | Schema::Never | Schema::Null => {}
            Schema::Boolean(b) => b.hash(h),
            Schema::Number(n) => n.hash(h),
            Schema::String(st) => st.hash(h),
            Schema::Array(a) => a.hash(h),
            Schema::Object(o) => o.hash(h),
            Schema::AnyOf(xs) => xs.hash(h),
            Schema::Ref(d) => d.hash(h),
        }
    }
}

impl Hash for StringSchema {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.min_len.hash(h);
        self.max_len.hash(h);
        h.write_usize(self.regexes.len());
        self.regexes.iter().for_each(|r| hash_regex(r, h));
    }
}

impl Hash for ObjectSchema {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.properties.hash(h);
        for members in [&self.regions, &self.witnesses] {
            h.write_usize(members.len());
            for (k, v) in members {
                hash_regex(k, h);
                v.hash(h);
            }
        }
        self.required.hash(h);
        self.min.hash(h);
        self.max.hash(h);
        hash_regex(&self.evaluated, h);
    }
}

/// Hashes a regex tree by its complete text form (`cache::write_key`,
/// which is injective; derivre's `Debug` stops after 512 characters).
fn hash_regex<H: Hasher>(r: &RegexAst, h: &mut H) {
    let mut text = String::new();
    crate::cache::write_key(r, &mut text);
    text.hash(h);
}

/// The regex of every key.
pub(crate) fn any_key() -> RegexAst {
    RegexAst::Regex("(?s:.*)".to_string())
}

impl Default for ObjectSchema {
    fn default() -> ObjectSchema {
        ObjectSchema {
            properties: Vec::new(),
            regions: vec![(any_key(), Schema::Any)],
            required: Vec::new(),
            min: 0,
            max: None,
            witnesses: Vec::new(),
            evaluated: RegexAst::NoMatch,
        }
    }
}

impl Schema {
    /// The number of nodes of this schema (its schemas and the nodes of its
    /// regexes), counting at most `cap`: the work of a clone, measured with
    /// at most `cap` steps.
    pub(crate) fn size_up_to(&self, cap: usize) -> usize {
        let mut n = 0;
        let mut todo: Vec<&Schema> = vec![self];
        while let Some(s) = todo.pop() {
            n += 1;
            if n >= cap {
                return cap;
            }
            match s {
                Schema::String(st) => n += regex_size(&st.regexes, cap - n),
                Schema::Object(o) => {
                    let keys = o.regions.iter().chain(&o.witnesses).map(|(r, _)| r);
                    for r in keys.chain([&o.evaluated]) {
                        n += regex_size(std::slice::from_ref(r), cap - n);
                    }
                }
                _ => {}
            }
            s.push_children(&mut todo);
        }
        n.min(cap)
    }

    /// The schemas directly inside this one (items, members, branches).
    fn push_children<'s>(&'s self, todo: &mut Vec<&'s Schema>) {
        match self {
            Schema::Array(a) => {
                todo.extend(&a.prefix);
                todo.push(&a.items);
                todo.extend(a.contains.iter().map(|(s, _)| s));
                todo.extend(a.contains_at_most.iter().flat_map(|(s, c, _)| [s, c]));
                todo.extend(&a.evaluated_contains);
            }
            Schema::Object(o) => {
                todo.extend(o.properties.iter().map(|(_, s)| s));
                todo.extend(o.regions.iter().map(|(_, s)| s));
                todo.extend(o.witnesses.iter().map(|(_, s)| s));
            }
            Schema::AnyOf(bs) => todo.extend(bs),
            _ => {}
        }
    }

    /// The definitions this schema refers to (each once, in no set order).
    pub(crate) fn refs(&self) -> Vec<DefId> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut todo: Vec<&Schema> = vec![self];
        while let Some(s) = todo.pop() {
            if let Schema::Ref(d) = s
                && seen.insert(*d)
            {
                out.push(*d);
            }
            s.push_children(&mut todo);
        }
        out
    }

    /// All values of one JSON type (`integer` is a subset of `number`).
    pub(crate) fn of_type(t: &str) -> Option<Schema> {
        Some(match t {
            "null" => Schema::Null,
            "boolean" => Schema::Boolean(None),
            "integer" => Schema::Number(NumberSchema { integer: true, ..NumberSchema::default() }),
            "number" => Schema::Number(NumberSchema::default()),
            "string" => Schema::String(StringSchema::default()),
            "array" => Schema::Array(Arc::new(ArraySchema::default())),
            "object" => Schema::Object(Arc::new(ObjectSchema::default())),
            _ => return None,
        })
    }

    /// Every value, as a union of the six disjoint types.
    pub(crate) fn typed_any() -> Vec<Schema> {
        ["null", "boolean", "number", "string", "array", "object"]
            .iter()
            .filter_map(|t| Schema::of_type(t))
            .collect()
    }

    /// The type name of a typed schema.
    pub(crate) fn type_name(&self) -> Option<&'static str> {
        Some(match self {
            Schema::Null => "null",
            Schema::Boolean(_) => "boolean",
            Schema::Number(_) => "number",
            Schema::String(_) => "string",
            Schema::Array(_) => "array",
            Schema::Object(_) => "object",
            _ => return None,
        })
    }

    /// A union, flattened, without `Never` branches.
    pub(crate) fn any_of(branches: Vec<Schema>) -> Schema {
        let mut out = Vec::new();
        for b in branches {
            match b {
                Schema::Never => {}
                Schema::AnyOf(bs) => out.extend(bs),
                Schema::Any => return Schema::Any,
                b => out.push(b),
            }
        }
        match out.len() {
            0 => Schema::Never,
            1 => out.pop().unwrap_or(Schema::Never),
            _ => Schema::AnyOf(out),
        }
    }

    pub(crate) fn is_never(&self) -> bool {
        matches!(self, Schema::Never)
    }
}

/// The number of nodes of `regexes`, counting at most `cap`; the text of a
/// literal or of a regex still to parse counts a node per 16 bytes.
pub(crate) fn regex_size(regexes: &[RegexAst], cap: usize) -> usize {
    let mut n = 0;
    let mut todo: Vec<&RegexAst> = regexes.iter().collect();
    while let Some(r) = todo.pop() {
        if n >= cap {
            return cap;
        }
        n += 1;
        if let RegexAst::Regex(s) | RegexAst::Literal(s) = r {
            n += s.len() / 16;
        }
        todo.extend(r.get_args());
    }
    n.min(cap)
}
