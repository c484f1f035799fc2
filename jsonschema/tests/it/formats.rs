//! `format`: unknown formats as annotations with warnings, strict formats,
//! formats registered by the caller, and negated formats.

use jsonschema::{ErrorKind, Options, compile};
use serde_json::json;

use crate::common::accepts_text;

#[test]
fn unknown_formats_are_annotations_with_warnings() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "format": "abc-draft-js_RawDraftContentState"},
            "b": {"type": "string", "format": "date"}
        }
    });
    let c = compile(&schema, &Options::compact()).unwrap();
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    let w = &c.warnings[0];
    assert_eq!((w.keyword(), w.pointer()), ("format", "/properties/a"));
    assert!(w.message().contains("abc-draft-js_RawDraftContentState"), "{w}");
    // The unknown format leaves the string free; the known one still holds.
    assert!(accepts_text(&c, r#"{"a":"anything at all","b":"2024-02-29"}"#));
    assert!(!accepts_text(&c, r#"{"a":"x","b":"2023-02-29"}"#));
}

#[test]
fn strict_formats_make_unknown_formats_errors() {
    let schema = json!({"properties": {"a": {"format": "no-such-format"}}});
    let e = compile(&schema, &Options::compact().with_strict_formats(true)).unwrap_err();
    assert_eq!(
        (e.kind(), e.keyword(), e.pointer()),
        (&ErrorKind::UnknownFormat, "format", "/properties/a")
    );
}

#[test]
fn negated_unknown_formats_never_hold() {
    // An annotation always holds, so its negation never does: the `oneOf`
    // branches with the unknown format win over the plain string.
    let schema = json!({"not": {"type": "string", "format": "mystery"}});
    let c = compile(&schema, &Options::compact()).unwrap();
    assert!(accepts_text(&c, "1"));
    assert!(!accepts_text(&c, r#""x""#));
    assert_eq!(c.warnings.len(), 1);
}

#[test]
fn registered_formats_constrain_strings() {
    let options = Options::compact().with_format("semver", r"\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?");
    let schema = json!({"type": "string", "format": "semver"});
    let c = compile(&schema, &options).unwrap();
    assert!(c.warnings.is_empty());
    for yes in [r#""1.2.3""#, r#""10.0.1-rc.1""#] {
        assert!(accepts_text(&c, yes), "{yes}");
    }
    // The whole string must match, not a substring.
    for no in [r#""1.2""#, r#""v1.2.3""#, r#""1.2.3 ""#] {
        assert!(!accepts_text(&c, no), "{no}");
    }
    // The registered regex is the format: its negation is exact.
    let c = compile(&json!({"type": "string", "not": {"format": "semver"}}), &options).unwrap();
    assert!(accepts_text(&c, r#""v1.2.3""#));
    assert!(!accepts_text(&c, r#""1.2.3""#));
    // A registered name overrides a built-in format.
    let options = Options::compact().with_format("date", "[0-9]{8}");
    let c = compile(&json!({"type": "string", "format": "date"}), &options).unwrap();
    assert!(accepts_text(&c, r#""20240229""#));
    assert!(!accepts_text(&c, r#""2024-02-29""#));
}

#[test]
fn invalid_registered_formats_are_errors() {
    let options = Options::compact().with_format("bad", "a{2,1}");
    let e = compile(&json!({"items": {"format": "bad"}}), &options).unwrap_err();
    assert_eq!(
        (e.kind(), e.keyword(), e.pointer()),
        (&ErrorKind::UnsupportedPattern, "format", "/items")
    );
    assert!(e.message().contains("\"bad\""), "{e}");
}

#[test]
fn negated_subset_formats_use_supersets() {
    // The e-mail regex is a subset of RFC 5321 (no quoted local parts), so
    // its negation is taken through a superset: anything with an `@` is
    // left out, which never accepts an address.
    let c = compile(&json!({"type": "string", "not": {"format": "email"}}), &Options::compact())
        .unwrap();
    assert!(accepts_text(&c, r#""plain text""#));
    for no in [r#""a@example.com""#, r#""\"quoted local\"@example.com""#, r#""@""#] {
        assert!(!accepts_text(&c, no), "{no}");
    }
    // A time with a leap second is a time: not in the negation.
    let c =
        compile(&json!({"type": "string", "not": {"format": "date-time"}}), &Options::compact())
            .unwrap();
    assert!(accepts_text(&c, r#""2024-01-01""#));
    assert!(!accepts_text(&c, r#""2016-12-31T23:59:60Z""#));
    assert!(!accepts_text(&c, r#""2016-12-31T23:59:59Z""#));
    // oneOf branches that overlap through a subset format now compile.
    let schema = json!({"oneOf": [
        {"type": "string", "format": "uri"},
        {"type": "string", "maxLength": 3}
    ]});
    let c = compile(&schema, &Options::compact()).unwrap();
    assert!(accepts_text(&c, r#""http://x.org""#));
    assert!(accepts_text(&c, r#""abc""#));
    assert!(!accepts_text(&c, r#""a:b""#), "both branches hold");
}

#[test]
fn regex_format_is_a_safe_subset() {
    let c = compile(&json!({"type": "string", "format": "regex"}), &Options::compact()).unwrap();
    for yes in
        [r"^[a-zA-Z0-9_]{3,16}$", "a|b", "||", "(a(?:b)+)*?", r"\d+\.\d+", r"[\w.-]", "", "x{2,}"]
    {
        let text = serde_json::to_string(yes).unwrap();
        assert!(accepts_text(&c, &text), "{yes:?} is a valid regex");
    }
    for no in ["*", "\\", "[", "a{3,2}", "(", "a)", "a**", "[]", "\u{1}"] {
        let text = serde_json::to_string(no).unwrap();
        assert!(!accepts_text(&c, &text), "{no:?} is not a valid regex");
    }
}
