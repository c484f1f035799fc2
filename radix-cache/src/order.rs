//! The eviction order: the LRU list and the indexed leaf heap.
//!
//! LRU, LFU and priority keep every unlocked node in intrusive doubly linked
//! lists, one per value of the policy's primary key (a single list for LRU,
//! one per hit count for LFU, one per priority), ordered so that the head of
//! the first list is always a leaf (see `DESIGN.md`). FIFO keeps the
//! evictable leaves in a binary min-heap whose entries know their node and
//! whose nodes know their position, so a removal is a sift, never a rebuild
//! or a stale entry.

use super::{Ends, EvictionPolicy, HeapEntry, RadixCache};
use crate::node::NodeId;

impl<V: Clone> RadixCache<V> {
    /// The bucket a node belongs in under the list policies.
    pub(super) fn bucket_key(&self, id: NodeId) -> u64 {
        let n = self.node(id);
        match self.policy {
            EvictionPolicy::Lfu => n.hits,
            EvictionPolicy::Priority => (i64::from(n.priority) - i64::from(i32::MIN)) as u64,
            _ => 0,
        }
    }

    /// Takes `id` out of its bucket, if it is listed. O(log B) for B
    /// buckets (one for LRU).
    pub(super) fn list_unlink(&mut self, id: NodeId) {
        let n = self.node_mut(id);
        if !n.in_list {
            return;
        }
        n.in_list = false;
        let bucket = n.bucket;
        let (prev, next) = (n.prev.take(), n.next.take());
        if let Some(p) = prev {
            self.node_mut(p).next = next;
        }
        if let Some(nx) = next {
            self.node_mut(nx).prev = prev;
        }
        if prev.is_none() || next.is_none() {
            // A listed node's bucket always exists (it holds the node).
            let Some(mut e) = self.lists.get(&bucket).copied() else { return };
            match (prev, next) {
                (None, None) => {
                    self.lists.remove(&bucket);
                    return;
                }
                (None, Some(nx)) => e.head = nx,
                (Some(p), None) => e.tail = p,
                (Some(_), Some(_)) => {}
            }
            self.lists.insert(bucket, e);
        }
    }

    /// Appends `id` (not listed) to the back of its bucket.
    pub(super) fn list_push_back(&mut self, id: NodeId) {
        let bucket = self.bucket_key(id);
        let ends = self.lists.get(&bucket).copied();
        let n = self.node_mut(id);
        n.in_list = true;
        n.bucket = bucket;
        n.next = None;
        n.prev = ends.map(|e| e.tail);
        match ends {
            Some(e) => {
                self.node_mut(e.tail).next = Some(id);
                self.lists.insert(bucket, Ends { head: e.head, tail: id });
            }
            None => {
                self.lists.insert(bucket, Ends { head: id, tail: id });
            }
        }
    }

    /// Inserts `id` right after `at` (which is listed), in `at`'s bucket.
    pub(super) fn list_insert_after(&mut self, at: NodeId, id: NodeId) {
        let (next, bucket) = (self.node(at).next, self.node(at).bucket);
        let n = self.node_mut(id);
        n.in_list = true;
        n.bucket = bucket;
        n.prev = Some(at);
        n.next = next;
        self.node_mut(at).next = Some(id);
        match next {
            Some(nx) => self.node_mut(nx).prev = Some(id),
            None => {
                if let Some(e) = self.lists.get_mut(&bucket) {
                    e.tail = id;
                }
            }
        }
    }

    /// The FIFO key of a node: smallest is evicted first.
    pub(super) fn heap_key(&self, id: NodeId) -> (u64, u64) {
        let n = self.node(id);
        (n.created, n.stamp)
    }

    /// Takes `id` out of the heap, if it is there. O(log L).
    pub(super) fn heap_invalidate(&mut self, id: NodeId) {
        let Some(pos) = self.node_mut(id).heap_pos.take() else { return };
        let pos = pos as usize;
        let last = self.heap.len() - 1;
        self.heap.swap(pos, last);
        self.heap.pop();
        if pos < self.heap.len() {
            let moved = self.heap[pos].node;
            self.node_mut(moved).heap_pos = Some(pos as u32);
            self.sift(pos);
        }
    }

    /// Puts `id` in the heap with its current key, or moves it there if its
    /// key changed. O(log L).
    pub(super) fn heap_push(&mut self, id: NodeId) {
        let key = self.heap_key(id);
        let pos = match self.node(id).heap_pos {
            Some(p) => {
                self.heap[p as usize].key = key;
                p as usize
            }
            None => {
                self.heap.push(HeapEntry { key, node: id });
                let p = self.heap.len() - 1;
                self.node_mut(id).heap_pos = Some(p as u32);
                p
            }
        };
        self.sift(pos);
    }

    /// Restores the heap order around `pos` (up, then down).
    fn sift(&mut self, mut pos: usize) {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.heap[parent].key <= self.heap[pos].key {
                break;
            }
            self.heap_swap(parent, pos);
            pos = parent;
        }
        loop {
            let (l, r) = (2 * pos + 1, 2 * pos + 2);
            let mut least = pos;
            if l < self.heap.len() && self.heap[l].key < self.heap[least].key {
                least = l;
            }
            if r < self.heap.len() && self.heap[r].key < self.heap[least].key {
                least = r;
            }
            if least == pos {
                break;
            }
            self.heap_swap(pos, least);
            pos = least;
        }
    }

    fn heap_swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        let (na, nb) = (self.heap[a].node, self.heap[b].node);
        self.node_mut(na).heap_pos = Some(a as u32);
        self.node_mut(nb).heap_pos = Some(b as u32);
    }
}
