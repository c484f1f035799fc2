//! The eviction order: intrusive lists of nodes.
//!
//! LRU, LFU and priority keep every unlocked node in intrusive doubly linked
//! lists, one per value of the policy's primary key (a single list for LRU,
//! one per hit count for LFU, one per priority), ordered so that the head of
//! the first list is always a leaf (see `DESIGN.md`). FIFO keeps every node,
//! locked or not, in one list ordered by the newest creation in its subtree,
//! children first, so its first unlocked node is the leaf to evict.

use super::{Ends, EvictionPolicy, RadixCache};
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
}
