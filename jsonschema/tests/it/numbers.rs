//! Exact decimals: numbers read from the schema text as they are spelled,
//! so that no float underflow, overflow or rounding changes a bound or a
//! constant.

use jsonschema::{ErrorKind, Options, compile_str};

use crate::common::{accepts_text, within};

fn compact(text: &str) -> jsonschema::Compiled {
    compile_str(text, &Options::compact()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn tiny_bounds_and_constants_do_not_underflow() {
    within(60, || {
        let tiny = format!("0.{}1", "0".repeat(399));
        let c = compact(r#"{"minimum": 1e-400}"#);
        assert!(!accepts_text(&c, "0"), "0 is below 1e-400");
        assert!(!accepts_text(&c, "-1"));
        assert!(accepts_text(&c, "1"));
        assert!(accepts_text(&c, &tiny));
        let c = compact(r#"{"exclusiveMinimum": 1e-400}"#);
        assert!(!accepts_text(&c, &tiny));
        assert!(accepts_text(&c, &format!("0.{}11", "0".repeat(399))));
        let c = compact(r#"{"const": 1e-400}"#);
        assert!(!accepts_text(&c, "0"));
        assert!(accepts_text(&c, &tiny));
        let c = compact(r#"{"maximum": -1e-400}"#);
        assert!(!accepts_text(&c, "0"));
        assert!(accepts_text(&c, "-1"));
        let c = compact(r#"{"type": "number", "not": {"const": 1e-400}}"#);
        assert!(accepts_text(&c, "0"));
        assert!(!accepts_text(&c, &tiny));
    });
}

#[test]
fn huge_bounds_do_not_overflow() {
    within(60, || {
        // serde_json cannot read 1e400 as a float at all.
        let c = compact(r#"{"maximum": 1e400}"#);
        let big = format!("1{}", "0".repeat(400));
        assert!(accepts_text(&c, &big));
        assert!(!accepts_text(&c, &format!("{big}1")));
        assert!(accepts_text(&c, "-5"));
        let c = compact(r#"{"minimum": 12345678901234567890123}"#);
        assert!(!accepts_text(&c, "12345678901234567890122"), "an f64 would round the bound");
        assert!(accepts_text(&c, "12345678901234567890123"));
    });
}

#[test]
fn rounding_does_not_change_constants() {
    within(60, || {
        let c = compact(r#"{"const": 0.30000000000000001}"#);
        assert!(!accepts_text(&c, "0.3"), "0.3 is another number");
        assert!(accepts_text(&c, "0.30000000000000001"));
        let c = compact(r#"{"enum": [1, 0.1000000000000000000001]}"#);
        assert!(!accepts_text(&c, "0.1"));
        assert!(accepts_text(&c, "1.0"));
    });
}

#[test]
fn digit_limit_is_an_error_naming_it() {
    let e = compile_str(r#"{"minimum": 1e-5000}"#, &Options::compact()).unwrap_err();
    assert_eq!((e.kind(), e.keyword()), (&ErrorKind::LimitExceeded, "minimum"));
    assert!(e.message().contains("1e-5000"), "{e}");
    assert!(e.message().contains("max_number_digits"), "{e}");
    // A huge exponent is refused before its zeros are written out.
    let e = compile_str(r#"{"const": 1e999999999999}"#, &Options::compact()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::LimitExceeded);
}

#[test]
fn schema_text_errors_have_positions() {
    let e = compile_str("{\"type\": \"string\",\n \"minLength\": 01}", &Options::compact())
        .unwrap_err();
    assert_eq!((e.kind(), e.pointer()), (&ErrorKind::InvalidJson, "/minLength"));
    assert!(e.message().starts_with("line 2 column 15"), "{e}");
    let mut o = Options::compact();
    o.limits.max_schema_bytes = 10;
    let e = compile_str(r#"{"type": "string"}"#, &o).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::LimitExceeded);
    assert!(e.message().contains("max_schema_bytes"), "{e}");
    let deep = format!("{}1{}", "[".repeat(600), "]".repeat(600));
    let e = compile_str(&format!("{{\"const\": {deep}}}"), &Options::compact()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::LimitExceeded);
    assert!(e.message().contains("max_json_depth"), "{e}");
}

/// `max_number_length` and `max_string_length` cap what the grammar writes
/// (a stricter grammar: every accepted text is still valid); keys and
/// `const` values are not capped, and a cap that empties a bounded set
/// leaves no number.
#[test]
fn length_caps() {
    use serde_json::{Value, json};
    let opts = jsonschema::Options::compact().with_length_caps(Some(4), Some(5));
    let c = |s: Value| jsonschema::compile(&s, &opts).unwrap();
    let n = c(json!({"type": "number"}));
    for (text, ok) in [("12345", true), ("-1.25", true), ("123456", false), ("1.2345", false)] {
        assert_eq!(accepts_text(&n, text), ok, "{text}");
    }
    let obj = c(json!({"properties": {"a_long_name": {"const": 1234567}}}));
    assert!(accepts_text(&obj, r#"{"a_long_name":1234567}"#));
    assert!(accepts_text(&obj, r#"{"abcd":"wxyz"}"#));
    assert!(accepts_text(&obj, r#"{"abcde":1}"#), "keys are not capped");
    assert!(!accepts_text(&obj, r#"{"abcd":"vwxyz"}"#), "a free string over the cap");
    // Integers are written without exponent: 123456 and up need 6 digits.
    let far = c(json!({"properties": {"x": {"type": "integer", "minimum": 123456}}}));
    assert!(accepts_text(&far, "{}"));
    assert!(!accepts_text(&far, r#"{"x":123456}"#));
}

/// `max_key_length` caps keys that any text may be (not listed names, not
/// keys under a pattern); `max_additional_properties` caps the members
/// beyond the listed names, in schema order and in any order (where it caps
/// all members at the listed names plus the cap).
#[test]
fn member_caps() {
    use serde_json::{Value, json};
    let opts = jsonschema::Options::compact().with_member_caps(Some(3), Some(2));
    let c = |s: Value, o: &jsonschema::Options| jsonschema::compile(&s, o).unwrap();
    let schema = json!({"properties": {"a_long_name": {"type": "integer"}}});
    let obj = c(schema.clone(), &opts);
    for (text, ok) in [
        (r#"{"a_long_name":1,"abc":1,"xyz":2}"#, true),
        (r#"{"abc":1,"xyz":2}"#, true),
        (r#"{"abcd":1}"#, false),
        (r#"{"a":1,"b":2,"c":3}"#, false),
        (r#"{"a_long_name":1,"a":1,"b":2,"c":3}"#, false),
    ] {
        assert_eq!(accepts_text(&obj, text), ok, "{text}");
    }
    // The members of free values count per object.
    let nested = c(json!({"type": "object"}), &opts);
    assert!(accepts_text(&nested, r#"{"a":{"b":1,"c":2},"d":{"e":{}}}"#));
    assert!(!accepts_text(&nested, r#"{"a":{"b":1,"c":2,"d":3}}"#));
    // A key under a pattern is not capped.
    let pattern = c(json!({"patternProperties": {"^x": {}}, "additionalProperties": false}), &opts);
    assert!(accepts_text(&pattern, r#"{"xxxxxx":1}"#));
    // In any order, listed names and others share one count.
    let any = opts.clone().with_property_order(jsonschema::PropertyOrder::Any);
    let obj = c(schema, &any);
    for (text, ok) in [
        (r#"{"abc":1,"a_long_name":1,"xyz":2}"#, true),
        (r#"{"abc":1,"xy":1,"xyz":2}"#, true),
        (r#"{"abc":1,"xy":1,"xyz":2,"a_long_name":1}"#, false),
    ] {
        assert_eq!(accepts_text(&obj, text), ok, "{text}");
    }
    // Without caps, neither is bounded.
    let free = c(json!({"type": "object"}), &jsonschema::Options::compact());
    assert!(accepts_text(&free, r#"{"abcdef":1,"b":2,"c":3,"d":4}"#));
}
