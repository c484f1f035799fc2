//! The command line as a user meets it: help, usage errors, exit codes.

use std::process::{Command, Output};

/// Runs the `structgen` binary built for this test run.
pub(crate) fn structgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_structgen")).args(args).output().expect("binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_lists_every_subcommand() {
    let out = structgen(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in
        ["tokenize", "count", "chunk", "mask", "maskbench", "jsonschema-suite", "cache-sim", "demo"]
    {
        assert!(text.contains(sub), "`{sub}` missing from --help:\n{text}");
    }
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let out = structgen(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unrecognized subcommand 'frobnicate'"), "{}", stderr(&out));
}

#[test]
fn malformed_arguments_are_usage_errors() {
    let out = structgen(&["chunk", "--max-tokens", "zero"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--max-tokens"), "{}", stderr(&out));

    let out = structgen(&["chunk", "--max-tokens", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    let out = structgen(&["count", "--tokenizer", "gpt-17"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown tokenizer `gpt-17`"), "{}", stderr(&out));
}

#[test]
fn missing_files_are_clear_errors_not_panics() {
    for args in [
        &["count", "/nonexistent/input.txt"][..],
        &["count", "--tokenizer", "/nonexistent/tokenizer.json", "README.md"][..],
    ] {
        let out = structgen(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A panic a library catches and handles (derivre's known `or_optimized`
/// panic, which the lexer retries) is not reported: the answer is right
/// and stderr stays empty (it said "internal error" beside "valid").
#[test]
fn panics_the_libraries_handle_are_not_reported() {
    let dir = std::env::temp_dir().join(format!("structgen-handled-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schema = dir.join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"newLine": {"type": "string",
            "anyOf": [{"enum": ["crlf", "lf"]}, {"pattern": "^(CRLF|LF|crlf|lf)$"}]}}}"#,
    )
    .unwrap();
    let (good, bad) = (dir.join("good.json"), dir.join("bad.json"));
    std::fs::write(&good, r#"{"newLine":"LF"}"#).unwrap();
    std::fs::write(&bad, r#"{"newLine":"lF"}"#).unwrap();
    let schema = schema.to_str().unwrap();
    let out = structgen(&["validate", "--schema", schema, good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let out = structgen(&["validate", "--schema", schema, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!stderr(&out).contains("internal error"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}
