//! `structgen jsonschema-suite` and `structgen maskbench` on tiny inputs.

use crate::cli::structgen;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("structgen-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn jsonschema_suite_counts_groups_and_instances() {
    let dir = temp_dir("suite");
    let file = r##"[
      {"description": "ints", "schema": {"type": "integer", "maximum": 3},
       "tests": [{"description": "ok", "data": 2, "valid": true},
                 {"description": "big", "data": 4, "valid": false}]},
      {"description": "unsupported", "schema": {"$recursiveRef": "#"},
       "tests": [{"description": "x", "data": [], "valid": true}]},
      {"description": "unsatisfiable: rejects everything", "schema": {"not": {}},
       "tests": [{"description": "y", "data": 1, "valid": false}]}
    ]"##;
    std::fs::write(dir.join("t.json"), file).unwrap();
    let out = structgen(&["jsonschema-suite", "--json", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["groups"], 3);
    assert_eq!(last["compiled"], 1);
    assert_eq!(last["correct"], 3);
    assert_eq!(last["invalid_accepted"], 0);
    assert_eq!(last["status"]["unsupported_keyword"], 1);
    assert_eq!(last["status"]["unsatisfiable"], 1);
}

#[test]
fn maskbench_walks_instances_token_by_token() {
    let dir = temp_dir("maskbench");
    let line = r#"{"name": "a", "schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"], "additionalProperties": false}, "tests": [{"valid": true, "data": {"n": 12}}, {"valid": false, "data": {"n": 0}}, {"valid": false, "data": {"m": 1}}]}"#;
    let path = dir.join("mb.jsonl");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let out = structgen(&["maskbench", "--json", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    for key in ["schemas", "compiled", "valid", "valid_rejected", "invalid", "invalid_accepted"] {
        assert!(last.get(key).is_some(), "{key} missing: {last}");
    }
    assert_eq!((last["compiled"].as_u64(), last["valid_rejected"].as_u64()), (Some(1), Some(0)));
    assert_eq!((last["invalid"].as_u64(), last["invalid_accepted"].as_u64()), (Some(2), Some(0)));
    for key in ["mask_us", "ttfm_us"] {
        for s in ["mean", "p50", "p90", "p99", "max"] {
            assert!(last[key][s].is_number(), "{key}.{s}: {last}");
        }
    }
}

#[test]
fn maskbench_any_order_accepts_reordered_keys() {
    let dir = temp_dir("maskbench-order");
    let line = r#"{"name": "o", "schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}, "tests": [{"valid": true, "data": {"b": "x", "a": 1}}, {"valid": false, "data": {"b": "x"}}]}"#;
    let path = dir.join("mb.jsonl");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let summary = |extra: &[&str]| {
        let mut args = vec!["maskbench", "--json", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = structgen(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        (last["valid_rejected"].as_u64(), last["invalid_accepted"].as_u64())
    };
    // Schema order (the default) rejects the reordered instance.
    assert_eq!(summary(&[]), (Some(1), Some(0)));
    assert_eq!(summary(&["--any-order"]), (Some(0), Some(0)));
}

#[test]
fn maskbench_forced_reports_model_calls() {
    let dir = std::env::temp_dir().join(format!("structgen-forced-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = serde_json::json!({"name": "c", "schema": character(), "tests": [
        {"valid": true, "data": {"name": "Paul", "age": 20}},
        {"valid": false, "data": {"name": "Ringo", "age": 20}}]});
    let path = dir.join("mb.jsonl");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let out = structgen(&["maskbench", "--forced", "--json", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let tokens = last["tokens"].as_u64().unwrap();
    assert_eq!(last["model_calls_without_coalescing"], tokens);
    assert_eq!(last["non_canonical"], 0);
    // The default options allow whitespace around `{`, `:` and `,`: the
    // keys and closing quotes are still forced.
    let calls = last["model_calls"].as_u64().unwrap();
    assert!(calls < tokens, "{last}");
    assert_eq!(last["forced_tokens"].as_u64().unwrap() + calls, tokens);
}

fn character() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"enum": ["John", "Paul"]},
            "age": {"enum": [20, 30]}
        },
        "required": ["name", "age"],
        "additionalProperties": false
    })
}

/// `structgen maskbench` uses the slicer by default and `--no-slicer` turns
/// it off; the outcomes are the same.
#[test]
fn maskbench_with_and_without_the_slicer() {
    let dir = std::env::temp_dir().join(format!("structgen-slicer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = r#"{"name": "s", "schema": {"type": "object", "properties": {"name": {"type": "string"}}}, "tests": [{"valid": true, "data": {"name": "a fairly long string value", "extra": "x"}}, {"valid": false, "data": {"name": 3}}]}"#;
    let path = dir.join("mb.jsonl");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["maskbench", "--json", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = structgen(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        serde_json::from_str::<serde_json::Value>(text.lines().last().unwrap()).unwrap()
    };
    let (on, off) = (run(&[]), run(&["--no-slicer"]));
    for key in ["compiled", "valid_rejected", "invalid_accepted"] {
        assert_eq!(on[key], off[key], "{key}");
    }
    assert_eq!(on["valid_rejected"], 0);
    assert!(on["slicer"]["masks_sliced"].as_u64().unwrap() > 0, "{on}");
    assert!(off["slicer"].is_null());
}
