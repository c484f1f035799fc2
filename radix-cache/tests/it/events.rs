//! KV-cache events: a router that applies them holds exactly the cache's
//! full blocks, with the documented chained hashes.

use std::collections::HashSet;

use proptest::prelude::*;
use radix_cache::events::block_hash;
use radix_cache::{CacheConfig, CacheEvent, EventConfig, EvictionPolicy, Namespace, RadixCache};

/// The chained hashes of the full blocks of `tokens`.
fn chain(key: [u64; 2], ns: Namespace, tokens: &[u32], b: usize) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for block in tokens.chunks_exact(b) {
        out.push(block_hash(key, out.last().copied(), ns, block));
    }
    out
}

fn apply(
    router: &mut HashSet<u64>,
    events: Vec<CacheEvent>,
    b: usize,
) -> Result<(), TestCaseError> {
    for e in events {
        match e {
            CacheEvent::BlockStored {
                block_hashes,
                parent_block_hash,
                token_ids,
                block_size,
                ..
            } => {
                prop_assert_eq!(block_size, b);
                prop_assert_eq!(token_ids.len(), block_hashes.len() * b);
                if let Some(p) = parent_block_hash {
                    prop_assert!(router.contains(&p), "parent block unknown to the router");
                }
                for h in block_hashes {
                    prop_assert!(router.insert(h), "block stored twice");
                }
            }
            CacheEvent::BlockRemoved { block_hashes } => {
                for h in block_hashes {
                    prop_assert!(router.remove(&h), "unknown block removed");
                }
            }
            CacheEvent::AllBlocksCleared => router.clear(),
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn router_follows_the_cache(
        ops in prop::collection::vec((0u8..10, 0u64..2, prop::collection::vec(0u32..3, 0..20)), 1..40),
        b in 1usize..5,
        page in prop_oneof![Just(1usize), Just(2)],
        keyed in any::<bool>(),
    ) {
        let b = b * page;
        let key = if keyed { [7, 11] } else { [0, 0] };
        let events = EventConfig::default().with_block_size(b).with_hash_key(keyed.then_some(key));
        let config = CacheConfig::default()
            .with_page_size(page)
            .with_policy(EvictionPolicy::Lru)
            .with_events(Some(events));
        let mut cache: RadixCache<u32> = RadixCache::with_config(config).unwrap();
        let mut router = HashSet::new();
        let mut inserted: Vec<(Namespace, Vec<u32>)> = Vec::new();
        for (kind, ns, tokens) in ops {
            let ns = Namespace(ns);
            match kind {
                0..=5 => {
                    cache.insert_with(ns, &tokens, &vec![0; tokens.len()], 0).unwrap();
                    inserted.push((ns, tokens));
                }
                6..=8 => {
                    cache.evict(tokens.len());
                }
                _ => {
                    cache.reset();
                    inserted.clear();
                }
            }
            let drained: Vec<CacheEvent> = cache.drain_events().collect();
            apply(&mut router, drained, b)?;
            let mut want = HashSet::new();
            for (ns, seq) in &inserted {
                let cached = cache.prefix_len_in(*ns, seq);
                want.extend(chain(key, *ns, &seq[..cached], b));
            }
            prop_assert_eq!(&router, &want);
        }
    }
}

#[test]
fn splits_emit_nothing_and_reset_clears() {
    let events = EventConfig::default().with_block_size(2);
    let config = CacheConfig::default().with_events(Some(events));
    let mut cache: RadixCache<u32> = RadixCache::with_config(config).unwrap();
    cache.insert(&[1, 2, 3, 4, 5], &[0; 5]).unwrap();
    let stored: Vec<CacheEvent> = cache.drain_events().collect();
    let want = chain([0, 0], Namespace::NONE, &[1, 2, 3, 4], 2);
    assert_eq!(
        stored,
        vec![CacheEvent::BlockStored {
            block_hashes: want.clone(),
            parent_block_hash: None,
            token_ids: vec![1, 2, 3, 4],
            block_size: 2,
            namespace: Namespace::NONE,
        }]
    );
    // A split at token 3 (inside block 1) stores only the new block [3, 9].
    cache.insert(&[1, 2, 3, 9], &[0; 4]).unwrap();
    let got: Vec<CacheEvent> = cache.drain_events().collect();
    let second = chain([0, 0], Namespace::NONE, &[1, 2, 3, 9], 2);
    assert_eq!(got.len(), 1);
    assert!(matches!(&got[0], CacheEvent::BlockStored { block_hashes, parent_block_hash, .. }
        if block_hashes == &second[1..] && *parent_block_hash == Some(want[0])));
    cache.reset();
    assert_eq!(cache.drain_events().collect::<Vec<_>>(), vec![CacheEvent::AllBlocksCleared]);
}
