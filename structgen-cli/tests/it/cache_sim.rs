//! `structgen cache-sim` end to end: the JSON summary and trace errors.

use std::process::{Command, Output};

fn cache_sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_structgen"))
        .arg("cache-sim")
        .args(args)
        .output()
        .expect("binary runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

const SMALL: &[&str] = &[
    "--json",
    "--groups",
    "4",
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
fn json_summary_has_hit_rate_bound_and_evictions() {
    let v = json(&cache_sim(SMALL));
    let (hit, bound) = (v["hit_rate"].as_f64().unwrap(), v["bound"].as_f64().unwrap());
    assert!(hit > 0.0 && hit <= bound + 1e-12, "{v}");
    assert_eq!(v["evictions"], 0);
    assert_eq!(v["requests"], 16);
    assert_eq!(v["ops"]["match"]["count"], 16);
    // A small capacity evicts; every workload shape runs.
    let mut args = SMALL.to_vec();
    args.extend(["--capacity", "150", "--policy", "lfu", "--scheduler", "dfs-weight"]);
    let v = json(&cache_sim(&args));
    assert!(v["evictions"].as_u64().unwrap() > 0, "{v}");
    for w in ["chat", "few-shot", "tree-of-thought"] {
        let v =
            json(&cache_sim(&["--json", "--workload", w, "--conversations", "4", "--turns", "3"]));
        assert!(v["hit_rate"].as_f64().unwrap() > 0.0, "{w}: {v}");
    }
}

#[test]
fn traces_are_read_and_malformed_lines_are_reported() {
    let dir = std::env::temp_dir().join(format!("structgen-cache-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.jsonl");
    std::fs::write(
        &good,
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2]}\n\
         {\"timestamp\": 9, \"input_length\": 700, \"output_length\": 5, \"hash_ids\": [1, 3]}\n",
    )
    .unwrap();
    let v = json(&cache_sim(&[
        "--json",
        "--trace",
        good.to_str().unwrap(),
        "--scheduler",
        "fcfs",
        "--window",
        "1",
    ]));
    assert_eq!(v["hit_tokens"], 512);
    assert_eq!(v["bound"].as_f64().unwrap(), 512.0 / 1300.0);
    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2]}\n\
         {\"timestamp\": 9, \"input_length\": 700, \"hash_ids\": [1, 3]}\n",
    )
    .unwrap();
    let out = cache_sim(&["--trace", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2") && err.contains("output_length"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
