//! Property tests against a model: the set of cached pages, each named by
//! its namespace and the prefix ending with it (with pages of one token: the
//! set of cached token positions).

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use radix_cache::{CacheConfig, EvictionPolicy, LockId, Namespace, RadixCache};

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, Vec<u32>),
    Match(u64, Vec<u32>),
    Lock(u64, Vec<u32>),
    Unlock(usize),
    Evict(usize),
    Touch(u64, Vec<u32>),
    Reset,
}

fn seq() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(0u32..3, 0..14)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..2, seq()).prop_map(|(n, s)| Op::Insert(n, s)),
        3 => (0u64..2, seq()).prop_map(|(n, s)| Op::Match(n, s)),
        3 => (0u64..2, seq()).prop_map(|(n, s)| Op::Lock(n, s)),
        3 => (0usize..8).prop_map(Op::Unlock),
        3 => (0usize..12).prop_map(Op::Evict),
        1 => (0u64..2, seq()).prop_map(|(n, s)| Op::Touch(n, s)),
        1 => Just(Op::Reset),
    ]
}

fn policy() -> impl Strategy<Value = EvictionPolicy> {
    prop_oneof![
        Just(EvictionPolicy::Lru),
        Just(EvictionPolicy::Lfu),
        Just(EvictionPolicy::Fifo),
        Just(EvictionPolicy::Priority),
    ]
}

type Pos = (u64, Vec<u32>);

/// The model: position -> value, plus the held locks and the value ledger.
#[derive(Default)]
struct Model {
    cached: HashMap<Pos, Vec<u32>>,
    owner: HashMap<u32, Pos>,
    locks: Vec<(LockId, u64, Vec<u32>)>,
    released: Vec<LockId>,
    next_value: u32,
    freed: HashSet<u32>,
}

impl Model {
    fn matched(&self, ns: u64, tokens: &[u32], page: usize) -> (usize, Vec<u32>) {
        let mut k = 0;
        let mut values = Vec::new();
        while k + page <= tokens.len() {
            let Some(v) = self.cached.get(&(ns, tokens[..k + page].to_vec())) else { break };
            values.extend_from_slice(v);
            k += page;
        }
        (k, values)
    }

    fn locked_pages(&self, page: usize) -> HashSet<Pos> {
        let mut set = HashSet::new();
        for (_, ns, prefix) in &self.locks {
            for k in (page..=prefix.len()).step_by(page) {
                set.insert((*ns, prefix[..k].to_vec()));
            }
        }
        set
    }

    fn tokens(&self) -> usize {
        self.cached.values().map(Vec::len).sum()
    }

    fn free(&mut self, v: u32) -> Result<(), TestCaseError> {
        prop_assert!(self.freed.insert(v), "value {} freed twice", v);
        Ok(())
    }
}

fn run(ops: Vec<Op>, page: usize, policy: EvictionPolicy) -> Result<(), TestCaseError> {
    let config = CacheConfig::default().with_page_size(page).with_policy(policy);
    let mut cache: RadixCache<u32> = RadixCache::with_config(config).unwrap();
    let mut m = Model::default();
    for op in ops {
        match op {
            Op::Insert(ns, tokens) => {
                let values: Vec<u32> = (m.next_value..).take(tokens.len()).collect();
                m.next_value += tokens.len() as u32;
                let (before, _) = m.matched(ns, &tokens, page);
                let ins = cache.insert_with(Namespace(ns), &tokens, &values, 0).unwrap();
                let aligned = tokens.len() / page * page;
                prop_assert_eq!(ins.prefix_len, before);
                prop_assert_eq!(ins.prefix_len + ins.inserted, aligned);
                for k in (ins.prefix_len..aligned).step_by(page) {
                    let pos = (ns, tokens[..k + page].to_vec());
                    prop_assert!(!m.cached.contains_key(&pos));
                    for &v in &values[k..k + page] {
                        m.owner.insert(v, pos.clone());
                    }
                    m.cached.insert(pos, values[k..k + page].to_vec());
                }
                for &v in values[..ins.prefix_len].iter().chain(&values[aligned..]) {
                    m.free(v)?;
                }
            }
            Op::Match(ns, tokens) | Op::Touch(ns, tokens) => {
                let got = cache.match_prefix_in(Namespace(ns), &tokens);
                let (len, values) = m.matched(ns, &tokens, page);
                prop_assert_eq!(got.len, len);
                prop_assert_eq!(got.values, values);
                prop_assert_eq!(cache.prefix_len_in(Namespace(ns), &tokens), len);
                cache.touch(&got.handle).unwrap();
            }
            Op::Lock(ns, tokens) => {
                let got = cache.match_prefix_in(Namespace(ns), &tokens);
                let lock = cache.lock(&got.handle).unwrap();
                m.locks.push((lock, ns, tokens[..got.len].to_vec()));
            }
            Op::Unlock(k) => {
                if m.locks.is_empty() {
                    if let Some(&old) = m.released.last() {
                        prop_assert!(cache.unlock(old).is_err(), "double unlock accepted");
                    }
                    continue;
                }
                let (lock, _, _) = m.locks.remove(k % m.locks.len());
                cache.unlock(lock).unwrap();
                m.released.push(lock);
                prop_assert!(cache.unlock(lock).is_err(), "double unlock accepted");
            }
            Op::Evict(n) => {
                let locked = m.locked_pages(page);
                let evictable = cache.evictable_tokens();
                let freed = cache.evict(n);
                prop_assert!(freed.len() >= n.min(evictable));
                for v in freed {
                    let pos = m.owner.remove(&v).expect("evicted a value the cache did not own");
                    prop_assert!(!locked.contains(&pos), "evicted a locked token");
                    m.cached.remove(&pos);
                    m.free(v)?;
                }
            }
            Op::Reset => {
                for v in cache.reset() {
                    prop_assert!(m.owner.remove(&v).is_some());
                    m.free(v)?;
                }
                prop_assert!(m.owner.is_empty());
                m.cached.clear();
                for (lock, _, _) in m.locks.drain(..) {
                    prop_assert!(cache.unlock(lock).is_err(), "lock survived a reset");
                }
            }
        }
        if let Err(e) = cache.validate() {
            return Err(TestCaseError::fail(e));
        }
        let protected = m.locked_pages(page).len() * page;
        prop_assert_eq!(cache.total_tokens(), m.tokens());
        prop_assert_eq!(cache.protected_tokens(), protected);
        prop_assert_eq!(cache.evictable_tokens() + cache.protected_tokens(), cache.total_tokens());
    }
    // Nothing leaks: after releasing everything and evicting it all, every
    // value handed to the cache has been freed exactly once.
    for (lock, _, _) in m.locks.drain(..) {
        cache.unlock(lock).unwrap();
    }
    for v in cache.evict(usize::MAX) {
        prop_assert!(m.owner.remove(&v).is_some());
        m.free(v)?;
    }
    prop_assert_eq!(cache.total_tokens(), 0);
    prop_assert_eq!(cache.node_count(), 0);
    prop_assert_eq!(m.freed.len() as u32, m.next_value);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn cache_agrees_with_the_model(
        ops in prop::collection::vec(op(), 1..60),
        page in prop_oneof![Just(1usize), Just(2), Just(3)],
        policy in policy(),
    ) {
        run(ops, page, policy)?;
    }
}
