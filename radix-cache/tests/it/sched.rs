//! The scheduler: policy orders, in-batch deferral, admission accounting.

use radix_cache::sched::{
    InBatchSharing, SchedulePolicy, SchedulerConfig, Waiting, admit, schedule,
};
use radix_cache::{Namespace, RadixCache};

fn waiting(seqs: &[Vec<u32>]) -> Vec<Waiting<'_>> {
    seqs.iter().map(|s| Waiting { namespace: Namespace::NONE, tokens: s, reserve: 0 }).collect()
}

fn config(policy: SchedulePolicy) -> SchedulerConfig {
    SchedulerConfig::default().with_policy(policy)
}

#[test]
fn longest_prefix_match_orders_by_cached_length_and_never_cuts_off() {
    let mut cache: RadixCache<u32> = RadixCache::new();
    cache.insert(&[1, 2, 3, 4], &[0; 4]).unwrap();
    let seqs = vec![vec![9, 9], vec![1, 2, 7], vec![1, 2, 3, 4, 5], vec![1, 8]];
    let s = schedule(&cache, &waiting(&seqs), &config(SchedulePolicy::LongestPrefixMatch));
    assert_eq!(s.order, vec![2, 1, 3, 0]);
    assert_eq!(s.cached, Some(vec![0, 2, 4, 1]));
    assert!(!s.fell_back_to_fcfs);
    // A long queue is still ordered unless a fallback is asked for.
    let many: Vec<Vec<u32>> = (0..1000).map(|i| vec![1, 2, 3, (i % 7) as u32]).collect();
    let s = schedule(&cache, &waiting(&many), &config(SchedulePolicy::LongestPrefixMatch));
    assert_eq!(s.order[0], 4);
    assert!(!s.fell_back_to_fcfs);
    let cfg = config(SchedulePolicy::LongestPrefixMatch).with_lpm_fcfs_above(Some(128));
    let s = schedule(&cache, &waiting(&many), &cfg);
    assert!(s.fell_back_to_fcfs);
    assert_eq!(s.order, (0..1000).collect::<Vec<_>>());
}

#[test]
fn dfs_weight_visits_heavier_subtrees_first_and_prefixes_before_extensions() {
    let cache: RadixCache<u32> = RadixCache::new();
    let seqs = vec![
        vec![5, 1],
        vec![3, 1, 1],
        vec![5, 2],
        vec![3, 1],
        vec![3, 2],
        vec![3, 1, 2],
        vec![5, 3],
        vec![5, 3, 1],
    ];
    let s = schedule(&cache, &waiting(&seqs), &config(SchedulePolicy::DfsWeight));
    // Subtree 5 holds 4 requests, subtree 3 holds 4; ties keep token order.
    // Under 3: [3,1] (3 requests) before [3,2]; [3,1] itself first.
    assert_eq!(s.order, vec![3, 1, 5, 4, 6, 7, 0, 2]);
    let mut sorted = s.order.clone();
    sorted.sort();
    assert_eq!(sorted, (0..8).collect::<Vec<_>>());
}

#[test]
fn in_batch_sharing_defers_requests_that_can_wait_for_a_shared_prefix() {
    let cache: RadixCache<u32> = RadixCache::new();
    let long: Vec<u32> = (0..64).collect();
    let mut a = long.clone();
    a.push(1000);
    let mut b = long.clone();
    b.push(2000);
    let seqs = vec![a, vec![7, 7, 7], b];
    let cfg = config(SchedulePolicy::Fcfs).with_in_batch_sharing(Some(InBatchSharing::default()));
    let s = schedule(&cache, &waiting(&seqs), &cfg);
    assert_eq!(s.order, vec![0, 1, 2]);
    assert_eq!(s.deferred, 1);
    let seqs = vec![seqs[0].clone(), seqs[2].clone(), vec![7, 7, 7]];
    let s = schedule(&cache, &waiting(&seqs), &cfg);
    assert_eq!(s.order, vec![0, 2, 1]);
}

#[test]
fn admit_counts_every_admitted_request() {
    // Without `current += size` all three would be admitted (each alone fits).
    let mut cache: RadixCache<u32> = RadixCache::new();
    cache.insert(&[1, 2, 3, 4], &[0, 1, 2, 3]).unwrap();
    let seqs = vec![vec![1, 2, 3, 4, 5, 6], vec![9; 5], vec![8; 5]];
    let w = waiting(&seqs);
    let got = admit(&mut cache, &w, &[0, 1, 2], 6).unwrap();
    // available = 4 evictable + 6 free = 10; request 0 locks 4 tokens
    // (available 6) and needs 2; request 1 needs 5 (total 7 > 6): skipped.
    assert_eq!(got.iter().map(|a| a.index).collect::<Vec<_>>(), vec![0]);
    assert_eq!((got[0].prefix_len, got[0].size), (4, 2));
    assert_eq!(cache.protected_tokens(), 4);
    let got2 = admit(&mut cache, &w, &[1, 2], 12).unwrap();
    assert_eq!(got2.len(), 2);
    for a in got.into_iter().chain(got2) {
        cache.unlock(a.lock).unwrap();
    }
    assert_eq!(cache.protected_tokens(), 0);
}
