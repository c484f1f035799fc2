//! Focused checks: errors, splits, namespaces, pages, and each policy's order.

use radix_cache::{CacheConfig, Error, EvictionPolicy, Namespace, RadixCache};

fn cache(policy: EvictionPolicy, page_size: usize) -> RadixCache<u32> {
    RadixCache::with_config(CacheConfig::default().with_page_size(page_size).with_policy(policy))
        .unwrap()
}

#[test]
fn misuse_is_a_typed_error() {
    let mut c = cache(EvictionPolicy::Lru, 1);
    assert_eq!(c.insert(&[1, 2], &[1]), Err(Error::ValuesLength { tokens: 2, values: 1 }));
    c.insert(&[1, 2, 3], &[10, 11, 12]).unwrap();
    let m = c.match_prefix(&[1, 2, 3]);
    let lock = c.lock(&m.handle).unwrap();
    c.unlock(lock).unwrap();
    assert_eq!(c.unlock(lock), Err(Error::NotLocked));
    // The handle's node is evicted: the handle is stale.
    assert_eq!(c.evict(100), vec![10, 11, 12]);
    assert_eq!(c.lock(&m.handle), Err(Error::StaleHandle));
    assert_eq!(c.touch(&m.handle), Err(Error::StaleHandle));
    let bad = RadixCache::<u32>::with_config(CacheConfig::default().with_page_size(0));
    assert!(matches!(bad, Err(Error::Config { .. })));
    // A reset invalidates handles and locks.
    c.insert(&[5, 6], &[1, 2]).unwrap();
    let m = c.match_prefix(&[5, 6]);
    let lock = c.lock(&m.handle).unwrap();
    assert_eq!(c.reset(), vec![1, 2]);
    assert_eq!(c.unlock(lock), Err(Error::NotLocked));
    assert_eq!(c.lock(&m.handle), Err(Error::StaleHandle));
    assert!(Error::NotLocked.to_string().contains("not held"));
}

#[test]
fn match_does_not_split_and_lock_protects_exactly_the_match() {
    let mut c = cache(EvictionPolicy::Lru, 1);
    c.insert(&[1, 2, 3, 4, 5, 6], &[0, 1, 2, 3, 4, 5]).unwrap();
    let nodes = c.node_count();
    let m = c.match_prefix(&[1, 2, 3, 9]);
    assert_eq!((m.len, m.handle.offset()), (3, 3));
    assert_eq!(c.node_count(), nodes, "a read must not split");
    let lock = c.lock(&m.handle).unwrap();
    assert_eq!(c.protected_tokens(), 3);
    assert_eq!(c.evictable_tokens(), 3);
    assert_eq!(c.evict(10), vec![3, 4, 5]);
    assert_eq!(c.total_tokens(), 3);
    c.unlock(lock).unwrap();
    c.validate().unwrap();
}

#[test]
fn handles_survive_splits_of_their_node() {
    let mut c = cache(EvictionPolicy::Lru, 1);
    c.insert(&[1, 2, 3, 4], &[0, 1, 2, 3]).unwrap();
    let m = c.match_prefix(&[1, 2, 3, 4]);
    // Split the node above the match end, then below it.
    c.insert(&[1, 2, 7], &[9, 9, 9]).unwrap();
    c.insert(&[1, 9], &[9, 9]).unwrap();
    let lock = c.lock(&m.handle).unwrap();
    assert_eq!(c.protected_tokens(), 4);
    c.validate().unwrap();
    c.unlock(lock).unwrap();
    let m = c.match_prefix(&[1, 2, 3]);
    c.insert(&[1, 2, 3, 5], &[9, 9, 9, 9]).unwrap();
    let lock = c.lock(&m.handle).unwrap();
    assert_eq!(c.protected_tokens(), 3);
    c.unlock(lock).unwrap();
    c.validate().unwrap();
}

#[test]
fn namespaces_never_share() {
    let mut c = cache(EvictionPolicy::Lru, 1);
    c.insert_with(Namespace(1), &[1, 2, 3], &[1, 2, 3], 0).unwrap();
    assert_eq!(c.match_prefix(&[1, 2, 3]).len, 0);
    assert_eq!(c.match_prefix_in(Namespace(2), &[1, 2, 3]).len, 0);
    let ins = c.insert_with(Namespace(2), &[1, 2, 3], &[4, 5, 6], 0).unwrap();
    assert_eq!(ins.prefix_len, 0);
    assert_eq!(c.total_tokens(), 6);
    assert_eq!(c.match_prefix_in(Namespace(2), &[1, 2]).values, vec![4, 5]);
    assert_eq!(c.evict(usize::MAX).len(), 6);
    assert_eq!(c.node_count(), 0, "empty namespace roots are freed");
}

#[test]
fn pages_cache_only_whole_pages() {
    let mut c = cache(EvictionPolicy::Lru, 4);
    let ins = c.insert(&[1, 2, 3, 4, 5, 6], &[0, 1, 2, 3, 4, 5]).unwrap();
    assert_eq!((ins.prefix_len, ins.inserted), (0, 4));
    assert_eq!(c.match_prefix(&[1, 2, 3, 4, 5, 6]).len, 4);
    assert_eq!(c.match_prefix(&[1, 2, 3]).len, 0);
    // Diverging inside a page: a sibling page, no split inside the page.
    let ins = c.insert(&[1, 2, 9, 9, 5], &[9; 5]).unwrap();
    assert_eq!((ins.prefix_len, ins.inserted), (0, 4));
    assert_eq!(c.total_tokens(), 8);
    assert_eq!(c.match_prefix(&[1, 2, 9, 9]).values, vec![9; 4]);
    c.validate().unwrap();
}

#[test]
fn lru_evicts_least_recently_used_leaf_first() {
    let mut c = cache(EvictionPolicy::Lru, 1);
    c.insert(&[1, 1], &[1, 2]).unwrap();
    c.insert(&[2, 2], &[3, 4]).unwrap();
    c.insert(&[3, 3], &[5, 6]).unwrap();
    let m = c.match_prefix(&[1, 1]);
    c.touch(&m.handle).unwrap();
    assert_eq!(c.evict(2), vec![3, 4]);
    assert_eq!(c.evict(2), vec![5, 6]);
    assert_eq!(c.evict(2), vec![1, 2]);
    // A parent goes after its children, once they are gone; the last victim
    // of a call loses only the tokens still needed, from its end.
    c.insert(&[1, 2, 3], &[1, 2, 3]).unwrap();
    c.insert(&[1, 2, 4], &[1, 2, 4]).unwrap();
    c.insert(&[9], &[9]).unwrap();
    assert_eq!(c.evict(1), vec![3]);
    assert_eq!(c.evict(1), vec![4]);
    let m = c.match_prefix(&[1, 2]);
    assert_eq!(c.evict(1), vec![2]);
    assert_eq!(c.match_prefix(&[1, 2]).len, 1);
    assert_eq!(c.lock(&m.handle), Err(Error::StaleHandle), "the match was trimmed");
    c.validate().unwrap();
    assert_eq!(c.evict(1), vec![1]);
    assert_eq!(c.evict(1), vec![9]);
}

#[test]
fn heap_policies_follow_their_keys() {
    let mut c = cache(EvictionPolicy::Lfu, 1);
    c.insert(&[1], &[1]).unwrap();
    c.insert(&[2], &[2]).unwrap();
    c.insert(&[1], &[1]).unwrap();
    c.insert(&[3], &[3]).unwrap();
    assert_eq!(c.evict(1), vec![2]);
    assert_eq!(c.evict(1), vec![3]);
    let mut c = cache(EvictionPolicy::Fifo, 1);
    c.insert(&[1], &[1]).unwrap();
    c.insert(&[2], &[2]).unwrap();
    c.insert(&[1], &[1]).unwrap();
    assert_eq!(c.evict(1), vec![1]);
    let mut c = cache(EvictionPolicy::Priority, 1);
    c.insert_with(Namespace::NONE, &[1], &[1], 5).unwrap();
    c.insert_with(Namespace::NONE, &[2], &[2], 1).unwrap();
    c.insert_with(Namespace::NONE, &[3], &[3], 9).unwrap();
    assert_eq!(c.evict(3), vec![2, 1, 3]);
}

#[test]
fn fifo_skips_locked_leaves_and_orders_by_the_newest_creation() {
    let mut c = cache(EvictionPolicy::Fifo, 1);
    c.insert(&[1, 2], &[10, 20]).unwrap(); // t1: leaf [1,2]
    c.insert(&[1, 3], &[10, 30]).unwrap(); // t2: split into [1] + [2], new leaf [3]
    c.insert(&[4], &[40]).unwrap(); // t3
    c.insert(&[1, 2], &[10, 20]).unwrap(); // nothing new: no move
    let m = c.match_prefix(&[1, 2]);
    let lock = c.lock(&m.handle).unwrap();
    c.validate().unwrap();
    // [2] is the oldest leaf but locked: skipped, and [1] (locked) too.
    assert_eq!(c.evict(1), vec![30]);
    assert_eq!(c.evict(1), vec![40]);
    assert!(c.evict(1).is_empty());
    c.unlock(lock).unwrap();
    c.validate().unwrap();
    assert_eq!(c.evict(1), vec![20]);
    // [1] lost its children: it counts from its newest child's creation.
    c.insert(&[5], &[50]).unwrap();
    assert_eq!(c.evict(1), vec![10]);
    assert_eq!(c.evict(1), vec![50]);
    c.validate().unwrap();
    assert_eq!(c.total_tokens(), 0);
}

#[test]
fn many_leaves_evict_in_order() {
    for policy in [EvictionPolicy::Lru, EvictionPolicy::Lfu, EvictionPolicy::Fifo] {
        let mut c = cache(policy, 1);
        for i in 0..5000u32 {
            c.insert(&[i / 100, i], &[i, i]).unwrap();
            let m = c.match_prefix(&[i / 100, i]);
            let l = c.lock(&m.handle).unwrap();
            c.unlock(l).unwrap();
        }
        assert_eq!(c.total_tokens(), 5050);
        let first = c.evict(1);
        assert_eq!(first, vec![0], "{policy:?}");
        assert_eq!(c.evict(usize::MAX).len(), 5050 - 1);
        c.validate().unwrap();
        assert!(c.memory_bytes() > 0);
    }
}
