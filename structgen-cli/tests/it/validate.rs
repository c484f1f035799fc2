//! Schemas in every command: `validate` on a table of documents (exit
//! codes, token text, line:col, keyword and pointer), `.json` grammars and
//! `--schema` in `mask`, the property-order switch (flag and `%json`
//! inline), `demo --schema` finishing on several seeds, limits from the
//! command line, and SentencePiece documents encoded as continuations.

use std::path::PathBuf;
use std::process::Output;

use crate::cli::structgen;

const SCHEMA: &str = r#"{"type": "object", "properties": {
  "name": {"type": "string", "maxLength": 8},
  "age": {"type": "integer", "minimum": 0},
  "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
  "required": ["name", "age"], "additionalProperties": false}"#;

/// A directory of this test's files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("structgen-validate-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_owned()
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn validate_answers_like_a_validator() {
    let d = dir("table");
    let schema = write(&d, "s.json", SCHEMA);
    // (document, exit code, what the message must say)
    let table: &[(&str, i32, &[&str])] = &[
        // An editor's file: indentation and a trailing newline.
        ("{\n  \"name\": \"Ann\",\n  \"age\": 3\n}\n", 0, &["valid"]),
        ("  {\"name\": \"Ann\", \"age\": 3, \"tags\": [\"a\"]}\r\n\n", 0, &["valid"]),
        (
            "{\"name\": \"Ann\", \"age\": -3}",
            1,
            &[":1:25:", "\"3\"", "instance: /age", "`minimum` at /properties/age"],
        ),
        (
            "{\n  \"name\": \"Ann\",\n  \"age\": 3,\n  \"x\": 1\n}",
            1,
            &[":4:4:", "\"x\"", "`additionalProperties` at (the root)"],
        ),
        ("{\"name\": \"Annabelle Lee\", \"age\": 3}", 1, &["instance: /name", "`maxLength`"]),
        ("{\"name\": \"Ann\", \"age\": 3, \"tags\": [\"c\"]}", 1, &["/tags/0", "`enum`"]),
        ("{\"name\": \"Ann\"}", 1, &["`required` at (the root)", "expected: ,"]),
        ("{\"age\": 3, \"name\": \"Ann\"}", 1, &["another order", "--any-order"]),
        ("{\"name\": \"Ann\", \"age\": 3", 1, &["the text ends at byte"]),
        ("{\"name\": 'Ann', \"age\": 3}", 1, &["not JSON"]),
    ];
    for (i, (doc, code, needles)) in table.iter().enumerate() {
        let path = write(&d, &format!("doc{i}.json"), doc);
        let out = structgen(&["validate", "--schema", &schema, &path]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(*code), "{doc:?}\n{stdout}{stderr}");
        for n in *needles {
            assert!(stdout.contains(n), "{doc:?}: `{n}` missing from\n{stdout}");
        }
        assert!(stderr.is_empty(), "{doc:?}: {stderr}");
    }
    // Several documents: 1 when any is rejected; the JSON form per line.
    let ok = write(&d, "ok.json", "{\"name\": \"A\", \"age\": 1}");
    let bad = write(&d, "bad.json", "{\"name\": \"A\", \"age\": 1.5}");
    let out = structgen(&["validate", "--json", "--schema", &schema, &ok, &bad]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> =
        text(&out).0.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(lines[1]["valid"], false);
    // `1.` may begin 1.0 (an integer with a zero fraction); the `5` may not.
    assert_eq!(lines[1]["token"]["text"], "5");
    assert_eq!(lines[1]["instance_pointer"], "/age");
    assert_eq!(lines[1]["reason"]["keywords"][0]["keyword"], "type");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn property_order_is_a_switch_on_the_flag_and_inline() {
    let d = dir("order");
    let schema = write(&d, "s.json", SCHEMA);
    let doc = write(&d, "doc.json", "{\"age\": 3, \"name\": \"Ann\"}\n");
    let out = structgen(&["validate", "--schema", &schema, &doc]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let out = structgen(&["validate", "--schema", &schema, "--any-order", &doc]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    // The same switch inside the schema (llguidance's "x-guidance" key),
    // and in a Lark grammar's `%json`.
    let inline = SCHEMA.replacen('{', r#"{"x-guidance": {"property_order": "any"}, "#, 1);
    let schema_any = write(&d, "any.json", &inline);
    let out = structgen(&["validate", "--schema", &schema_any, &doc]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let lark = write(&d, "g.lark", &format!("start: %json {inline}\n"));
    let out = structgen(&["validate", "--grammar", &lark, &doc]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let lark = write(&d, "h.lark", &format!("start: %json {SCHEMA}\n"));
    let out = structgen(&["validate", "--grammar", &lark, &doc]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn mask_takes_json_schemas() {
    let d = dir("mask");
    let schema = write(&d, "product.schema.json", SCHEMA);
    let doc = write(&d, "doc.json", "{\"name\": \"Ann\", \"age\": 3}");
    for flag in ["--grammar", "--schema"] {
        let out = structgen(&["mask", flag, &schema, "--input", &doc]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {:?}", text(&out));
    }
    let out = structgen(&["mask", "--grammar", &write(&d, "g.txt", "x"), "--input", &doc]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("unknown grammar kind `.txt`"), "{:?}", text(&out));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn demo_with_a_schema_finishes_within_its_token_bound() {
    let d = dir("demo");
    let schema = write(&d, "s.json", SCHEMA);
    let lark = write(&d, "g.lark", &format!("start: %json {SCHEMA}\n"));
    for seed in ["0", "1", "2", "3", "4"] {
        for (flag, file) in [("--schema", &schema), ("--grammar", &lark)] {
            let out = structgen(&["demo", flag, file, "--seed", seed, "--max-tokens", "200"]);
            let (stdout, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(0), "seed {seed} {flag}\n{stdout}{stderr}");
            assert!(stdout.contains("ended with EOS; parses: yes"), "{stdout}");
            let doc = stdout.split("\n---\n").next().unwrap();
            let v: serde_json::Value = serde_json::from_str(doc).unwrap();
            assert!(v["name"].is_string() && v["age"].is_u64(), "{doc}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn limits_are_settable_from_the_command_line() {
    let d = dir("limits");
    let schema = write(&d, "s.json", SCHEMA);
    let doc = write(&d, "doc.json", "{\"name\": \"Ann\", \"age\": 3}");
    let out = structgen(&["validate", "--schema", &schema, "--limit", "lexer.max_states=3", &doc]);
    assert_eq!(out.status.code(), Some(1));
    let (stdout, _) = text(&out);
    assert!(stdout.contains("stopped by a limit") && stdout.contains("max_states"), "{stdout}");
    assert!(!stdout.contains("schema:"), "a limit is not a keyword: {stdout}");
    let file = write(&d, "limits.json", r#"{"lexer": {"max_states": 100000}}"#);
    let out = structgen(&["validate", "--schema", &schema, "--limits", &file, &doc]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = structgen(&["validate", "--schema", &schema, "--limit", "lexer.states=3", &doc]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("`lexer.states`: unknown limit"), "{:?}", text(&out));
    let out = structgen(&["limits"]);
    assert!(text(&out).0.contains("lexer.max_states"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sentencepiece_documents_are_continuations() {
    let Some(llama2) = testkit::data_path_or_skip(
        "validate with a SentencePiece tokenizer",
        "tokenizers/llama2.tokenizer.json.gz",
    ) else {
        return;
    };
    let d = dir("spm");
    let schema = write(&d, "s.json", SCHEMA);
    let doc = write(&d, "doc.json", "{\"name\": \"Ann\", \"age\": 3}\n");
    let tok = llama2.to_str().unwrap();
    let out = structgen(&["validate", "--tokenizer", tok, "--schema", &schema, &doc]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let regex = write(&d, "a.regex", "a");
    let a = write(&d, "a.txt", "a");
    let out = structgen(&["mask", "--tokenizer", tok, "--grammar", &regex, "--input", &a]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn referenced_documents_come_from_ref_dir_and_ref() {
    let d = dir("refs");
    let defs = d.join("defs");
    std::fs::create_dir_all(&defs).unwrap();
    // By relative path (also from one referenced document to another), and
    // by `$id`.
    write(&defs, "name.json", r#"{"definitions": {"name": {"type": "string", "maxLength": 4}}}"#);
    write(&d, "age.json", r#"{"$id": "https://example.com/age", "type": "integer", "minimum": 0}"#);
    let refs = dir("refs-schema");
    let schema = write(
        &refs,
        "s.json",
        r#"{"type": "object", "properties": {
            "name": {"$ref": "defs/name.json#/definitions/name"},
            "age": {"$ref": "https://example.com/age"}},
            "required": ["name", "age"], "additionalProperties": false}"#,
    );
    let good = write(&refs, "good.json", r#"{"name": "Ann", "age": 3}"#);
    let long = write(&refs, "long.json", r#"{"name": "Annabelle", "age": 3}"#);
    let dir_arg = d.to_str().unwrap();
    let out = structgen(&["validate", "--ref-dir", dir_arg, "--schema", &schema, &good]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = structgen(&["validate", "--ref-dir", dir_arg, "--schema", &schema, &long]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    // Rejected inside the name, whose schema came through the `$ref`.
    assert!(text(&out).0.contains("instance: /name"), "{:?}", text(&out));
    // Without the documents: an error naming the URI.
    let out = structgen(&["validate", "--schema", &schema, &good]);
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(text(&out).1.contains("defs/name.json"), "{:?}", text(&out));
    // `--ref FILE`: under its file name and its `$id`.
    let one = write(
        &refs,
        "one.json",
        r#"{"type": "object", "properties": {"age": {"$ref": "https://example.com/age"},
            "n": {"$ref": "name.json#/definitions/name"}}}"#,
    );
    let name_file = defs.join("name.json");
    let age_file = d.join("age.json");
    let doc = write(&refs, "doc.json", r#"{"age": 2, "n": "Bo"}"#);
    let out = structgen(&[
        "validate",
        "--ref",
        name_file.to_str().unwrap(),
        "--ref",
        age_file.to_str().unwrap(),
        "--schema",
        &one,
        &doc,
    ]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    // A referenced document that is not JSON is a clear error.
    write(&d, "broken.json", "{");
    let out = structgen(&["validate", "--ref-dir", dir_arg, "--schema", &schema, &good]);
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(text(&out).1.contains("broken.json"), "{:?}", text(&out));
}

/// `--explain-time` bounds the search for the keyword to blame; a bad
/// value is an argument error.
#[test]
fn explain_time_bounds_the_explanation() {
    let d = dir("explain-time");
    let schema = write(&d, "s.json", SCHEMA);
    let doc = write(&d, "d.json", "{\"name\": \"Ann\", \"age\": -3}");
    let out = structgen(&["validate", "--schema", &schema, "--explain-time", "0", &doc]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("not found in 0 tries (--explain-limit, --explain-time)"), "{stdout}");
    for bad in ["-1", "nan", "1e300", "soon"] {
        let flag = format!("--explain-time={bad}");
        let out = structgen(&["validate", "--schema", &schema, &flag, &doc]);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("--explain-time"), "{bad}: {stderr}");
    }
}
