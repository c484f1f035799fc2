//! The KV-event stream against a subscriber written independently in
//! Python (`kv_subscriber.py`: pyzmq, msgpack, its own SipHash): over a
//! Mooncake trace with a capacity that forces evictions, in both layouts,
//! the subscriber's block index answers every prefix lookup after every
//! batch exactly like the cache (rounded down to whole blocks); a late
//! joiner replays from 0, follows live, detects a lost message and ends with
//! the same index.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kv_events::{Layout, Publisher, PublisherConfig, WireConfig, encode_batch};
use radix_cache::{CacheConfig, EventConfig, Namespace};
use serde_json::json;
use structgen_cli::cache_sim::{self as sim, SimConfig, TraceLimits};

/// Requests of the trace replayed (the subscriber hashes their prompts in
/// pure Python) and the cache capacity (a dozen prompts: evictions).
const REQUESTS: usize = 96;
const CAPACITY: usize = 100_000;
const BLOCK: usize = 32;

fn run(layout: Layout, key: [u64; 2], named: bool) {
    let Some(python) = testkit::python_or_skip("KV-event subscriber (pyzmq, msgpack)") else {
        return;
    };
    let Some(trace_path) =
        testkit::data_path_or_skip("KV-event subscriber", "traces/conversation_trace.jsonl.gz")
    else {
        return;
    };
    let trace = sim::parse_mooncake(&testkit::read(&trace_path), &TraceLimits::default()).unwrap();
    let mut workload = sim::mooncake_workload("head", &trace[..REQUESTS]);
    // With `named`, every third request lives in namespace 5 (a LoRA adapter).
    let namespaces: Vec<u64> =
        (0..REQUESTS).map(|i| if named && i % 3 == 1 { 5 } else { 0 }).collect();
    for (r, &ns) in workload.requests.iter_mut().zip(&namespaces) {
        r.namespace = Namespace(ns);
    }
    let prompts: Vec<Vec<u32>> = workload
        .requests
        .iter()
        .map(|r| {
            let mut p = Vec::new();
            r.prompt.expand_into(&mut p);
            p
        })
        .collect();
    let events = EventConfig::default().with_block_size(BLOCK).with_hash_key(Some(key));
    let config = SimConfig::default()
        .with_capacity(Some(CAPACITY))
        .with_cache(CacheConfig::default().with_page_size(16).with_events(Some(events)))
        .with_window(16)
        .with_batch(4)
        .with_cache_output(false)
        .with_timing(false)
        .with_audit(true);
    // Simulate first: each step with events becomes one batch, with the
    // cache's answer (in whole blocks) for every prompt after it.
    let mut wire = WireConfig::default().with_layout(layout);
    if named {
        wire = wire.with_lora_name(Namespace(5), "adapter-5");
    }
    let mut payloads = Vec::new();
    let mut expected = Vec::new();
    let report = sim::simulate_observed(&workload, &config, |step| {
        if !step.events.is_empty() {
            let mut payload = Vec::new();
            encode_batch(&wire, payloads.len() as f64, step.events, &mut payload);
            payloads.push(payload);
            let answers: Vec<usize> = prompts
                .iter()
                .zip(&namespaces)
                .map(|(p, &ns)| step.cache.prefix_len_in(Namespace(ns), p) / BLOCK)
                .collect();
            expected.push(answers);
        }
        Ok(())
    })
    .unwrap();
    assert!(report.evictions > 0, "the capacity must force evictions");
    assert!(payloads.len() >= 8, "{} batches", payloads.len());

    let publisher = PublisherConfig::new("tcp://127.0.0.1:0")
        .with_replay_endpoint(Some("tcp://127.0.0.1:0".into()))
        .with_topic("kv@pod-0@mooncake")
        .with_linger(Duration::from_secs(5));
    let mut publisher = Publisher::bind(publisher).unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let cfg_path = dir.join(format!("kv-subscriber-{layout:?}.json"));
    let cfg = json!({
        "endpoint": publisher.endpoint(),
        "replay_endpoint": publisher.replay_endpoint(),
        "topic": "kv@pod-0@mooncake",
        "layout": if layout == Layout::Map { "map" } else { "array" },
        "block_size": BLOCK,
        "hash_key": key,
        "trace": trace_path,
        "requests": REQUESTS,
        "namespaces": namespaces,
        "lora_names": if named { json!({"5": "adapter-5"}) } else { json!({}) },
        "batches": payloads.len(),
        "expected": expected,
    });
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/kv_subscriber.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(&cfg_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    let wait_for = |word: &str, child: &mut std::process::Child| match rx
        .recv_timeout(Duration::from_secs(60))
    {
        Ok(line) if line == word => {}
        other => {
            let _ = child.kill();
            let out = child.wait_with_output_lossy();
            panic!("expected `{word}` from the subscriber, got {other:?}\n{out}");
        }
    };
    wait_for("ready", &mut child);
    let half = payloads.len() / 2;
    let mut payloads = payloads.into_iter();
    for p in payloads.by_ref().take(half) {
        publisher.publish_encoded(p).unwrap();
    }
    wait_for("joined", &mut child);
    for p in payloads {
        publisher.publish_encoded(p).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the subscriber did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let summary: Vec<String> = rx.try_iter().collect();
    assert!(status.success(), "subscriber failed ({status}):\n{stderr}\n{summary:?}");
    let stats = publisher.close().unwrap();
    assert!(stats.replays >= 2, "{stats:?}");
    std::io::stderr().write_all(format!("{summary:?}\n").as_bytes()).unwrap();
}

/// Reads what a killed child left on its pipes, for the failure message.
trait WaitLossy {
    fn wait_with_output_lossy(&mut self) -> String;
}

impl WaitLossy for std::process::Child {
    fn wait_with_output_lossy(&mut self) -> String {
        let _ = self.wait();
        let mut err = String::new();
        if let Some(e) = self.stderr.as_mut() {
            let _ = std::io::Read::read_to_string(e, &mut err);
        }
        err
    }
}

#[test]
fn python_subscriber_follows_the_map_layout_with_namespaces_and_a_key() {
    run(Layout::Map, [7, 11], true);
}

#[test]
fn python_subscriber_follows_the_array_layout() {
    run(Layout::Array, [0, 0], false);
}
