//! References to other documents handed over in `Options::documents`
//! (issue 23): relative and absolute URIs, `$id`s in subschemas, anchors,
//! cycles across documents, the resolver, and the errors.

use jsonschema::{Documents, ErrorKind, Options, compile};
use serde_json::{Value, json};

use crate::common::accepts_text;

fn check(schema: Value, docs: Documents, yes: &[&str], no: &[&str]) {
    let o = Options::compact().with_documents(docs);
    let c = compile(&schema, &o).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for t in yes {
        assert!(accepts_text(&c, t), "{schema} should accept {t}");
    }
    for t in no {
        assert!(!accepts_text(&c, t), "{schema} should reject {t}");
    }
}

fn base() -> Value {
    json!({
        "$defs": {
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "name": {"$anchor": "name", "type": "string", "minLength": 1}
        }
    })
}

#[test]
fn relative_and_absolute() {
    // A relative reference in a document without `$id` and a key relative
    // to the same default base.
    let s = json!({"properties": {"p": {"$ref": "base.json#/$defs/port"}}});
    let docs = Documents::new().with("base.json", base());
    check(s, docs, &[r#"{"p":80}"#], &[r#"{"p":0}"#, r#"{"p":"x"}"#]);
    // Relative to the root's `$id`, the key written absolute.
    let s = json!({"$id": "https://example.com/schemas/root.json",
        "properties": {"p": {"$ref": "base.json#/$defs/port"}, "n": {"$ref": "base.json#name"}}});
    let docs = Documents::new().with("https://example.com/schemas/base.json", base());
    check(s.clone(), docs, &[r#"{"p":80,"n":"a"}"#], &[r#"{"n":""}"#, r#"{"p":70000}"#]);
    // The key relative to the root's `$id`.
    let docs = Documents::new().with("base.json", base());
    check(s.clone(), docs, &[r#"{"n":"a"}"#], &[r#"{"n":""}"#]);
    // Found by the document's own `$id`, whatever its key.
    let mut b = base();
    b["$id"] = json!("https://example.com/schemas/base.json");
    let docs = Documents::new().with("file:///tmp/x.json", b);
    check(s, docs, &[r#"{"n":"a"}"#], &[r#"{"n":""}"#]);
}

#[test]
fn ids_in_subschemas_and_chains() {
    // The referenced document rebases inside itself and refers on to a
    // third document, relative to its own base.
    let a = json!({"$id": "https://example.com/a/main.json", "$defs": {
        "inner": {"$id": "sub/inner.json", "$ref": "../../c/leaf.json"}
    }});
    let c = json!({"type": "array", "items": {"type": "boolean"}, "maxItems": 2});
    let docs = Documents::new()
        .with("https://example.com/a/main.json", a)
        .with("https://example.com/c/leaf.json", c);
    let s = json!({"$ref": "https://example.com/a/sub/inner.json"});
    check(s, docs, &["[true]", "[]"], &["[1]", "[true,true,true]"]);
}

#[test]
fn cycles_across_documents() {
    // a.json's node holds a list of b.json's nodes, which hold a.json's.
    let a = json!({"type": "object", "properties": {
        "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "b.json"}}
    }, "additionalProperties": false});
    let b = json!({"type": "object", "properties": {
        "w": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "a.json"}}
    }, "additionalProperties": false});
    let docs = Documents::new().with("a.json", a).with("b.json", b);
    let s = json!({"$ref": "a.json"});
    check(
        s,
        docs,
        &[r#"{"v":1,"kids":[{"w":"x","kids":[{"v":2}]}]}"#],
        &[r#"{"kids":[{"v":1}]}"#, r#"{"kids":[{"w":"x","kids":[{"w":"y"}]}]}"#],
    );
}

#[test]
fn the_resolver_is_asked_for_what_the_map_lacks() {
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = asked.clone();
    let docs = Documents::new().with("base.json", base()).with_resolver(move |uri| {
        log.lock().unwrap().push(uri.to_string());
        (uri == "urn:example:flag").then(|| json!({"type": "boolean"}))
    });
    let s = json!({"properties": {"p": {"$ref": "base.json#/$defs/port"}, "f": {"$ref": "urn:example:flag"}}});
    check(s, docs, &[r#"{"p":1,"f":true}"#], &[r#"{"f":1}"#]);
    assert_eq!(*asked.lock().unwrap(), ["urn:example:flag"]);
}

#[test]
fn errors_name_the_uri_and_the_pointer() {
    let e =
        compile(&json!({"$ref": "https://json.schemastore.org/base.json#/x"}), &Options::compact())
            .unwrap_err();
    assert_eq!((e.kind(), e.pointer()), (&ErrorKind::UnresolvedRef, ""));
    assert!(e.message().contains("\"https://json.schemastore.org/base.json\""), "{e}");
    let docs = Documents::new().with("base.json", base());
    let o = Options::compact().with_documents(docs.clone());
    let e = compile(&json!({"$ref": "base.json#/$defs/nope"}), &o).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnresolvedRef);
    assert!(e.message().contains("/$defs/nope"), "{e}");
    let e = compile(&json!({"$ref": "base.json#nope"}), &o).unwrap_err();
    assert!(e.message().contains("no anchor"), "{e}");
    // An error inside a referenced document has that document's pointer.
    let bad = json!({"$defs": {"x": {"type": "string", "minLength": "3"}}});
    let o = Options::compact().with_documents(docs.with("bad.json", bad));
    let e = compile(&json!({"$ref": "bad.json#/$defs/x"}), &o).unwrap_err();
    assert_eq!(e.pointer(), "json-schema:///bad.json#/$defs/x", "{e}");
}

#[test]
fn document_count_is_limited() {
    // A resolver that makes a new document for every URI: a chain without end.
    let docs = Documents::new().with_resolver(|uri| {
        let n: u64 = uri.rsplit('/').next()?.parse().ok()?;
        Some(json!({"$ref": format!("{}", n + 1)}))
    });
    let o = Options::compact().with_documents(docs);
    let e = compile(&json!({"$ref": "0"}), &o).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains("Limits::max_documents"), "{e}");
}

#[test]
fn draft_04_rebases_on_id_only() {
    // In draft-04 `$id` is an unknown word: the reference resolves against
    // the root's `id`, not against the subschema's `$id` (CRYENGINE's
    // schemas on SchemaStore are written so).
    let s = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": "https://example.com/root.json",
        "properties": {"name": {"$id": "/properties/name", "$ref": "#/definitions/word"}},
        "definitions": {"word": {"type": "string", "maxLength": 3}}
    });
    check(s, Documents::new(), &[r#"{"name":"abc"}"#], &[r#"{"name":"abcd"}"#, r#"{"name":1}"#]);
    // Up to draft-07 an id beside `$ref` is ignored like its other siblings.
    let s = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://example.com/root.json",
        "properties": {"name": {"$id": "/properties/name", "$ref": "#/definitions/word"}},
        "definitions": {"word": {"type": "string", "maxLength": 3}}
    });
    check(s, Documents::new(), &[r#"{"name":"abc"}"#], &[r#"{"name":"abcd"}"#]);
    // From draft-06 on `$id` elsewhere rebases: the same reference one
    // level down is resolved against `/sub`, where there is nothing.
    let s = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://example.com/root.json",
        "properties": {"sub": {"$id": "/sub", "properties": {"x": {"$ref": "#/definitions/word"}}}},
        "definitions": {"word": {"type": "string"}}
    });
    let e = compile(&s, &Options::compact()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnresolvedRef, "{e}");
}
