//! The Mooncake conversation trace (shared data) at unlimited capacity.

use radix_cache::sched::{SchedulePolicy, SchedulerConfig};
use radix_cache::{Namespace, RadixCache};
use structgen_cli::cache_sim::{self as sim, SimConfig, TraceLimits};

pub(crate) fn read_trace(name: &str) -> Option<Vec<u8>> {
    let dir = testkit::data_dir_or_skip(&format!("Mooncake {name}"))?;
    // The corpus is there: a missing or broken trace fails, never skips.
    Some(structgen_cli::io::read_maybe_gz(&dir.join("traces").join(name)).unwrap())
}

/// Each prompt is matched, then inserted, in timestamp order: the hits are
/// exactly the prompt tokens in leading blocks seen before (no n-1 cap).
#[test]
fn conversation_trace_reaches_the_block_bound() {
    let Some(bytes) = read_trace("conversation_trace.jsonl.gz") else { return };
    let trace = sim::parse_mooncake(&bytes, &TraceLimits::default()).unwrap();
    assert_eq!(trace.len(), 12031);
    let (bound_hits, total) = sim::block_bound(&trace);
    let workload = sim::mooncake_workload("conversation", &trace);
    let mut cache: RadixCache<()> = RadixCache::new();
    let (mut hits, mut tokens) = (0u64, Vec::new());
    for r in &workload.requests {
        tokens.clear();
        r.prompt.expand_into(&mut tokens);
        hits += cache.prefix_len_in(Namespace::NONE, &tokens) as u64;
        cache.insert(&tokens, &vec![(); tokens.len()]).unwrap();
    }
    assert_eq!(hits, bound_hits);
    let rate = hits as f64 / total as f64;
    assert!(rate > 0.3 && rate < 0.9, "{rate}");
    // The simulator agrees on a prefix of the trace, audited.
    let head = sim::mooncake_workload("head", &trace[..800]);
    let config = SimConfig::default()
        .with_window(1)
        .with_batch(1)
        .with_cache_output(false)
        .with_timing(false)
        .with_audit(true)
        .with_scheduler(SchedulerConfig::default().with_policy(SchedulePolicy::Fcfs));
    let r = sim::simulate(&head, &config).unwrap();
    assert_eq!(r.hit_tokens, sim::block_bound(&trace[..800]).0);
    assert_eq!(r.hit_rate, r.bound);
}

#[test]
fn synthetic_trace_parses_and_is_consistent() {
    let Some(bytes) = read_trace("synthetic_trace.jsonl.gz") else { return };
    let trace = sim::parse_mooncake(&bytes, &TraceLimits::default()).unwrap();
    assert_eq!(trace.len(), 3993);
    assert!(trace.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
    let head = sim::mooncake_workload("head", &trace[..300]);
    let config = SimConfig::default()
        .with_capacity(Some(200_000))
        .with_cache_output(false)
        .with_timing(false)
        .with_audit(true);
    let r = sim::simulate(&head, &config).unwrap();
    // Prompts only: every distinct token misses at least once, in any order.
    assert!(r.hit_rate > 0.0 && r.hit_rate <= r.bound + 1e-12, "{} > {}", r.hit_rate, r.bound);
    assert!(r.peak_tokens <= 200_000);
}
