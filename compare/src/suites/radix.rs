//! `cargo xtask bench radix`: the radix prefix cache side by side with a
//! vLLM-style hash-of-blocks prefix cache (written here as the reference).
//!
//! Measures, in one process: eviction cost per evicted leaf at 10k and 1M
//! leaves (the bar: at most 2x); match and insert throughput with p99 on the
//! generated shared-prefix workload and the Mooncake conversation trace;
//! hit rates of both caches at equal capacity on the same request order
//! (the bar: ours at least the reference's); memory per cached token; the
//! scheduler's cost per scheduled request at growing queue lengths; and the
//! KV-event publisher (`structgen-kv-events`) on the Mooncake conversation
//! trace: events per second encoded and published, bytes per stored block,
//! and publishing time as a share of the cache's insert time (the bar: at
//! most 20%).

use std::time::Instant;

use anyhow::{Result, ensure};
use kv_events::{Layout, Publisher, PublisherConfig, WireConfig, decode_batch, encode_batch};
use radix_cache::sched::{InBatchSharing, SchedulePolicy, SchedulerConfig, Waiting, schedule};
use radix_cache::{CacheConfig, CacheEvent, EventConfig, EvictionPolicy, Namespace, RadixCache};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use serde_json::{Value, json};
use structgen_cli::cache_sim::{
    self as sim, SimConfig, SimReport, TraceLimits, Workload, WorkloadLimits,
};

#[path = "radix/reference.rs"]
mod reference;

use compare::report::Report;
use reference::{BlockCache, RefReport};

/// `ARGS`: `evict` runs only the eviction rows, `publish` only the
/// KV-event rows (quick loops while tuning; the written report then holds
/// only those rows).
pub(crate) fn run(args: &[String]) -> Result<()> {
    let mut report =
        Report::new("radix", &["measure", "setting", "ours", "reference", "ratio", "unit"]);
    if args.iter().any(|a| a == "publish") {
        let bytes = compare::shared::read("traces/conversation_trace.jsonl.gz")?;
        let trace = sim::parse_mooncake(&bytes, &TraceLimits::default())?;
        let w = sim::mooncake_workload("mooncake conversation", &trace);
        for (layout, off_thread) in
            [(Layout::Map, false), (Layout::Map, true), (Layout::Array, false)]
        {
            publish_rows(&mut report, "mooncake conversation", &w, layout, off_thread)?;
        }
        report.note(format!("machine: {}", compare::report::machine()));
        report.finish()?;
        return Ok(());
    }
    eviction(&mut report)?;
    if args.iter().any(|a| a == "evict") {
        report.finish()?;
        return Ok(());
    }
    let limits = WorkloadLimits::default();
    let shared = sim::workload::shared_prefix(&sim::SharedPrefix::default(), &limits)?;
    workload_rows(&mut report, "shared-prefix 64x16", &shared, &[32_768, 131_072, 524_288])?;
    match compare::shared::read("traces/conversation_trace.jsonl.gz") {
        Ok(bytes) => {
            let trace = sim::parse_mooncake(&bytes, &TraceLimits::default())?;
            let w = sim::mooncake_workload("mooncake conversation", &trace);
            workload_rows(&mut report, "mooncake conversation", &w, &[1 << 20, 1 << 22, 1 << 24])?;
            for (layout, off_thread) in
                [(Layout::Map, false), (Layout::Map, true), (Layout::Array, false)]
            {
                publish_rows(&mut report, "mooncake conversation", &w, layout, off_thread)?;
            }
        }
        Err(e) => report.note(format!("SKIPPED Mooncake rows: {e}")),
    }
    // Lengths that are not multiples of 16: the block cache loses the tails.
    let odd = sim::workload::shared_prefix(
        &sim::SharedPrefix { system_len: 2000, question_len: 100, ..sim::SharedPrefix::default() },
        &limits,
    )?;
    workload_rows(&mut report, "shared-prefix 64x16, 2000+100", &odd, &[32_768, 131_072])?;
    let chat = sim::workload::chat(&sim::Chat::default(), &limits)?;
    workload_rows(&mut report, "chat 64x8 (prompts only)", &chat, &[65_536, 262_144])?;
    scheduler_rows(&mut report, &shared);
    report.note(format!("machine: {}", compare::report::machine()));
    report.note(
        "reference: vLLM-style prefix cache, 16-token blocks, chained FxHash block hashes, \
         LRU free-block queue (tail blocks freed first); both caches run the same order \
         (one request at a time, FCFS), prompts only, no n-1 cap.",
    );
    report.finish()?;
    Ok(())
}

fn row(
    report: &mut Report,
    measure: &str,
    setting: &str,
    ours: f64,
    reference: Option<f64>,
    unit: &str,
) {
    let ratio = reference.filter(|r| *r != 0.0).map_or(Value::Null, |r| json!(ours / r));
    let reference = reference.map_or(json!("-"), |r| json!(r));
    report.row(vec![json!(measure), json!(setting), json!(ours), reference, ratio, json!(unit)]);
}

/// A cache with `leaves` leaves of 4 tokens under groups of 1000 sharing an
/// 8-token prefix. With `shuffle`, every leaf is then touched in a random
/// order, so the eviction order is unrelated to the memory layout.
fn build(policy: EvictionPolicy, leaves: usize, shuffle: bool) -> Result<RadixCache<u32>> {
    let mut cache = RadixCache::with_config(CacheConfig::default().with_policy(policy))?;
    let mut seqs = Vec::with_capacity(leaves);
    for i in 0..leaves as u32 {
        let g = i / 1000;
        let mut s = [0u32; 12];
        for (k, t) in s.iter_mut().enumerate() {
            *t = if k < 8 { g * 8 + k as u32 } else { i * 4 + k as u32 };
        }
        cache.insert(&s, &s)?;
        seqs.push(s);
    }
    if shuffle {
        let mut rng = SmallRng::seed_from_u64(7);
        seqs.shuffle(&mut rng);
        for s in &seqs {
            let m = cache.match_prefix(s);
            cache.touch(&m.handle)?;
        }
    }
    Ok(cache)
}

/// Nanoseconds per evicted leaf, evicting at least `count` leaves, 64
/// tokens (about 16 leaves) per call, in five rounds: the fastest round
/// counts (the machine is shared; the minimum is the least disturbed).
/// Returns the cost and the tokens freed.
fn evict_cost(cache: &mut RadixCache<u32>, count: usize) -> Result<(f64, usize)> {
    let mut out = Vec::with_capacity(128);
    let mut tokens = 0;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let mut leaves = 0;
        let start = Instant::now();
        while leaves < count / 5 {
            out.clear();
            let done = cache.evict_into(64, &mut out);
            ensure!(done.tokens == 64 && out.len() == 64, "evicted {done:?}");
            // A trimmed leaf is one victim too (its end went, its head stays).
            leaves += done.leaves + done.trimmed;
            tokens += done.tokens;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / leaves as f64);
    }
    Ok((best, tokens))
}

fn eviction(report: &mut Report) -> Result<()> {
    const COUNT: usize = 5_000;
    let policies =
        [EvictionPolicy::Lru, EvictionPolicy::Lfu, EvictionPolicy::Fifo, EvictionPolicy::Priority];
    for (policy, shuffle) in policies.iter().flat_map(|&p| [(p, false), (p, true)]) {
        let order = if shuffle { "shuffled" } else { "insertion order" };
        let mut costs = Vec::new();
        for leaves in [10_000usize, 1_000_000] {
            let mut cache = build(policy, leaves, shuffle)?;
            let total = cache.total_tokens();
            ensure!(total == leaves * 4 + leaves.div_ceil(1000) * 8, "built {total} tokens");
            let (ns, freed) = evict_cost(&mut cache, COUNT)?;
            ensure!(cache.total_tokens() == total - freed);
            cache.validate().map_err(anyhow::Error::msg)?;
            costs.push(ns);
            row(
                report,
                "evict ns/leaf",
                &format!("{policy:?}, {order}, {leaves} leaves"),
                ns,
                None,
                "ns",
            );
        }
        let ratio = costs[1] / costs[0];
        row(report, "evict 1M/10k", &format!("{policy:?}, {order} (bar <= 2)"), ratio, None, "x");
        if ratio > 2.0 {
            report.note(format!(
                "{policy:?}, {order}: eviction at 1M leaves costs {ratio:.2}x the cost at 10k"
            ));
        }
    }
    report.note(
        "eviction: 5000 leaves evicted 64 tokens per call (5 rounds, fastest kept) from trees \
         of 10k and 1M leaves; \
         'shuffled' touches every leaf in random order first, so each victim is a cache \
         miss at 1M leaves (hundreds of MB) and a cache hit at 10k: that gap is DRAM \
         latency, not work per leaf (see the random node read rows: the same gap for one \
         load; and the heap rebuilt per call below).",
    );
    // The memory hierarchy alone: one dependent random read of a node-sized
    // record, in arrays as large as the two trees' arenas.
    let mut hops = Vec::new();
    for leaves in [10_000usize, 1_000_000] {
        let ns = random_hop_ns(leaves);
        hops.push(ns);
        row(
            report,
            "random node read (memory latency)",
            &format!("{leaves} records"),
            ns,
            None,
            "ns",
        );
    }
    row(report, "random node read 1M/10k", "hardware reference", hops[1] / hops[0], None, "x");
    // What a heap rebuilt per call costs at these sizes (the reported bug).
    for leaves in [10_000usize, 1_000_000] {
        let keys: Vec<(u64, u32)> =
            (0..leaves as u32).map(|i| (u64::from(i.wrapping_mul(2654435761)), i)).collect();
        let start = Instant::now();
        let heap = std::collections::BinaryHeap::from(keys);
        let ns = start.elapsed().as_nanos() as f64;
        ensure!(heap.len() == leaves);
        row(
            report,
            "heap rebuild per evict call",
            &format!("{leaves} leaves"),
            ns / 1e3,
            None,
            "µs",
        );
    }
    Ok(())
}

/// Nanoseconds per hop of a pointer chase through `n` records of 192
/// bytes (about one arena node) linked in a random cycle: every hop is a
/// dependent load at a random place, like the next victim in LRU order.
fn random_hop_ns(n: usize) -> f64 {
    #[derive(Clone, Copy)]
    struct Record {
        next: u32,
        _pad: [u32; 47],
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.shuffle(&mut SmallRng::seed_from_u64(11));
    let mut records = vec![Record { next: 0, _pad: [0; 47] }; n];
    for w in 0..n {
        records[order[w] as usize].next = order[(w + 1) % n];
    }
    const HOPS: usize = 2_000_000;
    let mut best = f64::INFINITY;
    let mut at = order[0];
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..HOPS {
            at = records[at as usize].next;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / HOPS as f64);
    }
    std::hint::black_box(at);
    best
}

fn fcfs_one_at_a_time(capacity: Option<usize>, timing: bool) -> SimConfig {
    SimConfig::default()
        .with_capacity(capacity)
        .with_scheduler(SchedulerConfig::default().with_policy(SchedulePolicy::Fcfs))
        .with_window(1)
        .with_batch(1)
        .with_cache_output(false)
        .with_leave_last_token(false)
        .with_timing(timing)
        .with_audit(false)
        .with_compute_bound(false)
}

fn workload_rows(
    report: &mut Report,
    name: &str,
    w: &Workload,
    capacities: &[usize],
) -> Result<()> {
    // Unlimited: exactly the bound, and the throughput of every operation.
    let ours = sim::simulate(w, &fcfs_one_at_a_time(None, true))?;
    let bound = sim::bound(w, &fcfs_one_at_a_time(None, false))?;
    ensure!((ours.hit_rate - bound).abs() < 1e-12, "{name}: {} != bound {bound}", ours.hit_rate);
    let reference = BlockCache::run(w, None, 16);
    ensure!(
        ours.hit_rate >= reference.hit_rate,
        "{name}: reference hits more at unlimited capacity"
    );
    throughput_rows(report, name, &ours, &reference);
    row(
        report,
        "hit rate",
        &format!("{name}, unlimited"),
        ours.hit_rate,
        Some(reference.hit_rate),
        "",
    );
    for &cap in capacities {
        let ours = sim::simulate(w, &fcfs_one_at_a_time(Some(cap), false))?;
        let reference = BlockCache::run(w, Some(cap), 16);
        ensure!(
            ours.hit_rate >= reference.hit_rate,
            "{name} at {cap} tokens: ours {} < reference {}",
            ours.hit_rate,
            reference.hit_rate
        );
        row(
            report,
            "hit rate",
            &format!("{name}, {cap} tokens"),
            ours.hit_rate,
            Some(reference.hit_rate),
            "",
        );
        row(
            report,
            "evicted tokens",
            &format!("{name}, {cap} tokens"),
            ours.evicted_tokens as f64,
            Some(reference.evicted_tokens as f64),
            "tokens",
        );
    }
    Ok(())
}

fn throughput_rows(report: &mut Report, name: &str, ours: &SimReport, reference: &RefReport) {
    let tokens = ours.prompt_tokens as f64;
    let m = &ours.match_;
    let i = &ours.insert;
    row(
        report,
        "match ops/s",
        name,
        m.ops_per_sec(),
        Some(reference.lookup_ops_per_sec()),
        "ops/s",
    );
    row(
        report,
        "match Mtokens/s",
        name,
        tokens * 1e3 / m.total_ns as f64,
        Some(tokens * 1e3 / reference.lookup_ns as f64),
        "Mtok/s",
    );
    row(
        report,
        "match p50",
        name,
        m.p50_ns as f64 / 1e3,
        Some(reference.lookup_p50_ns as f64 / 1e3),
        "µs",
    );
    row(
        report,
        "match p99",
        name,
        m.p99_ns as f64 / 1e3,
        Some(reference.lookup_p99_ns as f64 / 1e3),
        "µs",
    );
    row(
        report,
        "insert ops/s",
        name,
        i.ops_per_sec(),
        Some(reference.insert_ops_per_sec()),
        "ops/s",
    );
    row(
        report,
        "insert Mtokens/s",
        name,
        tokens * 1e3 / i.total_ns as f64,
        Some(tokens * 1e3 / reference.insert_ns as f64),
        "Mtok/s",
    );
    row(
        report,
        "insert p50",
        name,
        i.p50_ns as f64 / 1e3,
        Some(reference.insert_p50_ns as f64 / 1e3),
        "µs",
    );
    row(
        report,
        "insert p99",
        name,
        i.p99_ns as f64 / 1e3,
        Some(reference.insert_p99_ns as f64 / 1e3),
        "µs",
    );
    row(
        report,
        "lock+unlock p99",
        name,
        (ours.lock.p99_ns + ours.unlock.p99_ns) as f64 / 1e3,
        None,
        "µs",
    );
    let per_token = ours.memory_bytes as f64 / ours.peak_tokens.max(1) as f64;
    row(report, "memory/cached token", name, per_token, Some(reference.bytes_per_token), "bytes");
}

/// The KV-event publisher on `w`, one request at a time (FCFS), with a
/// capacity that forces evictions (removal events too): every step's events
/// are encoded and handed to a ZeroMQ publisher (PUB on loopback, replay
/// service on), timed on the engine's thread, against the same run's insert
/// time (events on, so the insert time includes hashing the blocks) and
/// against a run without events (what hashing costs). With `off_thread`,
/// the events go to the publisher's I/O thread, which encodes them
/// (`publish_events`, what `cache-sim --publish` does); otherwise the engine
/// thread encodes (`encode_batch` + `publish_encoded`).
fn publish_rows(
    report: &mut Report,
    name: &str,
    w: &Workload,
    layout: Layout,
    off_thread: bool,
) -> Result<()> {
    const BLOCK: usize = 16;
    let capacity = Some(1 << 22);
    let plain = sim::simulate(w, &fcfs_one_at_a_time(capacity, true))?;
    let events = EventConfig::default().with_block_size(BLOCK);
    let base = fcfs_one_at_a_time(capacity, true);
    let config = base.clone().with_cache(base.cache.clone().with_events(Some(events)));
    let wire = WireConfig::default().with_layout(layout);
    let publisher = PublisherConfig::new("tcp://127.0.0.1:0")
        .with_replay_endpoint(Some("tcp://127.0.0.1:0".into()))
        .with_topic("kv@bench@mooncake")
        // Off the engine thread, a queue that holds the whole run: the
        // engine thread's cost is then the hand-off alone, not waiting for
        // an I/O thread that a loaded machine starves.
        .with_queue(if off_thread { 1 << 14 } else { 1024 })
        .with_wire(wire.clone());
    let mut publisher = Publisher::bind(publisher)?;
    let (mut encode_ns, mut publish_ns, mut batches, mut bytes) = (0u128, 0u128, 0u64, 0u64);
    let (mut n_events, mut stored_blocks, mut removed_blocks) = (0u64, 0u64, 0u64);
    let mut checked = 0;
    let with_events = sim::simulate_observed(w, &config, |step| {
        if step.events.is_empty() {
            return Ok(());
        }
        if off_thread {
            // The copy of the step's events is the engine thread's too.
            let start = Instant::now();
            let events = step.events.to_vec();
            publisher.publish_events(batches as f64, events)?;
            publish_ns += start.elapsed().as_nanos();
        }
        // Encoded here in both modes: timed (and published) only when the
        // engine thread encodes; off the thread it gives the byte counts.
        let start = Instant::now();
        let mut payload = Vec::new();
        encode_batch(&wire, batches as f64, step.events, &mut payload);
        encode_ns += start.elapsed().as_nanos();
        let len = payload.len() as u64;
        // Every 64th payload is decoded back (outside the timed part).
        let copy = (batches % 64 == 0).then(|| payload.clone());
        if !off_thread {
            publisher.publish_encoded(payload)?;
            publish_ns += start.elapsed().as_nanos();
        }
        if let Some(copy) = copy {
            let batch = decode_batch(&copy)?;
            if batch.events != step.events || batch.layout != Some(layout) {
                return Err("a published batch does not decode to its events".into());
            }
            checked += 1;
        }
        batches += 1;
        bytes += len;
        n_events += step.events.len() as u64;
        for e in step.events {
            match e {
                CacheEvent::BlockStored { block_hashes, .. } => {
                    stored_blocks += block_hashes.len() as u64
                }
                CacheEvent::BlockRemoved { block_hashes } => {
                    removed_blocks += block_hashes.len() as u64
                }
                _ => {}
            }
        }
        Ok(())
    })?;
    let stats = publisher.close()?;
    ensure!(stats.batches == batches && stats.bytes == bytes, "{stats:?}");
    ensure!(checked > 0 && removed_blocks > 0, "no evictions: the capacity is too large");
    ensure!(with_events.hit_tokens == plain.hit_tokens, "events changed the simulation");
    let insert_ns = with_events.insert.total_ns as f64;
    let share = publish_ns as f64 / insert_ns;
    let mode =
        if off_thread { "encoded on the I/O thread" } else { "encoded on the engine thread" };
    let setting = format!("{name}, {layout:?} layout, {BLOCK}-token blocks, {mode}");
    let secs = encode_ns as f64 / 1e9;
    row(report, "kv events encoded/s", &setting, n_events as f64 / secs, None, "events/s");
    let blocks = (stored_blocks + removed_blocks) as f64;
    row(report, "kv blocks encoded/s", &setting, blocks / secs, None, "blocks/s");
    row(
        report,
        "kv bytes/stored block",
        &setting,
        bytes as f64 / stored_blocks as f64,
        None,
        "bytes",
    );
    let encode_share = encode_ns as f64 / insert_ns;
    row(report, "kv encode / insert time", &setting, encode_share, None, "x");
    let what = if off_thread { "hand-off" } else { "encode + hand-off" };
    row(
        report,
        "kv publish (engine thread) / insert time",
        &format!("{setting}, {what} (bar <= 0.2)"),
        share,
        None,
        "x",
    );
    row(
        report,
        "insert time, events on / off",
        &setting,
        insert_ns / plain.insert.total_ns as f64,
        None,
        "x",
    );
    if share > 0.2 {
        report.note(format!("{setting}: publishing costs {share:.3} of insert time (bar 0.2)"));
    }
    report.note(format!(
        "kv events ({layout:?}): {batches} batches, {n_events} events, {stored_blocks} blocks \
         stored, {removed_blocks} removed, {bytes} bytes; publish time = encoding plus the \
         hand-off to the publisher's I/O thread (which waits while its queue of 1024 batches \
         is full), on the engine thread; insert time with events on (it hashes the blocks)"
    ));
    Ok(())
}

fn scheduler_rows(report: &mut Report, w: &Workload) {
    // A warm cache holding half the groups, then queues of growing length.
    let mut cache: RadixCache<()> = RadixCache::new();
    let mut prompts = Vec::new();
    for r in &w.requests {
        let mut p = Vec::new();
        r.prompt.expand_into(&mut p);
        prompts.push(p);
    }
    for p in prompts.iter().step_by(2) {
        let _ = cache.insert(p, &vec![(); p.len()]);
    }
    for n in [100usize, 1000, 10_000] {
        let queue: Vec<Waiting<'_>> = (0..n)
            .map(|i| Waiting {
                namespace: Namespace::NONE,
                tokens: &prompts[i % prompts.len()],
                reserve: 0,
            })
            .collect();
        for (label, policy, sharing) in [
            ("fcfs", SchedulePolicy::Fcfs, None),
            ("lpm", SchedulePolicy::LongestPrefixMatch, None),
            ("dfs-weight", SchedulePolicy::DfsWeight, None),
            ("lpm+in-batch", SchedulePolicy::LongestPrefixMatch, Some(InBatchSharing::default())),
        ] {
            let config =
                SchedulerConfig::default().with_policy(policy).with_in_batch_sharing(sharing);
            let start = Instant::now();
            let s = schedule(&cache, &queue, &config);
            let ns = start.elapsed().as_nanos() as f64;
            assert_eq!(s.order.len(), n);
            assert!(!s.fell_back_to_fcfs);
            row(
                report,
                "schedule µs/request",
                &format!("{label}, queue {n}"),
                ns / 1e3 / n as f64,
                None,
                "µs",
            );
        }
    }
}
