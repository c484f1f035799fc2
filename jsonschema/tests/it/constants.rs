//! Negated array and object constants (`not` of `enum`/`const`, and
//! `oneOf` branches that are `enum`s of containers): exact under JSON
//! equality, in both property orders, against a naive oracle too.

use jsonschema::{Compiled, Options, PropertyOrder, compile};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::common::accepts_text;

fn both_orders(schema: &Value) -> [(PropertyOrder, Compiled); 2] {
    [PropertyOrder::Schema, PropertyOrder::Any].map(|order| {
        let options = Options::compact().with_property_order(order);
        let c = compile(schema, &options).unwrap_or_else(|e| panic!("{schema} ({order:?}): {e}"));
        (order, c)
    })
}

/// Checks in both property orders that `schema` accepts every `yes` text
/// and rejects every `no` text.
fn check(schema: Value, yes: &[&str], no: &[&str]) {
    for (order, c) in both_orders(&schema) {
        for t in yes {
            assert!(accepts_text(&c, t), "{schema} ({order:?}) should accept {t}");
        }
        for t in no {
            assert!(!accepts_text(&c, t), "{schema} ({order:?}) should reject {t}");
        }
    }
}

#[test]
fn negated_array_constant() {
    let s = json!({"not": {"const": [1, "A", [true]]}});
    check(
        s,
        &[
            "[]",
            "[1]",
            r#"[1,"A"]"#,
            r#"[1,"A",[true],null]"#,
            r#"[2,"A",[true]]"#,
            r#"[1,"B",[true]]"#,
            r#"[1,"A",[false]]"#,
            r#"[1,"A",[]]"#,
            r#"[1,"A",[true,true]]"#,
            r#"["A",1,[true]]"#,
            "1",
            r#""A""#,
            "{}",
        ],
        &[r#"[1,"A",[true]]"#, r#"[1.0,"\u0041",[true]]"#, r#"[1e0,"A",[true]]"#],
    );
}

#[test]
fn negated_object_constant() {
    let s = json!({"not": {"const": {"a": 1, "b": {"c": "A"}}}});
    check(
        s,
        &[
            "{}",
            r#"{"a":1}"#,
            r#"{"b":{"c":"A"}}"#,
            r#"{"a":1,"b":{"c":"A"},"d":0}"#,
            r#"{"a":2,"b":{"c":"A"}}"#,
            r#"{"a":"1","b":{"c":"A"}}"#,
            r#"{"a":1,"b":{"c":"B"}}"#,
            r#"{"a":1,"b":{"c":"A","d":1}}"#,
            r#"{"a":1,"b":{}}"#,
            r#"{"a":1,"c":{"c":"A"}}"#,
            "[]",
            "null",
        ],
        &[
            r#"{"a":1,"b":{"c":"A"}}"#,
            r#"{"b":{"c":"A"},"a":1}"#,
            r#"{"a":1.0,"b":{"c":"\u0041"}}"#,
            r#"{"b":{"c":"A"},"a":10e-1}"#,
        ],
    );
    // In any order, a different object is accepted whatever its key order;
    // in schema order the constant's names come first, in its order.
    let s = json!({"not": {"const": {"a": 1, "b": 2}}});
    check(s.clone(), &[r#"{"a":1,"b":3}"#, r#"{"a":1,"b":2,"c":3}"#], &[r#"{"b":2,"a":1}"#]);
    let options = Options::compact().with_property_order(PropertyOrder::Any);
    let c = compile(&s, &options).unwrap();
    for t in [r#"{"b":3,"a":1}"#, r#"{"c":3,"b":2,"a":1}"#, r#"{"b":2,"c":3,"a":1}"#] {
        assert!(accepts_text(&c, t), "{s} (any order) should accept {t}");
    }
}

#[test]
fn negated_empty_containers() {
    check(json!({"not": {"const": []}}), &["[1]", "[[]]", "{}", "0"], &["[]"]);
    check(json!({"not": {"const": {}}}), &[r#"{"a":{}}"#, "[]", "null"], &["{}"]);
    check(
        json!({"type": ["array", "object"], "not": {"enum": [[], {}]}}),
        &["[null]", r#"{"":0}"#],
        &["[]", "{}", "0"],
    );
}

#[test]
fn negated_constants_of_several_kinds() {
    let s = json!({"not": {"enum": [[1], [3, 4], [5], [1, 2], [[1], 2]]}});
    check(
        s,
        &["[]", "[2]", "[3]", "[3,5]", "[1,3]", "[1,2,3]", "[[2],2]", "[[1],3]", "[[1,2],2]"],
        &["[1]", "[1.0]", "[3,4]", "[5]", "[1,2]", "[[1],2]", "[[1.0],2.0]"],
    );
    let s = json!({"not": {"enum": [{"a": 1}, {"a": 2, "b": 3}, {"b": 3}, {}, {"a": {"b": [1]}}]}});
    check(
        s,
        &[
            r#"{"a":3}"#,
            r#"{"a":1,"b":3}"#,
            r#"{"a":2}"#,
            r#"{"b":2}"#,
            r#"{"a":2,"b":4}"#,
            r#"{"c":1}"#,
            r#"{"a":1,"c":1}"#,
            r#"{"a":{"b":[2]}}"#,
            r#"{"a":{"b":[1],"c":0}}"#,
        ],
        &[
            r#"{"a":1}"#,
            r#"{"a":2,"b":3}"#,
            r#"{"b":3,"a":2}"#,
            r#"{"b":3}"#,
            "{}",
            r#"{"a":{"b":[1.0]}}"#,
        ],
    );
    // MaskBench's synthesized cases (draft 2019-09 const and enum tests).
    check(
        json!({"allOf": [{"enum": [null]}, {"not": {"enum": [6, "foo", [], true, {"foo": 12}]}}]}),
        &["null"],
        &["6", "[]", r#"{"foo":12}"#],
    );
    check(
        json!({"allOf": [{"enum": [[1, 2, 3]]}, {"not": {"enum": [[{"foo": "bar"}]]}}]}),
        &["[1,2,3]"],
        &[r#"[{"foo":"bar"}]"#],
    );
    check(
        json!({"allOf": [{"enum": [{"a": 1.0}]}, {"not": {"enum": [{"a": true}]}}]}),
        &[r#"{"a":1}"#, r#"{"a":1.0}"#],
        &[r#"{"a":true}"#],
    );
    check(
        json!({"not": {"enum": [6, "foo", [], true, {"foo": 12}]}}),
        &["5", r#""fo""#, "[6]", "false", "null", "{}", r#"{"foo":13}"#, r#"{"foo":12,"a":0}"#],
        &["6", "6.0", r#""foo""#, "[]", "true", r#"{"foo":12}"#, r#"{"foo":1.2e1}"#],
    );
}

#[test]
fn one_of_enums_of_arrays() {
    let s = json!({"oneOf": [{"enum": [[1], [3, 4], [5]]}, {"enum": [[1], [1, 2]]}]});
    check(s, &["[3,4]", "[5]", "[1,2]", "[1.0,2]"], &["[1]", "[]", "[3]", "[1,2,3]", "[4,3]"]);
    // MaskBench's Handwritten---key10: exactly one of x, y, z, then a
    // non-empty array of at least two even items: only [6,8].
    let s = json!({"type": "array",
        "oneOf": [{"$ref": "#/definitions/x"}, {"$ref": "#/definitions/y"}, {"$ref": "#/definitions/z"}],
        "if": {"minItems": 1}, "then": {"minItems": 2, "items": {"multipleOf": 2}},
        "else": {"minItems": 1},
        "definitions": {"x": {"enum": [[2], [2, 4], [6]]}, "y": {"enum": [[], [2, 3]]},
            "z": {"enum": [[1], [2, 4], [6, 8], [6]]}}});
    check(s, &["[6,8]", "[6.0,8]"], &["[2,4]", "[6]", "[2]", "[]", "[2,3]", "[1]"]);
}

#[test]
fn large_negated_constants_stop_at_the_limits() {
    // One branch per member: an object of 5,000 members is past
    // `Limits::max_branches` (4,096), refused quickly.
    let big: Map<String, Value> = (0..5_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let s = json!({"not": {"const": big}});
    let e = crate::common::within(60, move || compile(&s, &Options::compact()).unwrap_err());
    assert_eq!(e.kind(), &jsonschema::ErrorKind::LimitExceeded, "{e}");
    // A constant nested deeper than `Limits::max_depth`.
    let mut deep = json!(0);
    for _ in 0..100 {
        deep = json!([deep]);
    }
    let s = json!({"not": {"const": deep}});
    let e = crate::common::within(60, move || compile(&s, &Options::compact()).unwrap_err());
    assert_eq!(e.kind(), &jsonschema::ErrorKind::LimitExceeded, "{e}");
    // Many long arrays sharing their first items split only where they
    // differ: 200 arrays of 20 items compile.
    let arrays: Vec<Value> = (0..200)
        .map(|i| Value::Array((0..20).map(|j| json!(if j == 19 { i } else { j })).collect()))
        .collect();
    let s = json!({"type": "array", "not": {"enum": arrays}});
    let c = crate::common::within(60, move || compile(&s, &Options::compact()).unwrap());
    let same: Vec<String> = (0..19).map(|j| j.to_string()).collect();
    let text = |last: i32| format!("[{},{last}]", same.join(","));
    assert!(!accepts_text(&c, &text(7)));
    assert!(accepts_text(&c, &text(200)));
}

// ----- the naive oracle -----

/// Whether `a` and `b` are one JSON value (the small numbers of these
/// tests compare exactly as floats).
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| equal(p, q)))
        }
        (a, b) => a == b,
    }
}

/// Small values over few keys and scalars, so that random ones often
/// equal or nearly equal each other.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        Just(json!(true)),
        Just(json!(1)),
        Just(json!(1.0)),
        Just(json!(2)),
        Just(json!("a")),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(vec!["a", "b", "c"]), inner), 0..3)
                .prop_map(|ms| Value::Object(
                    ms.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )),
        ]
    })
}

/// `v` with the members of every object in reverse order.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Array(xs) => Value::Array(xs.iter().map(reversed).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().rev().map(|(k, x)| (k.clone(), reversed(x))).collect())
        }
        v => v.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// `not` of an `enum` accepts exactly the values equal to none of its
    /// values in any order; in schema order it accepts no value equal to one
    /// of them. The candidates are the listed values themselves, their keys
    /// reversed, and random values.
    #[test]
    fn negated_enums_agree_with_json_equality(
        listed in prop::collection::vec(value(), 1..4),
        others in prop::collection::vec(value(), 0..4),
    ) {
        let schema = json!({"not": {"enum": listed}});
        let candidates: Vec<Value> =
            listed.iter().flat_map(|v| [v.clone(), reversed(v)]).chain(others).collect();
        for (order, c) in both_orders(&schema) {
            for v in &candidates {
                let acc = accepts_text(&c, &serde_json::to_string(v).unwrap());
                let differs = listed.iter().all(|l| !equal(l, v));
                if order == PropertyOrder::Any {
                    prop_assert_eq!(acc, differs, "{} on {} ({:?})", schema, v, order);
                } else {
                    prop_assert!(differs || !acc, "{} accepts {} ({:?})", schema, v, order);
                }
            }
        }
    }
}
