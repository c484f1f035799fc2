//! The radix tree: matching, insertion, locking, eviction and accounting.
//!
//! See `DESIGN.md` for the invariants; the ones the code relies on are also
//! written on the fields of [`Node`](crate::node::Node) and below.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::events::{CacheEvent, EventConfig, block_hash};
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

/// The configuration of a [`RadixCache`].
#[derive(Debug, Clone, PartialEq, Eq)]
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

    // --------------------------------------------------------------- insert

    /// Caches `tokens` with their `values` in the default namespace.
    pub fn insert(&mut self, tokens: &[u32], values: &[V]) -> Result<Insertion, Error> {
        self.insert_with(Namespace::NONE, tokens, values, 0)
    }

    /// Caches `tokens` with their `values` in `namespace`; `priority` counts
    /// for [`EvictionPolicy::Priority`] (higher stays longer).
    ///
    /// Only whole pages are cached. Touches the whole path (LRU order, LFU
    /// counts). O(n + d) for n tokens and d nodes on the path, plus the
    /// tokens hashed when events are on.
    pub fn insert_with(
        &mut self,
        namespace: Namespace,
        tokens: &[u32],
        values: &[V],
        priority: i32,
    ) -> Result<Insertion, Error> {
        if values.len() != tokens.len() {
            return Err(Error::ValuesLength { tokens: tokens.len(), values: values.len() });
        }
        if tokens.len() >= u32::MAX as usize || self.nodes.len() >= u32::MAX as usize - 2 {
            return Err(Error::TooLong { tokens: tokens.len() });
        }
        let aligned = tokens.len() - tokens.len() % self.page;
        if aligned == 0 {
            return Ok(Insertion { prefix_len: 0, inserted: 0 });
        }
        let now = self.tick();
        let root = self.root_or_create(namespace);
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let mut node = root;
        let mut pos = 0;
        let mut inserted = 0;
        while pos < aligned {
            match self.find_child(node, &tokens[pos..pos + self.page]) {
                None => {
                    let leaf = self.new_leaf(node, tokens, values, pos, aligned, now);
                    path.push(leaf);
                    inserted = aligned - pos;
                    break;
                }
                Some(child) => {
                    let klen = self.node(child).key.len();
                    let mut l = common_prefix(&self.node(child).key, &tokens[pos..aligned]);
                    l -= l % self.page;
                    node = if l < klen { self.split(child, l) } else { child };
                    pos += l;
                    path.push(node);
                }
            }
        }
        for &n in path.iter().rev() {
            self.touch_node(n, now, priority);
        }
        if self.policy == EvictionPolicy::Fifo && inserted > 0 {
            // A new node: the path now holds the newest creation, bottom-up
            // so that children stay ahead of their parents.
            for &n in path.iter().rev() {
                self.node_mut(n).created = now;
                self.list_unlink(n);
                self.list_push_back(n);
            }
        }
        self.path = path;
        Ok(Insertion { prefix_len: aligned - inserted, inserted })
    }

    fn root_or_create(&mut self, namespace: Namespace) -> NodeId {
        if let Some(&r) = self.roots.get(&namespace) {
            return r;
        }
        let r = self.alloc(Node::new(namespace, None, 0));
        self.roots.insert(namespace, r);
        r
    }

    fn alloc(&mut self, mut node: Node<V>) -> NodeId {
        match self.free.pop() {
            Some(id) => {
                let slot = &mut self.nodes[id.index()];
                node.generation = slot.generation;
                *slot = node;
                id
            }
            None => {
                self.nodes.push(node);
                NodeId::from_index(self.nodes.len() - 1)
            }
        }
    }

    /// Makes the leaf for `tokens[start..end]` under `parent`.
    fn new_leaf(
        &mut self,
        parent: NodeId,
        tokens: &[u32],
        values: &[V],
        start: usize,
        end: usize,
        now: u64,
    ) -> NodeId {
        let p = self.node(parent);
        let namespace = p.namespace;
        let mut leaf = Node::new(namespace, Some(parent), end as u32);
        leaf.key = tokens[start..end].to_vec();
        leaf.first = tokens[start];
        leaf.values = values[start..end].to_vec();
        leaf.created = now;
        let blocks = self.stored_blocks(parent, namespace, tokens, start, end);
        leaf.blocks = blocks;
        let id = self.alloc(leaf);
        self.attach(parent, id);
        self.total += end - start;
        id
    }

    /// Hashes the event blocks whose last token lies in `tokens[start..end]`
    /// and records a `BlockStored` event for them.
    fn stored_blocks(
        &mut self,
        parent: NodeId,
        namespace: Namespace,
        tokens: &[u32],
        start: usize,
        end: usize,
    ) -> Vec<u64> {
        let Some(cfg) = self.events else { return Vec::new() };
        let b = cfg.block_size;
        let (first, last) = (start / b, end / b);
        if first == last {
            return Vec::new();
        }
        let key = cfg.hash_key.unwrap_or([0, 0]);
        // The block before `first` ends at or before `start`: the nearest
        // ancestor owning any block owns it as its last block.
        let mut parent_hash = None;
        if first > 0 {
            let mut a = Some(parent);
            while let Some(id) = a {
                let n = self.node(id);
                if let Some(&h) = n.blocks.last() {
                    parent_hash = Some(h);
                    break;
                }
                a = n.parent;
            }
        }
        let mut hashes = Vec::with_capacity(last - first);
        let mut prev = parent_hash;
        for i in first..last {
            let h = block_hash(key, prev, namespace, &tokens[i * b..(i + 1) * b]);
            hashes.push(h);
            prev = Some(h);
        }
        self.pending.push(CacheEvent::BlockStored {
            block_hashes: hashes.clone(),
            parent_block_hash: parent_hash,
            token_ids: tokens[first * b..last * b].to_vec(),
            block_size: b,
            namespace,
        });
        hashes
    }

    /// Links `child` under `parent` (which may have been a leaf).
    fn attach(&mut self, parent: NodeId, child: NodeId) {
        let first = self.node(child).first;
        let old = self.node_mut(parent).children.insert(first, child);
        self.node_mut(child).next_same_first = old;
    }

    /// Unlinks `child` from its parent's child map.
    fn detach(&mut self, parent: NodeId, child: NodeId) {
        let first = self.node(child).first;
        let next = self.node(child).next_same_first;
        let head = self.node(parent).children.get(&first).copied();
        if head == Some(child) {
            match next {
                Some(n) => {
                    self.node_mut(parent).children.insert(first, n);
                }
                None => {
                    self.node_mut(parent).children.remove(&first);
                }
            }
        } else {
            let mut c = head;
            while let Some(id) = c {
                if self.node(id).next_same_first == Some(child) {
                    self.node_mut(id).next_same_first = next;
                    break;
                }
                c = self.node(id).next_same_first;
            }
        }
        self.node_mut(child).next_same_first = None;
    }

    /// Splits `child`'s edge after `offset` tokens (0 < offset < edge length,
    /// a page boundary) and returns the new upper node. The old node keeps
    /// the lower part, so its id, depth and handles stay valid.
    fn split(&mut self, child: NodeId, offset: usize) -> NodeId {
        let events = self.events;
        let c = self.node_mut(child);
        let parent = c.parent;
        let mut upper = Node::new(c.namespace, parent, c.depth_start() + offset as u32);
        upper.key = c.key[..offset].to_vec();
        upper.first = c.key[0];
        upper.values = c.values.drain(..offset).collect();
        c.key.drain(..offset);
        c.first = c.key[0];
        upper.lock_ref = c.lock_ref;
        upper.stamp = c.stamp;
        upper.created = c.created;
        upper.hits = c.hits;
        upper.priority = c.priority;
        if let Some(cfg) = events {
            let b = cfg.block_size as u32;
            let k = (upper.depth_end / b - upper.depth_start() / b) as usize;
            upper.blocks = c.blocks.drain(..k).collect();
        }
        let in_list = c.in_list;
        let up = self.alloc(upper);
        // The upper node takes the child's place in its parent's map: both
        // edges start with the same page.
        if let Some(p) = parent {
            let first = self.node(up).first;
            let next = self.node(child).next_same_first;
            self.node_mut(child).next_same_first = None;
            self.node_mut(up).next_same_first = next;
            if self.node(p).children.get(&first) == Some(&child) {
                self.node_mut(p).children.insert(first, up);
            } else {
                let mut c = self.node(p).children.get(&first).copied();
                while let Some(id) = c {
                    if self.node(id).next_same_first == Some(child) {
                        self.node_mut(id).next_same_first = Some(up);
                        break;
                    }
                    c = self.node(id).next_same_first;
                }
            }
        }
        let first = self.node(child).first;
        self.node_mut(up).children.insert(first, child);
        self.node_mut(child).parent = Some(up);
        if in_list {
            self.list_insert_after(child, up);
        }
        up
    }

    // ------------------------------------------------------- lock / unlock

    /// Locks the matched path: its nodes are not evicted until
    /// [`unlock`](Self::unlock). Splits the last node when the match ended
    /// inside its edge, so exactly the matched tokens are protected.
    /// Touches the path. O(d) for d nodes on the path.
    pub fn lock(&mut self, handle: &MatchHandle) -> Result<LockId, Error> {
        if handle.epoch != self.epoch {
            return Err(Error::StaleHandle);
        }
        let Some((id, generation)) = handle.node else { return Ok(self.new_lock(None)) };
        let ok = self.nodes.get(id.index()).is_some_and(|n| n.live && n.generation == generation);
        if !ok {
            return Err(Error::StaleHandle);
        }
        let len = handle.len as u32;
        // Splits since the match moved the end into an ancestor, never lower.
        let mut n = id;
        while self.node(n).depth_start() >= len {
            match self.node(n).parent {
                Some(p) => n = p,
                None => return Err(Error::StaleHandle),
            }
        }
        if self.node(n).depth_end < len {
            // Eviction trimmed the matched tokens off this leaf.
            return Err(Error::StaleHandle);
        }
        if self.node(n).depth_end > len {
            let off = (len - self.node(n).depth_start()) as usize;
            n = self.split(n, off);
        }
        let now = self.tick();
        let mut a = Some(n);
        while let Some(id) = a {
            let node = &mut self.nodes[id.index()];
            if node.parent.is_none() {
                break;
            }
            node.lock_ref += 1;
            node.stamp = now;
            node.hits += 1;
            a = node.parent;
            if node.lock_ref == 1 {
                let len = node.key.len();
                self.protected += len;
                if self.policy != EvictionPolicy::Fifo {
                    self.list_unlink(id);
                }
            }
        }
        Ok(self.new_lock(Some(n)))
    }

    fn new_lock(&mut self, node: Option<NodeId>) -> LockId {
        self.held_locks += 1;
        let index = match self.lock_free.pop() {
            Some(i) => i,
            None => {
                self.locks.push(LockSlot { node: None, generation: 0, active: false });
                (self.locks.len() - 1) as u32
            }
        };
        let slot = &mut self.locks[index as usize];
        slot.node = node;
        slot.active = true;
        LockId { index, generation: slot.generation, epoch: self.epoch }
    }

    /// Releases a lock taken by [`lock`](Self::lock); nodes whose count
    /// drops to zero become evictable. Touches the path. O(d).
    pub fn unlock(&mut self, lock: LockId) -> Result<(), Error> {
        if lock.epoch != self.epoch {
            return Err(Error::NotLocked);
        }
        let Some(slot) = self.locks.get_mut(lock.index as usize) else {
            return Err(Error::NotLocked);
        };
        if !slot.active || slot.generation != lock.generation {
            return Err(Error::NotLocked);
        }
        slot.active = false;
        slot.generation = slot.generation.wrapping_add(1);
        let node = slot.node.take();
        self.lock_free.push(lock.index);
        self.held_locks -= 1;
        let now = self.tick();
        let mut a = node;
        while let Some(id) = a {
            let node = &mut self.nodes[id.index()];
            if node.parent.is_none() {
                break;
            }
            node.lock_ref -= 1;
            node.stamp = now;
            a = node.parent;
            if node.lock_ref == 0 {
                let len = node.key.len();
                self.protected -= len;
                self.on_unlocked(id);
            }
        }
        Ok(())
    }

    /// Marks the matched path as used now (LRU order, LFU count) without
    /// locking it. Returns `StaleHandle` like [`lock`](Self::lock).
    pub fn touch(&mut self, handle: &MatchHandle) -> Result<(), Error> {
        if handle.epoch != self.epoch {
            return Err(Error::StaleHandle);
        }
        let Some((id, generation)) = handle.node else { return Ok(()) };
        let ok = self.nodes.get(id.index()).is_some_and(|n| n.live && n.generation == generation);
        if !ok {
            return Err(Error::StaleHandle);
        }
        let now = self.tick();
        let mut a = Some(id);
        while let Some(n) = a {
            if self.node(n).parent.is_none() {
                break;
            }
            self.touch_node(n, now, i32::MIN);
            a = self.node(n).parent;
        }
        Ok(())
    }

    /// Stamps `id` as used at `now`, and moves it in the eviction order.
    /// Callers touch a path bottom-up so the LRU list keeps children first.
    fn touch_node(&mut self, id: NodeId, now: u64, priority: i32) {
        let n = self.node_mut(id);
        if n.parent.is_none() {
            return;
        }
        n.stamp = now;
        n.hits += 1;
        n.priority = n.priority.max(priority);
        if n.lock_ref == 0 {
            self.on_unlocked(id);
        }
    }

    /// Puts an unlocked node at its place in the eviction order. Under FIFO
    /// a node never leaves its place: locking and touching do not move it.
    fn on_unlocked(&mut self, id: NodeId) {
        if self.policy != EvictionPolicy::Fifo {
            self.list_unlink(id);
            self.list_push_back(id);
        }
    }

    // ------------------------------------------------------------ eviction

    /// Evicts unlocked leaves, in the policy's order, until `n_tokens`
    /// tokens (rounded up to whole pages) are freed or nothing evictable is
    /// left; returns the freed values (the caller frees their slots). The
    /// last victim loses only the pages still needed, from its end.
    pub fn evict(&mut self, n_tokens: usize) -> Vec<V> {
        let mut out = Vec::new();
        self.evict_into(n_tokens, &mut out);
        out
    }

    /// Like [`evict`](Self::evict), appending the freed values to `out`.
    /// Per evicted leaf O(1) for LRU, O(log B) for LFU and priority (B =
    /// distinct keys), O(1) plus the locked nodes older than the victim for
    /// FIFO, plus O(freed tokens) to hand back values; never a pass over the
    /// tree.
    pub fn evict_into(&mut self, n_tokens: usize, out: &mut Vec<V>) -> Evicted {
        let mut done = Evicted::default();
        while done.tokens < n_tokens {
            let Some(victim) = self.next_victim() else { break };
            // Start loading the next victim now (LRU order is not memory
            // order): its cache miss overlaps the removal of this one.
            if let Some(next) = self.node(victim).next {
                std::hint::black_box(self.node(next).depth_end);
            }
            // Free only the pages still needed from the end of the last
            // victim's edge: its head stays cached and can still be hit.
            let cut = (n_tokens - done.tokens).div_ceil(self.page).saturating_mul(self.page);
            if cut < self.node(victim).key.len() {
                self.trim_leaf(victim, cut, out);
                done.tokens += cut;
                done.trimmed += 1;
                break;
            }
            done.tokens += self.remove_leaf(victim, out);
            done.leaves += 1;
        }
        done
    }

    /// Frees the last `cut` tokens (whole pages, fewer than the edge holds)
    /// of the unlocked leaf `id`; it keeps its place in the eviction order.
    fn trim_leaf(&mut self, id: NodeId, cut: usize, out: &mut Vec<V>) {
        let events = self.events;
        let n = self.node_mut(id);
        let keep = n.key.len() - cut;
        let old_end = n.depth_end;
        out.extend(n.values.drain(keep..));
        n.key.truncate(keep);
        n.depth_end -= cut as u32;
        let mut removed = Vec::new();
        if let Some(cfg) = events {
            let b = cfg.block_size as u32;
            let k = (old_end / b - n.depth_end / b) as usize;
            removed = n.blocks.split_off(n.blocks.len() - k);
        }
        self.total -= cut;
        self.evicted_tokens += cut as u64;
        if !removed.is_empty() {
            self.pending.push(CacheEvent::BlockRemoved { block_hashes: removed });
        }
    }

    fn next_victim(&mut self) -> Option<NodeId> {
        match self.policy {
            EvictionPolicy::Fifo => {
                // Locks close upwards and children precede their parents,
                // so the first unlocked node is a leaf.
                let mut c = self.lists.first_key_value().map(|(_, e)| e.head);
                while let Some(id) = c {
                    let n = self.node(id);
                    if n.lock_ref == 0 {
                        return Some(id);
                    }
                    c = n.next;
                }
                None
            }
            _ => self.lists.first_key_value().map(|(_, e)| e.head),
        }
    }

    /// Removes the unlocked leaf `id`; returns its token count.
    fn remove_leaf(&mut self, id: NodeId, out: &mut Vec<V>) -> usize {
        self.list_unlink(id);
        let parent = self.node(id).parent;
        if let Some(p) = parent {
            self.detach(p, id);
        }
        let n = self.node_mut(id);
        let len = n.key.len();
        out.append(&mut n.values);
        let blocks = std::mem::take(&mut n.blocks);
        n.key = Vec::new();
        n.values = Vec::new();
        n.children = FxHashMap::default();
        n.live = false;
        n.generation = n.generation.wrapping_add(1);
        n.parent = None;
        self.free.push(id);
        self.total -= len;
        self.evicted_leaves += 1;
        self.evicted_tokens += len as u64;
        if !blocks.is_empty() {
            self.pending.push(CacheEvent::BlockRemoved { block_hashes: blocks });
        }
        if let Some(p) = parent {
            let pn = self.node(p);
            if pn.is_leaf() && pn.parent.is_none() {
                // An empty namespace root goes too.
                let ns = pn.namespace;
                self.roots.remove(&ns);
                let pn = self.node_mut(p);
                pn.live = false;
                pn.generation = pn.generation.wrapping_add(1);
                pn.children = FxHashMap::default();
                self.free.push(p);
            }
        }
        len
    }

    /// Empties the cache and returns every cached value (held locks and
    /// handles become invalid). Records `AllBlocksCleared`.
    pub fn reset(&mut self) -> Vec<V> {
        let mut out = Vec::with_capacity(self.total);
        for n in &mut self.nodes {
            if n.live {
                out.append(&mut n.values);
            }
        }
        let events = self.events;
        let pending = std::mem::take(&mut self.pending);
        let epoch = self.epoch.wrapping_add(1);
        let (leaves, tokens) = (self.evicted_leaves, self.evicted_tokens);
        let clock = self.clock;
        *self =
            RadixCache::build(CacheConfig { page_size: self.page, policy: self.policy, events });
        self.epoch = epoch;
        self.clock = clock;
        self.evicted_leaves = leaves;
        self.evicted_tokens = tokens;
        self.pending = pending;
        if self.events.is_some() {
            self.pending.push(CacheEvent::AllBlocksCleared);
        }
        out
    }

    /// Takes the events recorded since the last call (none unless
    /// [`CacheConfig::events`] is set). Events accumulate until drained.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, CacheEvent> {
        self.pending.drain(..)
    }
}

#[path = "order.rs"]
mod order;
#[path = "validate.rs"]
mod validate;
