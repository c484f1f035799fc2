//! More `oneOf` and `not` cases made exact (issue 23): negations of
//! `prefixItems`, of draft-07 array-form `items`, of `if`/`then`/`else`
//! and of the dependency keywords; string enums compared as sets.

use serde_json::{Value, json};

use crate::common::{accepts_text, compact};

fn check(schema: Value, yes: &[&str], no: &[&str]) {
    let c = compact(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for t in yes {
        assert!(accepts_text(&c, t), "{schema} should accept {t}");
    }
    for t in no {
        assert!(!accepts_text(&c, t), "{schema} should reject {t}");
    }
}

#[test]
fn negated_prefix_items() {
    let s =
        json!({"type": "array", "not": {"prefixItems": [{"type": "integer"}, {"type": "string"}]}});
    check(
        s,
        &[r#"["a"]"#, r#"[1,2]"#, r#"[true,"x",3]"#],
        &["[]", "[1]", r#"[1,"a"]"#, r#"[1,"a",null]"#],
    );
    // Overlapping oneOf branches: a tuple or an array of integers.
    let s = json!({"oneOf": [
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
        {"type": "array", "items": {"type": "integer"}}
    ]});
    check(
        s,
        &[r#"[1,"a"]"#, "[1,2]", r#"[1,"a",true]"#],
        &["[]", "[1]", r#"["a"]"#, r#"[1,2,"x"]"#],
    );
}

#[test]
fn negated_array_form_items_in_draft_07() {
    let s = json!({"$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array", "not": {"items": [{"const": 0}]}});
    check(s, &["[1]", "[1,0]"], &["[]", "[0]", "[0,1]"]);
}

#[test]
fn negated_if_then_else() {
    // Integers: if at least 10, then even, else odd.
    let cond = json!({"type": "integer",
        "if": {"minimum": 10}, "then": {"multipleOf": 2}, "else": {"not": {"multipleOf": 2}}});
    let s = json!({"type": "integer", "not": cond});
    check(s, &["11", "13", "2", "4"], &["10", "12", "1", "3"]);
    // Without `else`: only the `then` side can fail.
    let s = json!({"type": "integer", "not": {"if": {"minimum": 10}, "then": {"multipleOf": 2}}});
    check(s, &["11"], &["1", "2", "12"]);
    // `then` alone is no assertion.
    let s = json!({"type": "integer", "not": {"then": {"const": 1}, "minimum": 5}});
    check(s, &["1", "4"], &["5"]);
}

#[test]
fn negated_dependencies() {
    let s = json!({"type": "object", "not": {"dependentRequired": {"a": ["b", "c"]}}});
    check(s, &[r#"{"a":1}"#, r#"{"a":1,"b":2}"#], &["{}", r#"{"b":1}"#, r#"{"a":1,"b":2,"c":3}"#]);
    let s = json!({"type": "object",
        "not": {"dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}}}}});
    check(s, &[r#"{"a":1,"b":"x"}"#], &["{}", r#"{"b":"x"}"#, r#"{"a":1,"b":2}"#, r#"{"a":1}"#]);
    // A oneOf over draft-07 `dependencies` branches that may overlap.
    let s = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "oneOf": [
        {"dependencies": {"a": ["b"]}},
        {"required": ["a"]}
    ]});
    check(s, &["{}", r#"{"a":1}"#], &[r#"{"a":1,"b":2}"#]);
}

#[test]
fn string_enums_compared_as_sets() {
    // Disjoint enums (proved by comparing their strings), overlapping ones
    // (the shared strings excluded), and enums narrowed by length bounds
    // and a pattern before they meet.
    let s = json!({"oneOf": [
        {"oneOf": [{"enum": ["a", "b.c", "dé"]}, {"enum": ["x", "b.c"], "maxLength": 3}]},
        {"enum": ["y", "dé", ""], "minLength": 1},
        {"const": "zz"},
        {"type": "string", "pattern": "^z"}
    ]});
    check(
        s,
        &[r#""a""#, r#""x""#, r#""y""#, r#""zy""#],
        &[r#""b.c""#, r#""dé""#, r#""zz""#, r#""""#, r#""q""#],
    );
    // Many strings on both sides, disjoint, as in generated scope lists.
    let left: Vec<String> = (0..300).map(|i| format!("scope{i}.read")).collect();
    let right: Vec<String> = (0..40).map(|i| format!("scope{i}.write")).collect();
    let s = json!({"type": "array", "items": {"oneOf": [
        {"type": "string", "enum": left}, {"type": "string", "enum": right}
    ]}});
    check(s, &[r#"["scope7.read","scope39.write"]"#], &[r#"["scope40.write"]"#]);
}

/// A `oneOf` that is the last item of an `allOf` (itself, or through a
/// `$ref`) is compiled in the context of the items before it: exactly one
/// branch must hold among the values of that context.
#[test]
fn one_of_in_the_context_of_all_of() {
    // JSON Patch's shape: `op` is required by the context, and each branch
    // names its own `op` (without the context the branches overlap:
    // `{"value": 1}` matches four of them). Members come in schema order:
    // the context's `path`, then the branch's.
    let s = json!({"type": "array", "items": {"allOf": [
            {"type": "object", "required": ["op", "path"],
             "properties": {"path": {"type": "string"}}},
            {"$ref": "#/definitions/operation"}]},
        "definitions": {
            "operation": {"description": "one operation", "oneOf": [
                {"properties": {"op": {"enum": ["add"]}}, "required": ["value"]},
                {"properties": {"op": {"enum": ["remove"]}}},
                {"properties": {"op": {"enum": ["copy"]}, "from": {"type": "string"}},
                 "required": ["from"]}]}}});
    check(
        s,
        &[
            r#"[{"path":"/a","op":"add","value":1}]"#,
            r#"[{"path":"/a","op":"remove"}]"#,
            r#"[{"path":"/a","op":"remove","value":1}]"#,
            r#"[{"path":"/a","op":"copy","from":"/b"},{"path":"","op":"remove"}]"#,
        ],
        &[
            r#"[{"path":"/a","op":"add"}]"#,
            r#"[{"path":"/a","op":"copy"}]"#,
            r#"[{"path":"/a","op":"move"}]"#,
            r#"[{"path":"/a","value":1}]"#,
            r#"[{"op":"remove"}]"#,
        ],
    );
    // Branches the context does not separate: a value of both is refused.
    let s = json!({"allOf": [{"type": "object", "required": ["a"]},
        {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}]});
    check(s, &[r#"{"a":1}"#, r#"{"a":1,"c":2}"#], &[r#"{"a":1,"b":2}"#, r#"{"b":2}"#, "{}"]);
    // The oneOf not last: compiled alone, as before (same answers).
    let s = json!({"allOf": [{"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"type": "object", "required": ["a"]}]});
    check(s, &[r#"{"a":1}"#], &[r#"{"a":1,"b":2}"#, r#"{"b":2}"#]);
}
