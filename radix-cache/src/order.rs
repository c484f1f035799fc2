//! The eviction order: the LRU list and the indexed leaf heap.
//!
//! LRU keeps every unlocked node in an intrusive doubly linked list whose
//! head is always a leaf (see `DESIGN.md`). LFU, FIFO and priority keep the
//! evictable leaves in a binary min-heap whose entries know their node and
//! whose nodes know their position, so a key change or a removal is a sift,
//! never a rebuild or a stale entry.

use super::{EvictionPolicy, HeapEntry, RadixCache};
use crate::node::NodeId;

impl<V: Clone> RadixCache<V> {
    pub(super) fn list_unlink(&mut self, id: NodeId) {
        let n = self.node_mut(id);
        if !n.in_list {
            return;
        }
        n.in_list = false;
        let (prev, next) = (n.prev.take(), n.next.take());
        match prev {
            Some(p) => self.node_mut(p).next = next,
            None => self.head = next,
        }
        match next {
            Some(nx) => self.node_mut(nx).prev = prev,
            None => self.tail = prev,
        }
    }

    pub(super) fn list_push_back(&mut self, id: NodeId) {
        let tail = self.tail;
        let n = self.node_mut(id);
        n.in_list = true;
        n.prev = tail;
        n.next = None;
        match tail {
            Some(t) => self.node_mut(t).next = Some(id),
            None => self.head = Some(id),
        }
        self.tail = Some(id);
    }

    /// Inserts `id` right after `at` (which is in the list).
    pub(super) fn list_insert_after(&mut self, at: NodeId, id: NodeId) {
        let next = self.node(at).next;
        let n = self.node_mut(id);
        n.in_list = true;
        n.prev = Some(at);
        n.next = next;
        self.node_mut(at).next = Some(id);
        match next {
            Some(nx) => self.node_mut(nx).prev = Some(id),
            None => self.tail = Some(id),
        }
    }

    /// The policy's key of a node: smallest is evicted first.
    pub(super) fn heap_key(&self, id: NodeId) -> (u64, u64) {
        let n = self.node(id);
        match self.policy {
            EvictionPolicy::Lfu => (n.hits, n.stamp),
            EvictionPolicy::Fifo => (n.created, n.stamp),
            _ => ((i64::from(n.priority) - i64::from(i32::MIN)) as u64, n.stamp),
        }
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
