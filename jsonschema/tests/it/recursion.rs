//! Recursive definitions met by `allOf` (the product of two recursions)
//! and by `oneOf` (the complement of a recursive definition), checked
//! against predicates written here over every small value of a family.

use jsonschema::{ErrorKind, compile};
use serde_json::{Map, Value, json};

use crate::common::{accepts, compact, within};

/// Every object of nesting depth at most `depth` whose keys are drawn from
/// `keys` (each at most once), plus the leaves `1` and `"s"` as values of
/// members; at most `cap` values per level.
fn objects(keys: &[&str], depth: usize, cap: usize) -> Vec<Value> {
    let mut all: Vec<Value> = vec![json!({})];
    for _ in 0..depth {
        let members: Vec<Value> =
            all.iter().cloned().chain([json!(1), json!("s")]).take(cap).collect();
        let mut next = vec![json!({})];
        for mask in 1u32..(1 << keys.len()) {
            let chosen: Vec<&str> = keys
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, k)| *k)
                .collect();
            // Every choice of member values for the chosen keys, in order.
            let mut partial: Vec<Map<String, Value>> = vec![Map::new()];
            for k in &chosen {
                let mut grown = Vec::new();
                for m in &partial {
                    for v in &members {
                        let mut m = m.clone();
                        m.insert((*k).to_string(), v.clone());
                        grown.push(m);
                    }
                }
                partial = grown;
                partial.truncate(cap);
            }
            next.extend(partial.into_iter().map(Value::Object));
        }
        next.truncate(cap);
        all = next;
    }
    all
}

/// `{"a": {"a": … {}}}` with `n` members `a`.
fn chain(n: usize) -> Value {
    (0..n).fold(json!({}), |v, _| json!({ "a": v }))
}

/// The `$defs` of the chain schemas: `word` (objects with only the key
/// `a`, recursively), and `m{k}_{i}` for periods 2 and 3: an object in
/// state `i` needs a member unless `i` is the last state, and every member
/// is in the next state.
fn defs() -> Value {
    let mut d = json!({
        "word": {"type": "object", "properties": {"a": {"$ref": "#/$defs/word"}},
                 "additionalProperties": false}
    });
    for k in [2usize, 3] {
        for i in 0..k {
            let mut s = json!({"type": "object",
                "additionalProperties": {"$ref": format!("#/$defs/m{k}_{}", (i + 1) % k)}});
            if i + 1 < k {
                s["minProperties"] = json!(1);
            }
            d[format!("m{k}_{i}")] = s;
        }
    }
    d
}

/// The state-`i` schema of period `k`, written as a predicate.
fn in_period(v: &Value, k: usize, i: usize) -> bool {
    let Some(m) = v.as_object() else { return false };
    (i + 1 == k || !m.is_empty()) && m.values().all(|x| in_period(x, k, (i + 1) % k))
}

fn in_word(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.iter().all(|(k, x)| k == "a" && in_word(x)))
}

#[test]
fn all_of_two_recursions_is_their_product() {
    // word ∩ m2_0 ∩ m3_0: chains whose innermost `{}` is the last state of
    // both periods, i.e. `n ≡ 1 (mod 2)` and `n ≡ 2 (mod 3)`. Unfolded one
    // level at a time this used to stop at `Limits::max_depth`.
    let s = json!({"$defs": defs(), "allOf": [
        {"$ref": "#/$defs/word"}, {"$ref": "#/$defs/m2_0"}, {"$ref": "#/$defs/m3_0"}
    ]});
    let c = within(60, move || compact(&s).unwrap());
    for n in 0..=24 {
        assert_eq!(accepts(&c, &chain(n)), n % 6 == 5, "chain of {n}");
    }
    for v in objects(&["a", "b"], 3, 40) {
        let want = in_word(&v) && in_period(&v, 2, 0) && in_period(&v, 3, 0);
        assert_eq!(accepts(&c, &v), want, "{v}");
    }
    // A definition met by itself is itself.
    let s = json!({"$defs": defs(), "allOf": [{"$ref": "#/$defs/m3_0"}, {"$ref": "#/$defs/m3_0"}]});
    let c = within(60, move || compact(&s).unwrap());
    for v in objects(&["a", "b"], 3, 40) {
        assert_eq!(accepts(&c, &v), in_period(&v, 3, 0), "{v}");
    }
}

#[test]
fn one_of_negates_recursive_branches() {
    // The branches overlap (`{"a": {}}` is in both), so each excludes the
    // other by its complement, which recurses as the branch does.
    let s = json!({"$defs": defs(), "oneOf": [{"$ref": "#/$defs/word"}, {"$ref": "#/$defs/m2_0"}]});
    let c = within(60, move || compact(&s).unwrap());
    let (mut yes, mut no) = (0, 0);
    for v in objects(&["a", "b"], 3, 150).into_iter().chain([json!(1), json!([])]) {
        let want = in_word(&v) != in_period(&v, 2, 0);
        assert_eq!(accepts(&c, &v), want, "{v}");
        if want { yes += 1 } else { no += 1 }
    }
    assert!(yes >= 10 && no >= 100, "{yes} accepted, {no} rejected");
    // `not` of a recursive definition, beside a sibling that keeps it finite.
    let s = json!({"$defs": defs(), "not": {"$ref": "#/$defs/m3_0"}, "$ref": "#/$defs/word"});
    let c = within(60, move || compact(&s).unwrap());
    for n in 0..=12 {
        assert_eq!(accepts(&c, &chain(n)), n % 3 != 2, "chain of {n}");
    }
}

#[test]
fn a_recursion_that_enters_no_value_cannot_be_negated() {
    // `u` is `u` or a string: its complement's rules would loop without
    // consuming anything, and their least fixed point is not the complement.
    let s = json!({
        "$defs": {"u": {"anyOf": [{"$ref": "#/$defs/u"}, {"type": "string"}]}},
        "not": {"$ref": "#/$defs/u"}
    });
    let e = compile(&s, &jsonschema::Options::compact()).unwrap_err();
    assert_eq!((e.kind(), e.keyword()), (&ErrorKind::Inexpressible, "$ref"), "{e}");
    assert!(e.message().contains("without entering"), "{e}");
}

/// Two meets of one recursive definition whose other sides differ only
/// deep inside a regex (the complement of a 201-string `enum`) are two
/// meets: the key of a meet reads every regex whole (derivre's own debug
/// form stops after 512 characters, and a key built from it took the
/// second meet for the first: a valid value rejected, an invalid one
/// accepted).
#[test]
fn meets_differing_deep_inside_a_regex_stay_apart() {
    // 200 alternatives: the regex tree has hundreds of nodes.
    let alts: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
    let alts_a: Vec<String> = alts.iter().cloned().chain(["za".to_string()]).collect();
    let alts_b: Vec<String> = alts.iter().cloned().chain(["zb".to_string()]).collect();
    let schema = json!({
        "$defs": {"t": {"type": "object", "properties": {"c": {"$ref": "#/$defs/t"}}}},
        "type": "object",
        "properties": {
            "a": {"allOf": [{"$ref": "#/$defs/t"},
                {"properties": {"s": {"type": "string", "pattern": "^[a-z0-9]+$", "not": {"enum": alts_a}}}}]},
            "b": {"allOf": [{"$ref": "#/$defs/t"},
                {"properties": {"s": {"type": "string", "pattern": "^[a-z0-9]+$", "not": {"enum": alts_b}}}}]}
        }
    });
    let c = compact(&schema).unwrap();
    assert!(accepts(&c, &json!({"a": {"s": "zb"}, "b": {"s": "za"}})));
    assert!(!accepts(&c, &json!({"a": {"s": "za"}})));
    assert!(!accepts(&c, &json!({"b": {"s": "zb"}})));
}
