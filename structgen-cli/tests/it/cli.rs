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
