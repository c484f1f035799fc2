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
