//! Eviction and reset: removing unlocked leaves in the policy's order,
//! trimming the last victim, and the `BlockRemoved` / `AllBlocksCleared`
//! events.

use rustc_hash::FxHashMap;

use super::{CacheConfig, Evicted, EvictionPolicy, RadixCache};
use crate::events::CacheEvent;
use crate::node::NodeId;

impl<V: Clone> RadixCache<V> {
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
        *self = RadixCache::build(
            CacheConfig::default()
                .with_page_size(self.page)
                .with_policy(self.policy)
                .with_events(events),
        );
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
