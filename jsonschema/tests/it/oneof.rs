//! More `oneOf` and `not` cases made exact (issue 23): negations of
//! `prefixItems` and of draft-07 array-form `items`.

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
