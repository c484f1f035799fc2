//! A radix tree over token sequences for prefix KV-cache reuse.
//!
//! Requests that share a prefix (a system prompt, few-shot examples, chat
//! history, tree-of-thought branches) can share its KV cache. [`RadixCache`]
//! keeps a radix tree over token ids, as SGLang's RadixAttention does: each
//! edge holds a run of tokens and one value per token (the KV handle: a slot
//! index, a page id, ...); requests [`lock`](RadixCache::lock) the path they
//! use; unlocked leaves are [`evict`](RadixCache::evict)ed when memory is
//! needed. [`sched`] orders a waiting queue so that requests hit the cache;
//! [`events`] reports the cache's contents as vLLM-style KV-cache events
//! (the `structgen-kv-events` crate puts them on the wire). The trace
//! simulator of `structgen cache-sim` lives in `structgen-cli`.
//!
//! # Example
//! ```
//! use structgen_radix_cache::RadixCache;
//!
//! let mut cache: RadixCache<u32> = RadixCache::new();
//! // Request 1: KV slots 100..105 for its five tokens.
//! cache.insert(&[1, 2, 3, 4, 5], &[100, 101, 102, 103, 104]).unwrap();
//! // Request 2 shares three tokens: they come back with their slots.
//! let m = cache.match_prefix(&[1, 2, 3, 9]);
//! assert_eq!((m.len, m.values.as_slice()), (3, &[100, 101, 102][..]));
//! let lock = cache.lock(&m.handle).unwrap(); // running: protect the prefix
//! assert_eq!(cache.protected_tokens(), 3);
//! assert_eq!(cache.evict(5), vec![103, 104]); // only the unlocked tail goes
//! cache.unlock(lock).unwrap();
//! assert_eq!(cache.evictable_tokens(), 3);
//! // Eviction frees what is asked, from the end of the last victim.
//! assert_eq!(cache.evict(1), vec![102]);
//! assert_eq!(cache.match_prefix(&[1, 2, 3]).len, 2);
//! ```
//!
//! # Algorithm
//! See `DESIGN.md` beside this crate's `Cargo.toml`: the invariants, why an
//! eviction costs O(1) per leaf under LRU (an intrusive list over *all*
//! unlocked nodes ordered so its head is always a leaf, bucketed by hit
//! count or priority for LFU and priority), FIFO's list of all nodes by the
//! newest creation in their subtree, the event blocks and their hash, and the
//! scheduling theorem with its proof.
//!
//! # Complexity
//! With n = tokens of the sequence, m = matched tokens, d = nodes on the path
//! (d <= n / page size):
//! `match_prefix` O(m + d) (plus copying m values); `insert` O(n + d);
//! `lock` / `unlock` / `touch` O(d) (times log B for LFU and priority);
//! `evict` per evicted leaf O(1) for LRU, O(log B) for LFU and priority
//! (B = distinct hit counts or priorities in use), O(1) plus the locked
//! nodes older than the victim for FIFO, plus O(freed tokens);
//! the accounting getters O(1); `reset` O(nodes).
//!
//! # Memory
//! Per node about 200 bytes (edge and value vectors, the child map, links,
//! policy fields), plus 4 bytes per token of edge and `size_of::<V>()` per
//! token of values; [`RadixCache::memory_bytes`] reports it. Freed nodes are
//! reused from a free list; an empty namespace root is freed with its last
//! child.
//!
//! # Errors and panics
//! Misuse is a typed [`Error`] (mismatched values, stale handles, unlocking a
//! lock not held, bad configuration), never a panic.
//!
//! # Configuration
//! [`CacheConfig`], [`EventConfig`] and [`sched::SchedulerConfig`] are
//! `#[non_exhaustive]`: start from `Default` and chain the `with_*` setters
//! (`CacheConfig::default().with_page_size(16)`), so a new option is not a
//! breaking change.
//!
//! # Features
//! None. The only dependency is `rustc-hash` (child maps): no I/O, no serde.
#![forbid(unsafe_code)]

mod cache;
mod error;
pub mod events;
mod node;
pub mod sched;

pub use cache::{
    CacheConfig, Evicted, EvictionPolicy, Insertion, LockId, MatchHandle, PrefixMatch, RadixCache,
};
pub use error::Error;
pub use events::{CacheEvent, EventConfig};
pub use node::NodeId;

/// A separate key space (a LoRA adapter, a cache salt): sequences in
/// different namespaces never share nodes. `Namespace::NONE` is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Namespace(pub u64);

impl Namespace {
    /// The default namespace.
    pub const NONE: Namespace = Namespace(0);
}

#[cfg(test)]
mod tests {
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send_sync::<crate::RadixCache<u32>>();
        assert_send_sync::<crate::CacheEvent>();
        assert_send_sync::<crate::Error>();
    }
}
