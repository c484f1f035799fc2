//! `structgen cache-sim` as a user meets it: the CLI's names in its output,
//! hostile parameters and traces refused before allocating (each run under
//! a 20 s bound), and `--publish` streaming a simulation.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `structgen ARGS` with a 20 s bound; returns (exit code, stdout,
/// stderr).
fn structgen(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_structgen"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("structgen {args:?} ran over 20 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

const SMALL: &[&str] = &[
    "cache-sim",
    "--groups",
    "3",
    "--prompts-per-group",
    "4",
    "--system-len",
    "64",
    "--question-len",
    "8",
    "--output-len",
    "8",
];

#[test]
fn output_uses_the_cli_names() {
    let mut args = SMALL.to_vec();
    args.extend(["--scheduler", "dfs-weight", "--policy", "lfu", "--json"]);
    let (code, out, err) = structgen(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["policy"].as_str(), v["scheduler"].as_str()), (Some("lfu"), Some("dfs-weight")));
    let (code, out, _) = structgen(SMALL);
    assert_eq!(code, 0);
    assert!(out.contains("policy       lru, scheduler lpm"), "{out}");
}

/// Asserts `structgen ARGS` fails with status 2 and a message holding every
/// one of `needles`.
fn refused(args: &[&str], needles: &[&str]) {
    let (code, out, err) = structgen(args);
    assert_eq!(code, 2, "{args:?}: status {code}\n{out}\n{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in: {err}");
    }
}

#[test]
fn huge_generator_parameters_are_errors_naming_the_limit() {
    refused(
        &["cache-sim", "--system-len", "1000000000000"],
        &["shared-prefix", "max_total_tokens = 268435456"],
    );
    refused(&["cache-sim", "--groups", "1000000000"], &["max_requests = 4194304"]);
    refused(
        &["cache-sim", "--groups", "1000000000", "--prompts-per-group", "0"],
        &["max_requests = 4194304"],
    );
    refused(
        &["cache-sim", "--workload", "chat", "--conversations", "100000000"],
        &["chat", "max_requests = 4194304"],
    );
    // The limits are the user's to set.
    refused(
        &["cache-sim", "--groups", "64", "--max-total-tokens", "1000"],
        &["max_total_tokens = 1000"],
    );
}

#[test]
fn zipf_exponents_that_are_not_finite_and_non_negative_are_refused() {
    for z in ["NaN", "nan", "inf", "-inf", "-1", "x"] {
        let zipf = format!("--zipf={z}");
        let (code, _, err) = structgen(&["cache-sim", &zipf]);
        assert_eq!(code, 2, "{z}: {err}");
        assert!(err.contains("--zipf"), "{z}: {err}");
    }
    let mut args = SMALL.to_vec();
    args.push("--zipf=1.2");
    assert_eq!(structgen(&args).0, 0);
}

fn write_trace(name: &str, text: &[u8]) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::File::create(&path).unwrap().write_all(text).unwrap();
    path
}

/// 300 requests of 2M tokens each (a few MB of JSON): 600M tokens would
/// take gigabytes to simulate; the reader stops at the line that passes the
/// total-token limit.
#[test]
fn a_trace_past_the_total_token_limit_is_an_error_with_its_line() {
    let ids: Vec<String> = (0..3907).map(|i| i.to_string()).collect();
    let line = format!(
        "{{\"timestamp\": 1, \"input_length\": 2000000, \"output_length\": 1, \"hash_ids\": [{}]}}\n",
        ids.join(",")
    );
    let path = write_trace("huge-trace.jsonl", line.repeat(300).as_bytes());
    let p = path.to_str().unwrap();
    refused(&["cache-sim", "--trace", p], &["line 135", "max_total_tokens = 268435456"]);
    refused(
        &["cache-sim", "--trace", p, "--max-total-tokens", "5000000"],
        &["line 3", "max_total_tokens = 5000000"],
    );
}

#[test]
fn malformed_trace_lines_are_errors_with_their_line_number() {
    let good =
        "{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1]}\n";
    for (bad, needle) in [
        ("{\"timestamp\": 1,", "line 3"),
        ("[1, 2]", "line 3"),
        (
            "{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1]}",
            "expected 2",
        ),
        (
            "{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}",
            "line 3",
        ),
        (
            "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [99999999]}",
            "too large",
        ),
    ] {
        let path = write_trace("bad-trace.jsonl", format!("{good}{good}{bad}\n").as_bytes());
        refused(&["cache-sim", "--trace", path.to_str().unwrap()], &["line 3", needle]);
    }
}

/// `--publish` binds, streams every step's events and exits once they are
/// flushed; a SUB connected during the delay receives vLLM's three frames.
#[test]
fn publish_streams_a_simulation() {
    let mut args = SMALL.to_vec();
    args.extend([
        "--publish",
        "tcp://127.0.0.1:0",
        "--publish-delay-ms",
        "0",
        "--topic",
        "kv@sim@test",
        "--event-layout",
        "array",
    ]);
    let (code, _, err) = structgen(&args);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("publishing KV events on tcp://127.0.0.1:"), "{err}");
    assert!(err.contains("replay on tcp://127.0.0.1:"), "{err}");
    assert!(err.contains("published"), "{err}");
    // A taken endpoint is a clear error.
    let blocker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = format!("tcp://{}", blocker.local_addr().unwrap());
    let mut args = SMALL.to_vec();
    args.extend(["--publish", &taken, "--publish-delay-ms", "0"]);
    refused(&args, &["cannot publish", &taken]);
}
