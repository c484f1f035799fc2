//! The simulator: the scheduling theorem, workloads, capacity and audits.

use std::collections::HashSet;

use proptest::prelude::*;
use radix_cache::sched::{SchedulePolicy, SchedulerConfig};
use radix_cache::{CacheConfig, EvictionPolicy, Namespace};
use structgen_cli::cache_sim::{
    self as sim, Chat, FewShot, Prompt, SharedPrefix, SimConfig, SimRequest, TreeOfThought,
    Workload, WorkloadLimits,
};

fn batch_workload(prompts: Vec<Vec<u32>>) -> Workload {
    let requests = prompts
        .into_iter()
        .map(|p| SimRequest {
            namespace: Namespace::NONE,
            prompt: Prompt::Tokens(p),
            output: Vec::new(),
            after: None,
            priority: 0,
        })
        .collect();
    Workload { name: "batch".into(), requests }
}

/// Tokens in the radix tree of the prompts: the distinct prefixes.
fn tree_tokens(prompts: &[Vec<u32>]) -> usize {
    let mut set = HashSet::new();
    for p in prompts {
        for i in 1..=p.len() {
            set.insert(&p[..i]);
        }
    }
    set.len()
}

fn offline(policy: SchedulePolicy, capacity: usize, n: usize) -> SimConfig {
    SimConfig::default()
        .with_capacity(Some(capacity))
        .with_scheduler(SchedulerConfig::default().with_policy(policy))
        .with_window(n)
        .with_batch(1)
        .with_cache_output(false)
        .with_timing(false)
        .with_audit(true)
}

/// Prompts built from a few segments per level, so they share prefixes.
fn prompts() -> impl Strategy<Value = Vec<Vec<u32>>> {
    let segment = prop::collection::vec(0u32..3, 1..6);
    let levels = prop::collection::vec(prop::collection::vec(segment, 1..4), 1..5);
    (levels, prop::collection::vec(prop::collection::vec(0usize..4, 1..5), 1..24)).prop_map(
        |(levels, picks)| {
            picks
                .into_iter()
                .map(|pick| {
                    let mut p = Vec::new();
                    for (level, &k) in levels.iter().zip(&pick) {
                        p.extend_from_slice(&level[k % level.len()]);
                    }
                    p
                })
                .collect()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The RadixAttention theorem: an offline batch in depth-first order,
    /// with a cache at least as large as the longest request, computes each
    /// edge of the batch's radix tree once: hit rate 1 - tree / total.
    #[test]
    fn dfs_order_reaches_the_optimal_hit_rate(prompts in prompts()) {
        let total: usize = prompts.iter().map(Vec::len).sum();
        let optimal = (total - tree_tokens(&prompts)) as u64;
        let longest = prompts.iter().map(Vec::len).max().unwrap_or(0);
        let n = prompts.len();
        let w = batch_workload(prompts);
        for policy in [SchedulePolicy::DfsWeight, SchedulePolicy::LongestPrefixMatch] {
            let r = sim::simulate(&w, &offline(policy, longest, n)).unwrap();
            prop_assert_eq!(r.hit_tokens, optimal, "{:?}", policy);
            prop_assert!(r.peak_tokens <= longest);
        }
        // No order beats it, and a smaller cache or FCFS may do worse.
        let r = sim::simulate(&w, &offline(SchedulePolicy::Fcfs, longest, n)).unwrap();
        prop_assert!(r.hit_tokens <= optimal);
    }
}

#[test]
fn fcfs_falls_short_where_dfs_is_optimal() {
    let a: Vec<u32> = (0..10).collect();
    let b: Vec<u32> = (100..110).collect();
    let mut prompts = Vec::new();
    for i in 0..4u32 {
        let mut x = a.clone();
        x.push(1000 + i);
        prompts.push(x);
        let mut y = b.clone();
        y.push(2000 + i);
        prompts.push(y);
    }
    let w = batch_workload(prompts.clone());
    let fcfs = sim::simulate(&w, &offline(SchedulePolicy::Fcfs, 11, 8)).unwrap();
    let dfs = sim::simulate(&w, &offline(SchedulePolicy::DfsWeight, 11, 8)).unwrap();
    assert_eq!(dfs.hit_tokens, (88 - tree_tokens(&prompts)) as u64);
    assert!(fcfs.hit_tokens < dfs.hit_tokens, "{} vs {}", fcfs.hit_tokens, dfs.hit_tokens);
}

#[test]
fn every_workload_runs_audited_under_every_policy() {
    let limits = WorkloadLimits::default();
    let workloads = [
        sim::workload::shared_prefix(
            &SharedPrefix {
                groups: 6,
                prompts_per_group: 5,
                system_len: 200,
                question_len: 20,
                output_len: 10,
                ..SharedPrefix::default()
            },
            &limits,
        )
        .unwrap(),
        sim::workload::chat(&Chat { conversations: 5, turns: 4, ..Chat::default() }, &limits)
            .unwrap(),
        sim::workload::few_shot(
            &FewShot { families: 2, tasks_per_family: 2, questions: 4, ..FewShot::default() },
            &limits,
        )
        .unwrap(),
        sim::workload::tree_of_thought(
            &TreeOfThought { problems: 2, depth: 3, ..TreeOfThought::default() },
            &limits,
        )
        .unwrap(),
    ];
    for w in &workloads {
        for policy in [
            EvictionPolicy::Lru,
            EvictionPolicy::Lfu,
            EvictionPolicy::Fifo,
            EvictionPolicy::Priority,
        ] {
            for capacity in [None, Some(1500)] {
                let config = SimConfig::default()
                    .with_capacity(capacity)
                    .with_cache(CacheConfig::default().with_page_size(2).with_policy(policy))
                    .with_audit(true)
                    .with_window(16)
                    .with_batch(4);
                let r = sim::simulate(w, &config).unwrap();
                assert!(r.hit_rate > 0.0 && r.hit_rate <= 1.0, "{}: {r:?}", w.name);
                assert!(r.peak_tokens <= capacity.unwrap_or(usize::MAX));
                if capacity.is_none() {
                    assert_eq!(r.evictions, 0);
                } else {
                    assert!(r.evictions > 0, "{}", w.name);
                }
                assert_eq!(r.match_.count, w.requests.len() as u64);
            }
        }
    }
    // Caching outputs is what makes later chat turns hit.
    let chat = &workloads[1];
    let with = sim::simulate(chat, &SimConfig::default().with_timing(false)).unwrap();
    let without =
        sim::simulate(chat, &SimConfig::default().with_cache_output(false).with_timing(false))
            .unwrap();
    assert!(with.hit_rate > without.hit_rate);
    // Unlimited capacity, one at a time, in arrival order: exactly the bound.
    let config = SimConfig::default()
        .with_window(1)
        .with_batch(1)
        .with_scheduler(SchedulerConfig::default().with_policy(SchedulePolicy::Fcfs))
        .with_timing(false);
    for w in &workloads {
        let r = sim::simulate(w, &config).unwrap();
        assert_eq!(r.hit_rate, r.bound, "{}", w.name);
    }
}

#[test]
fn a_request_waiting_for_a_later_one_is_an_error_not_a_hang() {
    let mut w = batch_workload(vec![vec![1, 2], vec![3, 4]]);
    w.requests[0].after = Some(1);
    assert!(sim::simulate(&w, &SimConfig::default()).is_err());
    w.requests[0].after = Some(99);
    assert!(sim::simulate(&w, &SimConfig::default()).is_err());
}
