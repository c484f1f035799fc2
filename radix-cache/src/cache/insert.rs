//! Insertion: walking, splitting edges at page boundaries, new leaves, and
//! the `BlockStored` events of the blocks a new leaf completes.

use super::{EvictionPolicy, Insertion, RadixCache};
use crate::events::{CacheEvent, block_hash};
use crate::node::{Node, NodeId, common_prefix};
use crate::{Error, Namespace};

impl<V: Clone> RadixCache<V> {
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

    pub(super) fn alloc(&mut self, mut node: Node<V>) -> NodeId {
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
    pub(super) fn detach(&mut self, parent: NodeId, child: NodeId) {
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
    pub(super) fn split(&mut self, child: NodeId, offset: usize) -> NodeId {
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
}
