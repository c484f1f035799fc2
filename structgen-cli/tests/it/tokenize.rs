//! `structgen tokenize | count | chunk` end to end.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::cli::structgen;

fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_structgen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn example() -> String {
    format!("{}/examples/pride-and-prejudice-ch1.txt", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn count_matches_the_library() {
    let out = structgen(&["count", "--tokenizer", "o200k", &example()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(example()).unwrap();
    let want = bpe::Tokenizer::o200k_base().count(&text);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want.to_string());
}

#[test]
fn tokenize_reads_stdin_byte_for_byte() {
    let out = with_stdin(&["tokenize", "--json"], b"Hello, world!");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[13225,11,2375,0]");
    let lines = with_stdin(&["tokenize", "--tokenizer", "cl100k"], b"Hello, world!\n");
    assert_eq!(String::from_utf8_lossy(&lines.stdout), "9906\n11\n1917\n4999\n");
    // Invalid UTF-8 is encoded as bytes, not rejected.
    let bytes = with_stdin(&["count"], b"\xff\xfeab");
    assert!(bytes.status.success());
}

#[test]
fn chunk_prints_json_lines_that_tile_the_input() {
    let out = structgen(&["chunk", "--max-tokens", "50", "--boundary", "newline", &example()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(example()).unwrap();
    let tok = bpe::Tokenizer::o200k_base();
    let mut end = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let (s, e, n) = (
            v["start_byte"].as_u64().unwrap() as usize,
            v["end_byte"].as_u64().unwrap() as usize,
            v["tokens"].as_u64().unwrap() as usize,
        );
        assert_eq!(s, end);
        assert!(n <= 50);
        assert_eq!(tok.count(&text[s..e]), n);
        end = e;
    }
    assert_eq!(end, text.len());
}

#[test]
fn bad_tokenizer_files_exit_2_with_the_reason() {
    let dir = std::env::temp_dir().join(format!("structgen-cli-tok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("broken.tokenizer.json");
    std::fs::write(&bad, r#"{"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}}"#).unwrap();
    let out = structgen(&["count", "--tokenizer", bad.to_str().unwrap(), &example()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("merge #0") && err.contains("\"b\""), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
