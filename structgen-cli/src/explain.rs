//! Why a JSON Schema rejected a document: the [`Reason`] of a
//! [`Rejection`](crate::validate::Rejection).
//!
//! The compiled grammar does not remember which keyword each of its rules
//! came from (keywords meet in intersections, complements and merged
//! regexes), so the reason is found with the compiler as the oracle, on
//! the byte the grammar refused:
//!
//! 1. Is the text JSON at all, in this layout? The schema `true` with the
//!    same options must let the byte through; if it does not, the text is
//!    not JSON here ([`Reason::NotJson`]: a syntax error, or whitespace or
//!    separators the layout forbids).
//! 2. In schema property order, is the whole document accepted with
//!    properties in any order? Then its keys come in another order than
//!    the schema lists them ([`Reason::PropertyOrder`]).
//! 3. Which keyword is to blame? Each keyword of the schema (walking every
//!    subschema: `properties`, `items`, `allOf`, `$defs`, …; annotations
//!    such as `title` left out) is removed in turn, and a `false` subschema
//!    made `true`; the schema is compiled again, and the keyword is to
//!    blame when the refused byte then gets through (or, for a text that
//!    ended too early, the whole text is accepted). Blamed assertions
//!    (`type`, `required`, `minimum`, `additionalProperties: false`, …)
//!    come before applicators (`properties`, `anyOf`, `$ref`, …), whose
//!    removal drops whole subschemas; deeper pointers first. A document
//!    with several faults is explained at its first: only the bytes up to
//!    the refused one are parsed.
//!
//! Cost: one compilation per keyword (the search stops after `limit`), only
//! on rejection. Typical schemas have tens to hundreds of keywords and
//! compile in about a millisecond.

use std::time::{Duration, Instant};

use serde_json::Value;
use structgen::{CompileOptions, Grammar, GrammarSpec};

use crate::validate::{Keyword, Reason};

/// Keywords that never change which instances validate.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
    "$vocabulary",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
];

/// Keywords whose values hold subschemas: removing one removes them all.
const APPLICATORS: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "unevaluatedProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
];

/// Keywords whose value is a map of names to subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "$defs",
    "definitions",
];

/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Keywords whose value is one subschema.
const SCHEMA_VALUES: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
];

/// One change to try: remove `keyword` from the object at `path`, or make
/// the `false` schema at `path` `true` (`keyword` is then `false`).
struct Candidate {
    path: Vec<String>,
    keyword: Option<String>,
}

/// How much an explanation may cost: each try compiles a changed schema,
/// and a schema that takes a second to compile would otherwise hold a
/// rejected document's report for minutes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// The most schemas compiled.
    pub(crate) tries: usize,
    /// The most time spent, checked before each try.
    pub(crate) time: Duration,
}

/// The reason `schema` (compiled with `options`) refuses byte `at` of
/// `body` (a text that ended too early when `at_end`), within `budget`.
pub(crate) fn reason(
    schema: &Value,
    options: &jsonschema::Options,
    body: &[u8],
    at: usize,
    at_end: bool,
    budget: Budget,
) -> Reason {
    let started = Instant::now();
    let passes = |s: &Value, o: &jsonschema::Options| -> Option<bool> {
        let spec = GrammarSpec::JsonSchema { schema: s.clone(), options: o.clone() };
        let g = Grammar::compile(&spec, &CompileOptions::default()).ok()?;
        Some(if at_end { g.accepts(body) } else { viable(&g, &body[..=at]) })
    };
    if passes(&Value::Bool(true), options) == Some(false) {
        return Reason::NotJson;
    }
    if options.property_order == jsonschema::PropertyOrder::Schema {
        let any = options.clone().with_property_order(jsonschema::PropertyOrder::Any);
        let spec = GrammarSpec::JsonSchema { schema: schema.clone(), options: any };
        if Grammar::compile(&spec, &CompileOptions::default()).is_ok_and(|g| g.accepts(body)) {
            return Reason::PropertyOrder;
        }
    }
    let mut candidates = Vec::new();
    collect(schema, &mut Vec::new(), &mut candidates);
    let mut blamed: Vec<(bool, usize, Keyword)> = Vec::new();
    let mut tried = 0;
    for c in &candidates {
        if tried == budget.tries || started.elapsed() >= budget.time {
            return Reason::Unknown { tried, cut_short: true };
        }
        tried += 1;
        let Some(changed) = apply(schema, c) else { continue };
        if passes(&changed, options) == Some(true) {
            let keyword = c.keyword.clone().unwrap_or_else(|| "false".to_string());
            // A `false` value (`additionalProperties: false`) asserts.
            let value = at_path(schema, &c.path).and_then(|o| o.get(&keyword));
            let applicator = APPLICATORS.contains(&keyword.as_str())
                && value.is_none_or(|v| *v != Value::Bool(false));
            let depth = c.path.len();
            blamed.push((
                applicator,
                usize::MAX - depth,
                Keyword { keyword, pointer: pointer(&c.path) },
            ));
        }
    }
    if blamed.is_empty() {
        return Reason::Unknown { tried, cut_short: false };
    }
    // Stable: document order among equals.
    blamed.sort_by_key(|b| (b.0, b.1));
    Reason::Keywords(blamed.into_iter().map(|b| b.2).collect())
}

/// Whether every byte of `text` is allowed, one after the other.
fn viable(g: &Grammar, text: &[u8]) -> bool {
    let Ok(mut p) = earley::Parser::new(g.earley(), &|_| None) else { return false };
    for (i, &b) in text.iter().enumerate() {
        if !p.try_consume_byte(b).unwrap_or(false) {
            return false;
        }
        p.take_hidden(&text[..=i]);
    }
    true
}

/// Every keyword of every subschema of `v` (at `path`), in document order.
fn collect(v: &Value, path: &mut Vec<String>, out: &mut Vec<Candidate>) {
    let Some(obj) = v.as_object() else {
        if *v == Value::Bool(false) && !path.is_empty() {
            out.push(Candidate { path: path.clone(), keyword: None });
        }
        return;
    };
    for (k, sub) in obj {
        if !ANNOTATIONS.contains(&k.as_str()) && !k.starts_with("x-") {
            out.push(Candidate { path: path.clone(), keyword: Some(k.clone()) });
        }
        path.push(k.clone());
        if SCHEMA_MAPS.contains(&k.as_str()) {
            for (name, s) in sub.as_object().into_iter().flatten() {
                path.push(name.clone());
                collect(s, path, out);
                path.pop();
            }
        }
        if SCHEMA_ARRAYS.contains(&k.as_str()) {
            for (i, s) in sub.as_array().into_iter().flatten().enumerate() {
                path.push(i.to_string());
                collect(s, path, out);
                path.pop();
            }
        }
        // A `false` value here is the keyword's own candidate above.
        if SCHEMA_VALUES.contains(&k.as_str()) && sub.is_object() {
            collect(sub, path, out);
        }
        path.pop();
    }
}

/// The value at `path` below `v`.
fn at_path<'v>(v: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, k| match v {
        Value::Object(o) => o.get(k),
        Value::Array(a) => a.get(k.parse::<usize>().ok()?),
        _ => None,
    })
}

/// `schema` with candidate `c` applied (`None` when its path is gone).
fn apply(schema: &Value, c: &Candidate) -> Option<Value> {
    let mut out = schema.clone();
    let mut v = &mut out;
    for k in &c.path {
        v = match v {
            Value::Object(o) => o.get_mut(k)?,
            Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match &c.keyword {
        Some(k) => {
            v.as_object_mut()?.remove(k)?;
        }
        None => *v = Value::Bool(true),
    }
    Some(out)
}

/// A path as a JSON pointer (RFC 6901).
fn pointer(path: &[String]) -> String {
    path.iter().map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1"))).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const AMPLE: Budget = Budget { tries: 100, time: Duration::from_secs(600) };

    fn why(schema: Value, doc: &str) -> Reason {
        why_within(schema, doc, AMPLE)
    }

    fn why_within(schema: Value, doc: &str, budget: Budget) -> Reason {
        let options =
            jsonschema::Options::default().with_whitespace(jsonschema::Whitespace::unbounded());
        let g = Grammar::compile(
            &GrammarSpec::JsonSchema { schema: schema.clone(), options: options.clone() },
            &CompileOptions::default(),
        )
        .unwrap();
        let body = doc.as_bytes();
        let mut at = 0;
        while at < body.len() && viable(&g, &body[..=at]) {
            at += 1;
        }
        let at_end = at == body.len();
        assert!(!(at_end && g.accepts(body)), "{doc} is accepted");
        reason(&schema, &options, body, at.min(body.len().saturating_sub(1)), at_end, budget)
    }

    fn blamed(r: Reason) -> (String, String) {
        match r {
            Reason::Keywords(k) => (k[0].keyword.clone(), k[0].pointer.clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_budget_cuts_the_search_short() {
        let s = json!({"type": "object", "properties": {"age": {"type": "integer"}}});
        let no_time = Budget { tries: 100, time: Duration::ZERO };
        assert!(matches!(
            why_within(s.clone(), r#"{"age": "x"}"#, no_time),
            Reason::Unknown { tried: 0, cut_short: true }
        ));
        let one_try = Budget { tries: 1, ..AMPLE };
        assert!(matches!(
            why_within(s, r#"{"age": "x"}"#, one_try),
            Reason::Unknown { tried: 1, cut_short: true }
        ));
    }

    #[test]
    fn the_most_specific_assertion_is_blamed() {
        let s = json!({"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}},
            "required": ["age"], "additionalProperties": false});
        assert_eq!(
            blamed(why(s.clone(), r#"{"age": "x"}"#)),
            ("type".into(), "/properties/age".into())
        );
        assert_eq!(
            blamed(why(s.clone(), r#"{"age": -1}"#)),
            ("minimum".into(), "/properties/age".into())
        );
        assert_eq!(
            blamed(why(s.clone(), r#"{"age": 1, "b": 2}"#)),
            ("additionalProperties".into(), String::new())
        );
        assert_eq!(blamed(why(s.clone(), r#"{}"#)), ("required".into(), String::new()));
        let r = json!({"$defs": {"n": {"type": "string"}}, "items": {"$ref": "#/$defs/n"}});
        assert_eq!(blamed(why(r, "[1]")), ("type".into(), "/$defs/n".into()));
        let f = json!({"properties": {"a": false}});
        assert_eq!(blamed(why(f, r#"{"a": 1}"#)), ("false".into(), "/properties/a".into()));
    }

    #[test]
    fn not_json_and_property_order_are_told_apart() {
        let s = json!({"type": "object", "properties": {"a": {}, "b": {}}});
        assert_eq!(why(s.clone(), r#"{"a": tru}"#), Reason::NotJson);
        assert_eq!(why(s, r#"{"b": 1, "a": 2}"#), Reason::PropertyOrder);
        // Either branch would pass without its type: the first is named.
        let any = json!({"anyOf": [{"type": "string"}, {"type": "boolean"}]});
        assert_eq!(blamed(why(any, "1")), ("type".into(), "/anyOf/0".into()));
        // Nothing to remove but the `not`.
        let not = json!({"not": {"type": "integer"}});
        assert_eq!(blamed(why(not, "1")), ("not".into(), String::new()));
    }
}
