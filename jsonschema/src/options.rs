//! Compilation options: whitespace, separators, property order, formats, limits.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// How JSON whitespace may appear between tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Whitespace {
    /// No whitespace at all: `{"a":1,"b":[1,2]}`.
    Compact,
    /// Whitespace matching this regex (derivre syntax, non-empty matches only)
    /// may appear at most once around each structural character (`{ } [ ] , :`).
    /// It should be bounded so that a model cannot loop on whitespace.
    Pattern(String),
}

impl Whitespace {
    /// The default flexible pattern: a few spaces or tabs, optionally one
    /// line break followed by an indentation of at most 64 spaces or tabs.
    pub fn bounded() -> Whitespace {
        Whitespace::Pattern(r"[ \t]{0,4}(\r?\n[ \t]{0,64})?".to_string())
    }

    /// Any amount of JSON whitespace (what llguidance allows by default).
    pub fn unbounded() -> Whitespace {
        Whitespace::Pattern(r"[\x20\x0A\x0D\x09]+".to_string())
    }
}

/// The order in which object properties are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PropertyOrder {
    /// Properties listed in `properties` come in schema order (merged left to
    /// right through `allOf`/`$ref`), then required ones not listed, then any
    /// additional or pattern properties in any order.
    Schema,
    /// Any order, as the JSON data model has it: listed and additional
    /// properties interleave freely, each listed name at most once, the
    /// required ones always. Objects become permutation phrases of the
    /// `earley` engine, whose cost does not grow with the number of
    /// orders. One exception keeps the schema order (a stricter grammar):
    /// an object under a negated member constraint (`not` of
    /// `properties`/`required`-like keywords) that lists more than 10
    /// names, whose any-order rules would grow as `2^names`.
    Any,
}

/// Limits that stop hostile schemas quickly with [`ErrorKind::LimitExceeded`](crate::ErrorKind::LimitExceeded).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Maximum number of schema nodes visited while normalizing.
    pub max_nodes: usize,
    /// Maximum number of schema and regex nodes copied, or built into
    /// derivre expressions for an emptiness check, while normalizing. An
    /// intersection with a union copies the other operand once per branch,
    /// `oneOf` copies each pair of branches to try a disjointness proof and
    /// checks the intersection of their key regexes, so nested unions
    /// multiply the work; a visit counts once in `max_nodes` but may copy
    /// or build thousands of nodes (overlapping `oneOf`s on MaskBench took
    /// up to 10 s before this limit).
    pub max_copied_nodes: usize,
    /// Maximum depth of nested schemas and `$ref` inlining.
    pub max_depth: usize,
    /// Maximum number of branches one `anyOf` may grow to (through `allOf`
    /// distribution, `dependentRequired`, `if`/`then`/`else`).
    pub max_branches: usize,
    /// Maximum number of grammar nonterminals.
    pub max_nonterminals: usize,
    /// Maximum number of grammar rule alternatives.
    pub max_rules: usize,
    /// Fuel for each regex emptiness or containment check (derivre units).
    pub regex_fuel: u64,
    /// Maximum number of decimal digits in a numeric bound, constant or
    /// `multipleOf`, written out without exponent (`1e-400` has 400).
    pub max_number_digits: usize,
    /// Maximum number of regexes (patterns, formats, their negations; a
    /// literal or the negation of finitely many literals does not count)
    /// one string must match at once. Their intersection is built from
    /// derivatives whose number can grow exponentially with the count of
    /// regexes (40 unanchored patterns in one `allOf` took derivre 5.5 GB),
    /// so the count is checked before any regex work.
    pub max_string_regexes: usize,
    /// Maximum number of schemas one `allOf`, `anyOf` or `oneOf` lists.
    pub max_subschemas: usize,
    /// Maximum number of values one `enum` lists.
    pub max_enum_values: usize,
    /// Maximum number of negated member constraints on one object (the
    /// `not` of `properties`, `additionalProperties` or a `required`-like
    /// keyword: some member must break it). The grammar tracks which of
    /// them a member has met so far, so an object's states and each
    /// member's value options grow as `2^n`, and every option is an
    /// intersection built at compile time. At most 16 whatever the setting
    /// (a member's met constraints are bits of a `u32`).
    pub max_negated_members: usize,
    /// Maximum number of referenced documents (from
    /// [`Options::documents`]) one compilation loads.
    pub max_documents: usize,
    /// Maximum size of a schema text given to [`compile_str`](crate::compile_str), in bytes.
    pub max_schema_bytes: usize,
    /// Maximum nesting of arrays and objects in a schema text given to
    /// [`compile_str`](crate::compile_str).
    pub max_json_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_nodes: 200_000,
            max_copied_nodes: 10_000_000,
            max_depth: 64,
            max_branches: 4_096,
            max_nonterminals: 200_000,
            max_rules: 400_000,
            regex_fuel: 20_000,
            max_number_digits: 1_000,
            max_string_regexes: 12,
            max_subschemas: 1_000,
            max_enum_values: 10_000,
            max_negated_members: 8,
            max_documents: 256,
            max_schema_bytes: 16 << 20,
            max_json_depth: 512,
        }
    }
}

/// Options of [`compile`](crate::compile).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Whitespace between tokens; never before the first or after the last token.
    pub whitespace: Whitespace,
    /// Regex (derivre syntax) between array items and between object members.
    pub item_separator: String,
    /// Regex (derivre syntax) between an object key and its value.
    pub key_separator: String,
    /// Property order.
    pub property_order: PropertyOrder,
    /// When set, `additionalProperties` is treated as `false` wherever the
    /// schema leaves it unspecified (the spec's default is `true`).
    pub forbid_additional_properties: bool,
    /// A cap on the length (in characters) of string values without
    /// `maxLength` (keys have [`max_key_length`](Options::max_key_length));
    /// `None` leaves them unbounded, as the spec does. A stricter grammar
    /// (every text it accepts is still valid) that keeps a sampler from
    /// writing one string forever.
    pub max_string_length: Option<usize>,
    /// A cap on the length (in characters) of keys that are not listed
    /// property names (those of `additionalProperties` and
    /// `patternProperties`); `None` leaves them unbounded, as the spec
    /// does. Applied only where the cap keeps the key's lexeme simple: a key
    /// region with a `pattern` other than "any text" is left unbounded
    /// (capping `^.*$` excluding the listed names made one MaskBench
    /// schema's key lexeme too complex for the lexer's emptiness fuel).
    pub max_key_length: Option<usize>,
    /// A cap on the number of members of one object whose keys are not
    /// listed property names; `None` leaves it unbounded, as the spec does.
    /// Where members come in any order (a permutation phrase, which counts
    /// all members alike) it caps the members in all at the listed names
    /// plus this number. Like the length caps, a stricter grammar that keeps
    /// a sampler from writing members forever.
    pub max_additional_properties: Option<usize>,
    /// A cap on the length (in characters) of numbers written by the
    /// grammar (not of `const`/`enum` values); `None` leaves them unbounded,
    /// as the spec does. Like [`max_string_length`](Options::max_string_length),
    /// it keeps a sampler from writing digits forever (`5.283176543199888…`).
    pub max_number_length: Option<usize>,
    /// Accept an integer written with a zero fraction (`1.0`), which the spec
    /// counts as an integer since draft-06 (never in draft-04 schemas).
    pub integer_zero_fraction: bool,
    /// Treat `oneOf` as `anyOf` even when the branches are not provably disjoint
    /// (a looser grammar: off by default, on in lenient mode).
    pub coerce_one_of: bool,
    /// Ignore unsupported keywords, recording a warning for each.
    pub lenient: bool,
    /// Make an unknown `format` an error
    /// ([`ErrorKind::UnknownFormat`](crate::ErrorKind::UnknownFormat)).
    /// Off by default: JSON Schema 2019-09 and 2020-12 make `format` an
    /// annotation unless the format-assertion vocabulary is in use, and
    /// earlier drafts let validators ignore formats they do not know, so an
    /// unknown format leaves the string unconstrained and is reported in
    /// [`Compiled::warnings`](crate::Compiled::warnings).
    pub strict_formats: bool,
    /// Formats defined by the caller, by name: an ECMA-262 regex (the
    /// dialect of `pattern`) that the whole string must match, as if
    /// written `^(?:regex)$`. A name here takes precedence over a built-in
    /// format of the same name; since the regex defines the format, its
    /// negation (under `not`, `oneOf`, `if`) is exact.
    pub formats: BTreeMap<String, String>,
    /// Schema documents a `$ref` may name besides the one compiled (by
    /// URI; no I/O of our own).
    pub documents: Documents,
    /// Resource limits.
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            whitespace: Whitespace::bounded(),
            item_separator: ",".to_string(),
            key_separator: ":".to_string(),
            property_order: PropertyOrder::Schema,
            forbid_additional_properties: false,
            max_string_length: None,
            max_number_length: None,
            max_key_length: None,
            max_additional_properties: None,
            integer_zero_fraction: true,
            coerce_one_of: false,
            lenient: false,
            strict_formats: false,
            formats: BTreeMap::new(),
            documents: Documents::default(),
            limits: Limits::default(),
        }
    }
}

impl Options {
    /// The settings of llguidance 1.9's JSON compiler defaults: unbounded
    /// flexible whitespace, `,` and `:`, schema property order, integers
    /// without a fraction, strict (not lenient) keywords.
    pub fn llguidance_compat() -> Options {
        Options {
            whitespace: Whitespace::unbounded(),
            integer_zero_fraction: false,
            ..Options::default()
        }
    }

    /// Compact JSON: no whitespace anywhere.
    pub fn compact() -> Options {
        Options { whitespace: Whitespace::Compact, ..Options::default() }
    }

    /// These options with `whitespace`.
    pub fn with_whitespace(mut self, whitespace: Whitespace) -> Options {
        self.whitespace = whitespace;
        self
    }

    /// These options with `item` between array items and object members and
    /// `key` between a key and its value (regexes, derivre syntax).
    pub fn with_separators(mut self, item: &str, key: &str) -> Options {
        self.item_separator = item.to_owned();
        self.key_separator = key.to_owned();
        self
    }

    /// These options with [`max_string_length`](Options::max_string_length)
    /// and [`max_number_length`](Options::max_number_length).
    pub fn with_length_caps(mut self, string: Option<usize>, number: Option<usize>) -> Options {
        self.max_string_length = string;
        self.max_number_length = number;
        self
    }

    /// These options with [`max_key_length`](Options::max_key_length) and
    /// [`max_additional_properties`](Options::max_additional_properties).
    pub fn with_member_caps(mut self, key: Option<usize>, members: Option<usize>) -> Options {
        self.max_key_length = key;
        self.max_additional_properties = members;
        self
    }

    /// These options with `order` for object properties.
    pub fn with_property_order(mut self, order: PropertyOrder) -> Options {
        self.property_order = order;
        self
    }

    /// These options with [`integer_zero_fraction`](Options::integer_zero_fraction) set to `on`.
    pub fn with_integer_zero_fraction(mut self, on: bool) -> Options {
        self.integer_zero_fraction = on;
        self
    }

    /// These options with [`strict_formats`](Options::strict_formats) set to `on`.
    pub fn with_strict_formats(mut self, on: bool) -> Options {
        self.strict_formats = on;
        self
    }

    /// These options with the format `name` defined by `regex` (ECMA-262,
    /// matched against the whole string; see [`formats`](Options::formats)).
    pub fn with_format(mut self, name: &str, regex: &str) -> Options {
        self.formats.insert(name.to_owned(), regex.to_owned());
        self
    }

    /// These options with the document `doc` known by `uri` (see
    /// [`Documents::insert`]).
    pub fn with_document(mut self, uri: &str, doc: Value) -> Options {
        self.documents.insert(uri, doc);
        self
    }

    /// These options with `documents`.
    pub fn with_documents(mut self, documents: Documents) -> Options {
        self.documents = documents;
        self
    }

    /// These options with `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Options {
        self.limits = limits;
        self
    }
}

/// A function that supplies the schema document of an absolute URI
/// (without fragment), or `None` when it has none.
pub type Resolver = dyn Fn(&str) -> Option<Value> + Send + Sync;

/// The schema documents a `$ref` may name besides the compiled one: a map
/// by URI and, for the URIs the map lacks, an optional [`Resolver`]. The
/// compiler does no I/O; whoever has the documents hands them over.
///
/// A `$ref` resolves per the spec: against the base URI in effect (the
/// `$id`s around it), to an absolute URI; its document part names a
/// resource, its fragment a JSON pointer or an `$anchor` in it. A resource
/// is found, in this order: in the compiled document (its `$id`s); in the
/// map, under a key that resolves (against the compiled document's base
/// URI) to the same URI, or whose document's top-level `$id` does; from
/// the resolver. So `"base.json"` serves `{"$ref": "base.json#/$defs/x"}`
/// in a document without `$id`, and
/// `"https://json.schemastore.org/base.json"` serves the same reference in
/// a document whose `$id` is `https://json.schemastore.org/tsconfig.json`.
/// Only the documents a reference reaches are loaded (transitively, at
/// most [`Limits::max_documents`]). References across documents may form
/// cycles: they stay recursion, as inside one document. A document's
/// `$schema` is not read: the compiled document's draft applies to all.
/// Numbers in these documents are read as `serde_json` holds them (see
/// [`compile`](crate::compile)).
///
/// Equality and the [`Debug`] form (the front door's cache key) include
/// every document's text ([`json_identical`](crate::json_identical): member
/// order counts) and the resolver's identity (the same `Arc`).
#[derive(Clone, Default)]
pub struct Documents {
    map: BTreeMap<String, Arc<Value>>,
    resolver: Option<Arc<Resolver>>,
}

impl Documents {
    /// No documents.
    pub fn new() -> Documents {
        Documents::default()
    }

    /// Adds `doc` under `uri` (absolute, or relative to the compiled
    /// document's base URI), replacing a document under the same key.
    pub fn insert(&mut self, uri: &str, doc: Value) {
        self.map.insert(uri.to_owned(), Arc::new(doc));
    }

    /// These documents with `doc` under `uri`.
    pub fn with(mut self, uri: &str, doc: Value) -> Documents {
        self.insert(uri, doc);
        self
    }

    /// These documents with `resolver` asked for the URIs the map lacks.
    pub fn with_resolver(
        mut self,
        resolver: impl Fn(&str) -> Option<Value> + Send + Sync + 'static,
    ) -> Documents {
        self.resolver = Some(Arc::new(resolver));
        self
    }

    /// The keys of the map, in order.
    pub fn uris(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// The number of documents in the map.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the map is empty and there is no resolver.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty() && self.resolver.is_none()
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, &Arc<Value>)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn resolve(&self, uri: &str) -> Option<Value> {
        self.resolver.as_ref().and_then(|r| r(uri))
    }
}

impl fmt::Debug for Documents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (k, v) in &self.map {
            m.entry(k, &format_args!("{v}"));
        }
        if let Some(r) = &self.resolver {
            m.entry(&"resolver", &Arc::as_ptr(r).cast::<()>());
        }
        m.finish()
    }
}

impl PartialEq for Documents {
    fn eq(&self, other: &Documents) -> bool {
        let same_resolver = match (&self.resolver, &other.resolver) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_resolver
            && self.map.len() == other.map.len()
            && self
                .map
                .iter()
                .zip(&other.map)
                .all(|((ka, a), (kb, b))| ka == kb && crate::json_identical(a, b))
    }
}

impl Eq for Documents {}
