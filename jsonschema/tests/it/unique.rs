//! `uniqueItems` over items checked as free by their automata: patterns
//! whose every prefix can grow, and bounded integers split into named
//! values and a free rest (`lower/array.rs`). Acceptance against lists,
//! and masks without dead ends: every prefix the engine takes, over a
//! small alphabet, has a completion it accepts.

use serde_json::{Value, json};

use jsonschema::{Options, PropertyOrder, compile};

use crate::common::{accepts_text, compact};

fn check(schema: &Value, yes: &[&str], no: &[&str]) {
    let c = compact(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for t in yes {
        assert!(accepts_text(&c, t), "{schema} should accept {t}");
    }
    for t in no {
        assert!(!accepts_text(&c, t), "{schema} should reject {t}");
    }
}

/// Whether some text of at most `depth` bytes from `alphabet` completes
/// what `p` has consumed into a sentence (the engine's own acceptance).
fn completes(p: &mut earley::Parser, alphabet: &[u8], depth: usize) -> bool {
    if p.is_accepting().unwrap() {
        return true;
    }
    if depth == 0 {
        return false;
    }
    for &b in alphabet {
        if p.try_consume_byte(b).unwrap() {
            let done = completes(p, alphabet, depth - 1);
            p.pop_bytes(1);
            if done {
                return true;
            }
        }
    }
    false
}

/// Walks every text of up to `len` bytes from `alphabet` that the engine
/// takes byte by byte and asserts that each has a completion of at most
/// `slack` more bytes: a byte the engine takes never leads to a dead end,
/// which is what keeps masks exact. Returns the number of texts walked.
fn no_dead_ends(schema: &Value, alphabet: &[u8], len: usize, slack: usize) -> usize {
    let c = compact(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let g = c.grammar.to_earley(earley::Limits::default()).unwrap();
    let mut p = earley::Parser::new(&g, &|_| None).unwrap();
    let mut text = Vec::new();
    let mut walked = 0;
    fn walk(
        p: &mut earley::Parser,
        text: &mut Vec<u8>,
        alphabet: &[u8],
        len: usize,
        slack: usize,
        walked: &mut usize,
        schema: &Value,
    ) {
        *walked += 1;
        assert!(
            completes(p, alphabet, slack),
            "{schema}: no completion after {:?}",
            String::from_utf8_lossy(text)
        );
        if text.len() == len {
            return;
        }
        for &b in alphabet {
            if p.try_consume_byte(b).unwrap() {
                text.push(b);
                walk(p, text, alphabet, len, slack, walked, schema);
                text.pop();
                p.pop_bytes(1);
            }
        }
    }
    walk(&mut p, &mut text, alphabet, len, slack, &mut walked, schema);
    walked
}

#[test]
fn patterns_whose_every_prefix_can_grow_are_free() {
    let names = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "string", "pattern": "^[a-b_]+$"}});
    check(
        &names,
        &["[]", r#"["a","b","a_b","ab"]"#],
        &[r#"["a","a"]"#, r#"["a","\u0061"]"#, r#"[""]"#, r#"["A"]"#, r#"["ab","b","ab"]"#],
    );
    let walked = no_dead_ends(&names, b"[],\"ab", 11, 6);
    assert!(walked > 1_000, "{walked} texts walked");
    // A pattern with a finished prefix (`x` then only the end) is not
    // free: the parser searches there.
    let finished = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "string", "pattern": "^[a-b]?x$"}});
    check(&finished, &[r#"["x","ax","bx"]"#], &[r#"["ax","ax"]"#, r#"["a"]"#]);
    let walked = no_dead_ends(&finished, b"[],\"abx", 22, 8);
    assert!(walked > 50, "{walked} texts walked");
    let c = compact(&finished).unwrap();
    let g = c.grammar.to_earley(earley::Limits::default()).unwrap();
    let mut p = earley::Parser::new(&g, &|_| None).unwrap();
    for &b in br#"["x","bx","a"#.iter() {
        assert!(p.try_consume_byte(b).unwrap());
    }
    // `"ax"` is the one value left: `x` may come, and then no new item.
    assert!(!p.try_consume_byte(b'b').unwrap());
    for &b in br#"x""#.iter() {
        assert!(p.try_consume_byte(b).unwrap());
    }
    assert!(!p.try_consume_byte(b',').unwrap());
}

#[test]
fn bounded_integers_name_the_values_up_to_zero() {
    let from_minus_two = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "integer", "minimum": -2}});
    check(
        &from_minus_two,
        &["[]", "[-2,-1,0,1,10,19]", "[0,1]", "[19,-0.0]"],
        &["[-3]", "[0,0]", "[0,-0]", "[1,1]", "[-2,-1,-2]", "[10,1,10]"],
    );
    let walked = no_dead_ends(&from_minus_two, b"[],-012", 9, 4);
    assert!(walked > 1_000, "{walked} texts walked");
    let up_to_one = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "integer", "exclusiveMaximum": 1.5}});
    check(&up_to_one, &["[1,0,-1,-10]"], &["[2]", "[1,1]", "[-1,-1]"]);
    no_dead_ends(&up_to_one, b"[],-012", 8, 4);
    let positive = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "integer", "minimum": 1}});
    check(&positive, &["[1,2,10]"], &["[0]", "[2,2]"]);
    no_dead_ends(&positive, b"[],012", 9, 3);
    // A small range is all named; a named value and the free rest share
    // a value (3), which still comes once.
    let range = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "integer", "minimum": 1, "maximum": 3}});
    check(&range, &["[1,2,3]", "[3,1]"], &["[1,1]", "[4]", "[1,2,3,1]"]);
    no_dead_ends(&range, b"[],0123", 8, 3);
    let both = json!({"type": "array", "uniqueItems": true,
        "items": {"anyOf": [{"const": 3}, {"type": "integer", "minimum": 2}]}});
    check(&both, &["[3,2,4]"], &["[3,3]", "[2,3,2]", "[1]"]);
    no_dead_ends(&both, b"[],234", 8, 3);
}

#[test]
fn bounded_strings_search_for_an_unused_value() {
    // Seven values in all: after them the array may only close.
    let short = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "string", "pattern": "^[ab]*$", "maxLength": 2}});
    check(
        &short,
        &["[]", r#"["","a","b","aa","ab","ba","bb"]"#, r#"["ab","a"]"#],
        &[r#"["a","a"]"#, r#"["abb"]"#, r#"["","a","b","aa","ab","ba","bb",""]"#],
    );
    let walked = no_dead_ends(&short, b"[],\"ab", 16, 8);
    assert!(walked > 1_000, "{walked} texts walked");
    let c = compact(&short).unwrap();
    let g = c.grammar.to_earley(earley::Limits::default()).unwrap();
    let mut p = earley::Parser::new(&g, &|_| None).unwrap();
    for &b in br#"["","a","b","aa","ab","ba","bb""# {
        assert!(p.try_consume_byte(b).unwrap());
    }
    // Every value is taken: no further item may start.
    assert!(!p.try_consume_byte(b',').unwrap());
    assert!(p.try_consume_byte(b']').unwrap());
}

#[test]
fn closed_objects_search_for_an_unused_value() {
    let closed = json!({"type": "array", "uniqueItems": true, "items": {"type": "object",
        "properties": {"k": {"enum": ["a", "b"]}, "n": {"type": "integer", "minimum": 0, "maximum": 9, "multipleOf": 4}},
        "additionalProperties": false}});
    check(
        &closed,
        &["[{},{\"k\":\"a\"},{\"k\":\"b\"},{\"n\":4},{\"k\":\"a\",\"n\":8}]"],
        &["[{},{}]", "[{\"k\":\"a\"},{\"k\":\"a\"}]", "[{\"n\":3}]", "[{\"n\":4},{\"n\":4.0}]"],
    );
    let walked = no_dead_ends(&closed, b"[]{},:\"kabn048", 26, 16);
    assert!(walked > 1_000, "{walked} texts walked");
    // With every value of `k` alone taken, `{"k":` is a dead end only if
    // `n` cannot follow; here it can, so `{"k":"a"` stays open.
    let c = compact(&closed).unwrap();
    let g = c.grammar.to_earley(earley::Limits::default()).unwrap();
    let mut p = earley::Parser::new(&g, &|_| None).unwrap();
    for &b in br#"[{"k":"a"},{"k":"b"},{"k":"#.iter() {
        assert!(p.try_consume_byte(b).unwrap());
    }
    assert!(p.try_consume_byte(b'"').unwrap());
    assert!(p.try_consume_byte(b'a').unwrap());
    assert!(p.try_consume_byte(b'"').unwrap(), "`n` may still follow");
    assert!(!p.try_consume_byte(b'}').unwrap(), "a duplicate");
}

/// `prefixItems` beside `uniqueItems`: one member per position, in order,
/// then `items`; every item distinct from every other, whatever their
/// positions' schemas.
#[test]
fn prefix_items_come_in_order_and_differ() {
    let mixed = json!({"type": "array", "uniqueItems": true,
        "prefixItems": [{"type": "integer"}, {"type": "string", "maxLength": 1}],
        "items": {"type": "number"}});
    check(
        &mixed,
        &["[]", "[1]", "[1,\"a\"]", "[1,\"a\",2]", "[1,\"a\",2.5,3]", "[-0,\"\",0.5]"],
        &["[\"a\"]", "[1,2]", "[1,\"a\",1]", "[1,\"a\",2,2]", "[1,\"a\",\"b\"]", "[0,\"a\",0]"],
    );
    let pair = json!({"type": "array", "uniqueItems": true,
        "prefixItems": [{"enum": [1, 2]}, {"enum": [1, 2]}], "items": false});
    check(&pair, &["[]", "[1]", "[2]", "[1,2]", "[2,1]"], &["[1,1]", "[2,2]", "[1,2,1]"]);
    // After `[1,` only `2` may come (the second position's other value
    // repeats the first), and after `[1,2` only the end.
    let walked = no_dead_ends(&pair, b"[]12,", 7, 6);
    assert!(walked > 10, "{walked} texts walked");
    let walked = no_dead_ends(&mixed, b"[]\"a,15.", 9, 8);
    assert!(walked > 100, "{walked} texts walked");
    // A position with no value ends the array there.
    let cut = json!({"type": "array", "uniqueItems": true,
        "prefixItems": [{"type": "integer"}, false], "items": {"type": "integer"}});
    check(&cut, &["[]", "[1]"], &["[1,2]"]);
}

#[test]
fn items_with_exponents_take_one_spelling_per_value() {
    let numbers = json!({"type": "array", "uniqueItems": true, "items": {"type": "object",
        "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": false}});
    check(
        &numbers,
        &[r#"[{"x":0},{"x":0.5},{"x":-1.25}]"#],
        &[r#"[{"x":1},{"x":1}]"#, r#"[{"x":1e3}]"#, r#"[{"x":1.50}]"#, r#"[{"x":0},{"x":-0}]"#],
    );
    no_dead_ends(&numbers, b"[]{},:\"x-01.", 13, 10);
}

/// Random arrays over pools of values with equal-by-value spellings (`1`
/// and `1.0`, `"\n"` and `"\u000a"`, objects in either member order),
/// decided by the engine (properties in any order) and by an independent validator (the crates.io
/// `jsonschema`): they agree on every array. The pools keep to the
/// spellings the engine writes (strings escape with `\u` only control
/// characters; in such arrays no exponents, in searched items no trailing
/// fraction zeros, in integer items no fraction: DESIGN, "uniqueItems"),
/// so every valid array must be accepted too.
#[test]
fn unique_items_agree_with_an_independent_validator() {
    use rand::{Rng, SeedableRng};
    let cases: [(Value, &[&str]); 7] = [
        // Any values: a free distinct phrase.
        (
            json!({"type": "array", "uniqueItems": true}),
            &[
                "1",
                "1.0",
                "1.5",
                "1.50",
                "0",
                "-0",
                "0.0",
                r#""\n""#,
                r#""\u000a""#,
                r#"{"a":1,"b":2}"#,
                r#"{"b":2,"a":1.0}"#,
                r#"[1,"\t"]"#,
                r#"[1.0,"\u0009"]"#,
                "null",
                "true",
                "{}",
                "[]",
            ],
        ),
        // Closed objects: a searched phrase.
        (
            json!({"type": "array", "uniqueItems": true, "items": {"type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "string", "maxLength": 2}},
                "additionalProperties": false}}),
            &[
                r#"{"a":1}"#,
                r#"{"a":1,"b":"\t"}"#,
                r#"{"b":"\u0009","a":1}"#,
                r#"{"b":"x","a":1}"#,
                "{}",
                r#"{"b":""}"#,
                r#"{"a":2}"#,
            ],
        ),
        // Bounded strings: searched.
        (
            json!({"type": "array", "uniqueItems": true,
                "items": {"type": "string", "maxLength": 2}}),
            &[r#""a""#, r#""\n""#, r#""\u000a""#, r#""a\t""#, r#""a\u0009""#, r#""""#, r#""b""#],
        ),
        // Bounded numbers with fractions: searched, one spelling a value.
        (
            json!({"type": "array", "uniqueItems": true,
                "items": {"type": "number", "minimum": 0, "maximum": 3}}),
            &["0", "1", "1.5", "3", "2.25", "0.5"],
        ),
        // Positions in order, then more items: searched, ordered.
        (
            json!({"type": "array", "uniqueItems": true,
                "prefixItems": [{"type": "integer"}, {"type": "string", "maxLength": 1}],
                "items": {"type": "number"}}),
            &["1", "2", "0", "-0", "2.5", r#""a""#, r#""\n""#, r#""\u000a""#],
        ),
        // A `contains` count: named slots for the matching items.
        (
            json!({"type": "array", "uniqueItems": true, "items": {"type": "integer"},
                "contains": {"minimum": 10}, "minContains": 2}),
            &["1", "2", "0", "-0", "10", "11", "12"],
        ),
        // Arrays of integers: free (they can always grow).
        (
            json!({"type": "array", "uniqueItems": true,
                "items": {"type": "array", "items": {"type": "integer"}}}),
            &["[]", "[1]", "[1,2]", "[2,1]", "[-0]", "[0]"],
        ),
    ];
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x0a11);
    for (schema, pool) in &cases {
        let any_order = Options::compact().with_property_order(PropertyOrder::Any);
        let c = compile(schema, &any_order).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let validator = json_validator::validator_for(schema).unwrap();
        let (mut valid, mut invalid) = (0, 0);
        for _ in 0..60 {
            let n = rng.random_range(0..5);
            let items: Vec<&str> = (0..n).map(|_| pool[rng.random_range(0..pool.len())]).collect();
            let text = format!("[{}]", items.join(","));
            let instance: Value = serde_json::from_str(&text).unwrap();
            let expected = validator.is_valid(&instance);
            assert_eq!(accepts_text(&c, &text), expected, "{schema} on {text}");
            if expected {
                valid += 1;
            } else {
                invalid += 1;
            }
        }
        assert!(valid > 5 && invalid > 5, "{schema}: {valid} valid, {invalid} invalid");
    }
}

/// One `contains` constraint beside `uniqueItems`: the matching items
/// fill named slots of the phrase (required ones for `minContains`,
/// optional ones for `maxContains`), every item distinct from the others.
#[test]
fn contains_counts_distinct_matching_items() {
    let at_least = json!({"type": "array", "uniqueItems": true, "items": {"type": "integer"},
        "contains": {"minimum": 10}, "minContains": 2});
    check(
        &at_least,
        &["[10,11]", "[1,10,2,11]", "[10,11,12]", "[10,1,11]"],
        &["[]", "[10]", "[1,2,10]", "[10,10]", "[10,11,10]", "[1,10,1,11]"],
    );
    let walked = no_dead_ends(&at_least, b"[]1,0", 8, 8);
    assert!(walked > 100, "{walked} texts walked");
    let at_most = json!({"type": "array", "uniqueItems": true,
        "items": {"type": "string", "maxLength": 1},
        "contains": {"const": "a"}, "maxContains": 1, "minContains": 0});
    check(
        &at_most,
        &["[]", "[\"a\"]", "[\"b\",\"a\"]", "[\"b\"]"],
        &["[\"a\",\"a\"]", "[\"b\",\"b\"]"],
    );
    // No item can match: the array cannot be, not even empty.
    let never = json!({"properties": {"a": {"type": "array", "uniqueItems": true,
        "items": {"type": "integer"}, "contains": {"type": "string"}}}});
    check(&never, &["{}"], &["{\"a\":[]}", "{\"a\":[1]}"]);
    let plain = json!({"type": "array", "uniqueItems": true, "contains": {"type": "string"}});
    check(&plain, &["[\"a\"]", "[1,\"a\",2]", "[\"a\",\"b\"]"], &["[]", "[1,2]", "[\"a\",\"a\"]"]);
}
