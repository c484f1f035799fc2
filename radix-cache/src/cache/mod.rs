//! The radix tree: its types, construction, accounting and matching.
//!
//! The operations live beside it, one concern each: `insert` (with
//! splitting and the event blocks), `lock` (locks and touches), `evict`
//! (eviction and reset), `order` (the eviction lists) and `validate` (the
//! invariant check). See `DESIGN.md` for the invariants; the ones the code
//! relies on are also written on the fields of [`Node`](crate::node::Node).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::events::{CacheEvent, EventConfig};
use crate::node::{Node, NodeId, common_prefix};
use crate::{Error, Namespace};

/// Which unlocked leaf [`RadixCache::evict`] removes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum EvictionPolicy {
    /// Least recently used (touched by `insert`, `lock`, `unlock`, `touch`):
    /// an intrusive list, O(1) per evicted leaf.
    #[default]
    Lru,
    /// Least frequently used, ties least recently used: one list per hit
    /// count, O(log B) per evicted leaf for B distinct counts.
    Lfu,
    /// First in, first out: the leaf created earliest goes first; a node
    /// whose children are all gone counts from its newest child's creation
    /// (the newest insertion through it). One list of all nodes in that
    /// order, locked ones included and skipped: O(1) per evicted leaf plus
    /// the locked nodes at the front of the order.
    Fifo,
    /// Lowest priority first (the highest priority of the inserts that
    /// touched the node), ties least recently used: one list per priority.
    Priority,
}

/// The configuration of a [`RadixCache`]: `CacheConfig::default()` (page
/// size 1, LRU, no events), then the `with_*` setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheConfig {
    /// Tokens per page, at least 1. With pages, only whole pages are cached
    /// and matched, and edges split only at page boundaries.
    pub page_size: usize,
    /// The eviction order.
    pub policy: EvictionPolicy,
    /// `Some` to record [`CacheEvent`]s for [`RadixCache::drain_events`].
    pub events: Option<EventConfig>,
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig { page_size: 1, policy: EvictionPolicy::Lru, events: None }
    }
}

impl CacheConfig {
    /// Sets [`page_size`](Self::page_size).
    pub fn with_page_size(mut self, page_size: usize) -> CacheConfig {
        self.page_size = page_size;
        self
    }

    /// Sets [`policy`](Self::policy).
    pub fn with_policy(mut self, policy: EvictionPolicy) -> CacheConfig {
        self.policy = policy;
        self
    }

    /// Sets [`events`](Self::events).
    pub fn with_events(mut self, events: Option<EventConfig>) -> CacheConfig {
        self.events = events;
        self
    }
}

/// Where a prefix match ended: the node whose edge holds the last matched
/// token and how far into that edge. Pass it to [`RadixCache::lock`].
///
/// A handle stays valid until the node it names is evicted (or trimmed
/// below the match) or the cache is reset; later splits of that node do not
/// invalidate it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchHandle {
    node: Option<(NodeId, u32)>,
    offset: usize,
    len: usize,
    epoch: u32,
}

impl MatchHandle {
    /// The node whose edge holds the last matched token, `None` when nothing
    /// matched.
    pub fn node(&self) -> Option<NodeId> {
        self.node.map(|(id, _)| id)
    }

    /// How many tokens of that node's edge matched (when the match ended
    /// inside the edge, the node is not split: reading changes nothing).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The matched length in tokens.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing matched.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The result of [`RadixCache::match_prefix`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixMatch<V> {
    /// Matched tokens (a multiple of the page size).
    pub len: usize,
    /// Where the match ended, for [`RadixCache::lock`].
    pub handle: MatchHandle,
    /// The values of the matched tokens, in order.
    pub values: Vec<V>,
}

/// The result of [`RadixCache::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insertion {
    /// Tokens that were already cached: the caller's values for
    /// `tokens[..prefix_len]` were not taken and are the caller's to free.
    pub prefix_len: usize,
    /// Tokens newly cached: the cache took `values[prefix_len..prefix_len +
    /// inserted]`. The rest, `values[prefix_len + inserted..]` (a trailing
    /// partial page), was not taken either.
    pub inserted: usize,
}

/// A held lock, returned by [`RadixCache::lock`] and given back to
/// [`RadixCache::unlock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LockId {
    index: u32,
    generation: u32,
    epoch: u32,
}

/// What one call to [`RadixCache::evict_into`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Evicted {
    /// Tokens freed (at least the request unless nothing evictable was left).
    pub tokens: usize,
    /// Leaves removed.
    pub leaves: usize,
    /// Leaves shortened instead (at most one per call: the last victim, when
    /// only part of its edge had to go).
    pub trimmed: usize,
}

#[derive(Debug, Clone)]
struct LockSlot {
    node: Option<NodeId>,
    generation: u32,
    active: bool,
}

/// The first and last node of one bucket of the eviction lists.
#[derive(Debug, Clone, Copy)]
struct Ends {
    head: NodeId,
    tail: NodeId,
}

/// A radix tree over token ids whose nodes carry one value `V` per token (a
/// KV-cache slot, a page index, ...). See the crate documentation.
#[derive(Debug, Clone)]
pub struct RadixCache<V> {
    /// The arena; freed slots are listed in `free` and reused.
    nodes: Vec<Node<V>>,
    free: Vec<NodeId>,
    /// One root per namespace in use; a root is removed with its last child.
    roots: FxHashMap<Namespace, NodeId>,
    page: usize,
    policy: EvictionPolicy,
    /// The logical clock: one tick per touching operation.
    clock: u64,
    /// Sum of edge lengths over live non-root nodes.
    total: usize,
    /// Sum of edge lengths over nodes with `lock_ref > 0`.
    protected: usize,
    /// LRU, LFU, priority: every unlocked live non-root node, in buckets by
    /// the policy's primary key (0 for LRU, hits for LFU, priority), each
    /// bucket an intrusive list in (stamp, children before parents) order;
    /// the head of the first bucket is a leaf (see `DESIGN.md`).
    /// FIFO: one bucket holding every live non-root node, locked or not, in
    /// (`created`, children before parents) order; its first unlocked node
    /// is a leaf.
    lists: BTreeMap<u64, Ends>,
    locks: Vec<LockSlot>,
    lock_free: Vec<u32>,
    held_locks: usize,
    /// Bumped by `reset`, so handles and locks from before are refused.
    epoch: u32,
    events: Option<EventConfig>,
    pending: Vec<CacheEvent>,
    evicted_leaves: u64,
    evicted_tokens: u64,
    /// Scratch path for `insert`, kept to avoid an allocation per call.
    path: Vec<NodeId>,
}

impl<V: Clone> Default for RadixCache<V> {
    fn default() -> RadixCache<V> {
        RadixCache::new()
    }
}

impl<V: Clone> RadixCache<V> {
    /// An empty cache with page size 1, LRU eviction and no events.
    pub fn new() -> RadixCache<V> {
        RadixCache::build(CacheConfig::default())
    }

    /// An empty cache with the given configuration.
    pub fn with_config(config: CacheConfig) -> Result<RadixCache<V>, Error> {
        if config.page_size == 0 {
            return Err(Error::Config { what: "page_size must be at least 1" });
        }
        if config.page_size > u32::MAX as usize {
            return Err(Error::Config { what: "page_size must fit in 32 bits" });
        }
        if config.events.is_some_and(|e| e.block_size == 0 || e.block_size % config.page_size != 0)
        {
            // Two sibling pages may agree on their first tokens: a block
            // ending inside a page would then be stored by both.
            return Err(Error::Config {
                what: "events.block_size must be a positive multiple of page_size",
            });
        }
        Ok(RadixCache::build(config))
    }

    fn build(config: CacheConfig) -> RadixCache<V> {
        RadixCache {
            nodes: Vec::new(),
            free: Vec::new(),
            roots: FxHashMap::default(),
            page: config.page_size,
            policy: config.policy,
            clock: 0,
            total: 0,
            protected: 0,
            lists: BTreeMap::new(),
            locks: Vec::new(),
            lock_free: Vec::new(),
            held_locks: 0,
            epoch: 0,
            events: config.events,
            pending: Vec::new(),
            evicted_leaves: 0,
            evicted_tokens: 0,
            path: Vec::new(),
        }
    }

    /// The page size.
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// The eviction policy.
    pub fn policy(&self) -> EvictionPolicy {
        self.policy
    }

    /// Tokens cached (each token once, however many sequences share it).
    pub fn total_tokens(&self) -> usize {
        self.total
    }

    /// Tokens on locked paths: not evictable until unlocked.
    pub fn protected_tokens(&self) -> usize {
        self.protected
    }

    /// Tokens that `evict` can free now: `total_tokens() - protected_tokens()`
    /// (every unlocked node becomes a leaf once its subtree is gone).
    pub fn evictable_tokens(&self) -> usize {
        self.total - self.protected
    }

    /// Live nodes, namespace roots included.
    pub fn node_count(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// Locks currently held.
    pub fn held_locks(&self) -> usize {
        self.held_locks
    }

    /// Leaves and tokens evicted since the cache was made.
    pub fn evictions(&self) -> (u64, u64) {
        (self.evicted_leaves, self.evicted_tokens)
    }

    /// Bytes of heap and inline memory the cache uses (arena, edges, values,
    /// child maps, lists), an estimate exact up to allocator overhead.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let mut bytes = size_of::<Self>()
            + self.nodes.capacity() * size_of::<Node<V>>()
            + self.free.capacity() * size_of::<NodeId>()
            + self.locks.capacity() * size_of::<LockSlot>()
            + self.roots.capacity() * (size_of::<(Namespace, NodeId)>() + 1);
        for n in &self.nodes {
            bytes += n.key.capacity() * 4
                + n.values.capacity() * size_of::<V>()
                + n.blocks.capacity() * 8
                + n.children.capacity() * (size_of::<(u32, NodeId)>() + 1);
        }
        bytes
    }

    fn node(&self, id: NodeId) -> &Node<V> {
        &self.nodes[id.index()]
    }

    fn node_mut(&mut self, id: NodeId) -> &mut Node<V> {
        &mut self.nodes[id.index()]
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    // ---------------------------------------------------------------- match

    /// The longest cached prefix of `tokens` in the default namespace.
    /// Read-only: no split, no access-time update.
    ///
    /// O(m + d) where m = matched tokens and d = nodes on the path.
    pub fn match_prefix(&self, tokens: &[u32]) -> PrefixMatch<V> {
        self.match_prefix_in(Namespace::NONE, tokens)
    }

    /// The longest cached prefix of `tokens` in `namespace`.
    pub fn match_prefix_in(&self, namespace: Namespace, tokens: &[u32]) -> PrefixMatch<V> {
        let mut values = Vec::new();
        let (len, handle) = self.walk(namespace, tokens, Some(&mut values));
        PrefixMatch { len, handle, values }
    }

    /// The length of the longest cached prefix of `tokens` in `namespace`,
    /// without collecting values.
    pub fn prefix_len_in(&self, namespace: Namespace, tokens: &[u32]) -> usize {
        self.walk(namespace, tokens, None).0
    }

    fn walk(
        &self,
        namespace: Namespace,
        tokens: &[u32],
        mut values: Option<&mut Vec<V>>,
    ) -> (usize, MatchHandle) {
        let mut handle = MatchHandle { node: None, offset: 0, len: 0, epoch: self.epoch };
        let Some(&root) = self.roots.get(&namespace) else { return (0, handle) };
        let page = self.page;
        let mut node = root;
        let mut pos = 0;
        while pos + page <= tokens.len() {
            let Some(child) = self.find_child(node, &tokens[pos..pos + page]) else { break };
            let c = self.node(child);
            let mut l = common_prefix(&c.key, &tokens[pos..]);
            l -= l % page;
            if let Some(v) = values.as_deref_mut() {
                v.extend_from_slice(&c.values[..l]);
            }
            pos += l;
            handle.node = Some((child, c.generation));
            handle.offset = l;
            if l < c.key.len() {
                break;
            }
            node = child;
        }
        handle.len = pos;
        (pos, handle)
    }

    /// The child of `node` whose edge starts with `page` (a whole page).
    fn find_child(&self, node: NodeId, page: &[u32]) -> Option<NodeId> {
        let mut c = *self.node(node).children.get(&page[0])?;
        loop {
            let n = self.node(c);
            if n.key.get(..page.len()) == Some(page) {
                return Some(c);
            }
            c = n.next_same_first?;
        }
    }
}

mod evict;
mod insert;
mod lock;
mod order;
mod validate;
