//! Hostile schemas: each trips a limit quickly, as an error naming the
//! limit and the JSON pointer (issue 19), within a bound on hangs.

use jsonschema::{ErrorKind, Options, PropertyOrder, compile};
use serde_json::{Value, json};

use crate::common::{accepts_text, within};

/// The error of `schema`, which must come within `seconds`.
fn limit_error(schema: Value, seconds: u64) -> jsonschema::Error {
    within(seconds, move || match compile(&schema, &Options::compact()) {
        Ok(_) => panic!("{schema} should hit a limit"),
        Err(e) => e,
    })
}

fn patterns(n: usize) -> Value {
    let all: Vec<Value> = (0..n).map(|i| json!({"pattern": format!("[a-z]{i}")})).collect();
    json!({"type": "string", "allOf": all})
}

/// 40 unanchored patterns made derivre allocate 5.5 GB; 200 ran over a
/// minute. The count is checked before any regex work.
#[test]
fn all_of_many_patterns() {
    for n in [13, 40, 200] {
        let e = limit_error(patterns(n), 10);
        assert_eq!(e.kind(), &ErrorKind::LimitExceeded, "{e}");
        assert!(e.message().contains("Limits::max_string_regexes"), "{e}");
        assert_eq!(e.pointer(), "/allOf/12", "the item that went over");
    }
    // Twelve compile (and the limit can be raised).
    within(30, || compile(&patterns(12), &Options::compact()).unwrap());
    // Literals and their negations do not count.
    let consts: Vec<Value> = (0..40).map(|i| json!({"not": {"const": format!("x{i}")}})).collect();
    within(30, move || compile(&json!({"type": "string", "allOf": consts}), &Options::compact()))
        .unwrap();
}

#[test]
fn breadth_limits() {
    let many: Vec<Value> = (0..5000).map(|i| json!({"minimum": i})).collect();
    let e = limit_error(json!({"properties": {"a": {"allOf": many}}}), 10);
    assert_eq!(
        (e.kind(), e.keyword(), e.pointer()),
        (&ErrorKind::LimitExceeded, "allOf", "/properties/a")
    );
    assert!(e.message().contains("Limits::max_subschemas"), "{e}");
    let values: Vec<Value> = (0..20_000).map(Value::from).collect();
    let e = limit_error(json!({"enum": values}), 10);
    assert_eq!((e.kind(), e.keyword()), (&ErrorKind::LimitExceeded, "enum"));
    assert!(e.message().contains("Limits::max_enum_values"), "{e}");
    let values: Vec<Value> = (0..20_000).map(Value::from).collect();
    let e = limit_error(json!({"not": {"enum": values}}), 10);
    assert!(e.message().contains("Limits::max_enum_values"), "{e}");
}

/// Intersecting many objects no longer nests their key regexes (5,000
/// items took over a minute); the work stays bounded by the node limit.
#[test]
fn all_of_many_objects() {
    let many: Vec<Value> = (0..1000).map(|i| json!({"minimum": i})).collect();
    within(30, move || compile(&json!({"allOf": many}), &Options::compact())).unwrap();
    let props: Vec<Value> =
        (0..1000).map(|i| json!({"properties": {format!("p{i}"): {"type": "string"}}})).collect();
    let e = limit_error(json!({"allOf": props}), 30);
    assert_eq!(e.kind(), &ErrorKind::LimitExceeded, "{e}");
}

/// An intersection with a union copies the other operand once per branch:
/// the copies count against `Limits::max_copied_nodes`, which a visit
/// count alone did not bound (overlapping `oneOf`s took up to 10 s).
#[test]
fn copies_are_bounded() {
    let props: serde_json::Map<String, Value> =
        (0..100).map(|i| (format!("p{i}"), json!({"type": "string", "maxLength": i}))).collect();
    let branches: Vec<Value> =
        (0..20).map(|i| json!({"properties": {format!("b{i}"): {"type": "integer"}}})).collect();
    let schema = json!({"allOf": [{"anyOf": branches}, {"properties": props}]});
    let mut tight = Options::compact();
    tight.limits.max_copied_nodes = 500;
    let e = compile(&schema, &tight).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains("Limits::max_copied_nodes"), "{e}");
    compile(&schema, &Options::compact()).unwrap();
}

/// MaskBench dev schemas whose overlapping `oneOf`s took 3 to 12 s to
/// refuse; each is now refused (or compiled) with its work bounded by the
/// copy limit. `within` is only a hang bound: no timing is asserted.
#[test]
fn slow_one_of_refusals_are_bounded() {
    let Some(text) = testkit::read_data_or_skip("slow oneOf refusals", "maskbench/dev.jsonl.gz")
    else {
        return;
    };
    let text = String::from_utf8(text).unwrap();
    let names = [
        "Github_hard---o13457.json",
        "Github_hard---o84330.json",
        "Github_medium---o35868.json",
        "Github_medium---o46145.json",
    ];
    let mut found = 0;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if !names.contains(&v["name"].as_str().unwrap_or("")) {
            continue;
        }
        found += 1;
        let schema = v["schema"].clone();
        let r = within(60, move || compile(&schema, &Options::default()).map(drop));
        if let Err(e) = r {
            assert!(
                matches!(e.kind(), ErrorKind::LimitExceeded | ErrorKind::Inexpressible),
                "{}: {e}",
                v["name"]
            );
        }
    }
    assert_eq!(found, names.len());
}

/// An object of digit keys (arrays of two or more items, at most three
/// members) that must hold, for each listed set, a key from it: each set
/// is one negated member constraint (`not` of `propertyNames`).
fn key_sets(sets: &[&[&str]]) -> Value {
    let nots: Vec<Value> =
        sets.iter().map(|s| json!({"propertyNames": {"not": {"enum": s}}})).collect();
    json!({
        "type": "object",
        "patternProperties": {"^[0-9]$": {"type": "array", "minItems": 2}},
        "additionalProperties": false,
        "not": {"anyOf": nots},
        "maxProperties": 3
    })
}

/// Negated member constraints: exact up to `Limits::max_negated_members`
/// (8) against a naive oracle over every object of at most three of six
/// keys, in both orders, in both property orders; one more is an error
/// naming the limit (the object's rules grow as `2^n`).
#[test]
fn negated_member_constraints_up_to_the_limit() {
    let sets: &[&[&str]] = &[&["1", "3"], &["2", "3", "5"], &["0", "4"], &["1", "2"], &["4", "5"]];
    let keys = ["0", "1", "2", "3", "4", "5"];
    let mut objects: Vec<Vec<&str>> = vec![vec![]];
    for a in 0..keys.len() {
        objects.push(vec![keys[a]]);
        for b in a + 1..keys.len() {
            objects.push(vec![keys[a], keys[b]]);
            objects.push(vec![keys[b], keys[a]]);
            for c in b + 1..keys.len() {
                objects.push(vec![keys[c], keys[a], keys[b]]);
            }
        }
    }
    let schema = key_sets(sets);
    for order in [PropertyOrder::Schema, PropertyOrder::Any] {
        let options = Options::compact().with_property_order(order);
        let s = schema.clone();
        let c = within(30, move || compile(&s, &options)).unwrap();
        let mut valid = 0;
        for o in &objects {
            let oracle = sets.iter().all(|set| o.iter().any(|k| set.contains(k)));
            let members: Vec<String> = o.iter().map(|k| format!("\"{k}\":[1,2]")).collect();
            let text = format!("{{{}}}", members.join(","));
            assert_eq!(accepts_text(&c, &text), oracle, "{text} ({order:?})");
            valid += usize::from(oracle);
            // Arrays too short: never valid.
            let short = text.replace("[1,2]", "[1]");
            assert!(o.is_empty() || !accepts_text(&c, &short), "{short} ({order:?})");
        }
        assert!(valid >= 4, "the oracle accepts only {valid} objects");
    }
    let nine: Vec<&[&str]> = (0..9).map(|_| &["1", "2"][..]).collect();
    let e = limit_error(key_sets(&nine), 10);
    assert_eq!(e.kind(), &ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains("Limits::max_negated_members (8)"), "{e}");
}
