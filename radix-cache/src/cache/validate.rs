//! An O(nodes) check of every invariant of the cache, for tests.

use rustc_hash::FxHashMap;

use super::{EvictionPolicy, RadixCache};
use crate::node::NodeId;

impl<V: Clone> RadixCache<V> {
    /// Checks every structural and accounting invariant (see `DESIGN.md`)
    /// and describes the first one broken. O(nodes + locks); meant for tests.
    pub fn validate(&self) -> Result<(), String> {
        let mut total = 0;
        let mut protected = 0;
        let mut expected_locks: FxHashMap<NodeId, u32> = FxHashMap::default();
        for slot in self.locks.iter().filter(|s| s.active) {
            let mut a = slot.node;
            while let Some(id) = a {
                let n = self.node(id);
                if !n.live {
                    return Err(format!("lock on dead node {id:?}"));
                }
                if n.parent.is_some() {
                    *expected_locks.entry(id).or_default() += 1;
                }
                a = n.parent;
            }
        }
        let held = self.locks.iter().filter(|s| s.active).count();
        if held != self.held_locks {
            return Err(format!("held_locks {} but {held} active slots", self.held_locks));
        }
        // The nodes the lists must hold: unlocked ones, or all under FIFO.
        let mut listed = 0usize;
        for (i, n) in self.nodes.iter().enumerate() {
            let id = NodeId::from_index(i);
            if !n.live {
                if !self.free.contains(&id) {
                    return Err(format!("dead node {id:?} not on the free list"));
                }
                continue;
            }
            for (&first, &head) in &n.children {
                let mut c = Some(head);
                while let Some(cid) = c {
                    let cn = self.node(cid);
                    if !cn.live || cn.parent != Some(id) || cn.key.first() != Some(&first) {
                        return Err(format!("child map of {id:?} is wrong at {cid:?}"));
                    }
                    c = cn.next_same_first;
                }
            }
            let Some(p) = n.parent else {
                if self.roots.get(&n.namespace) != Some(&id) {
                    return Err(format!("root {id:?} not registered"));
                }
                if n.children.is_empty() {
                    return Err(format!("empty root {id:?} kept"));
                }
                continue;
            };
            let pn = self.node(p);
            if n.key.is_empty() || n.key.len() % self.page != 0 || n.values.len() != n.key.len() {
                return Err(format!("node {id:?}: bad edge or values length"));
            }
            if !pn.live || n.depth_end != pn.depth_end + n.key.len() as u32 {
                return Err(format!("node {id:?}: bad parent or depth"));
            }
            if pn.namespace != n.namespace {
                return Err(format!("node {id:?}: namespace differs from its parent's"));
            }
            if n.first != n.key[0] {
                return Err(format!("node {id:?}: stale first token"));
            }
            let mut c = pn.children.get(&n.first).copied();
            let mut found = false;
            while let Some(cid) = c {
                found |= cid == id;
                c = self.node(cid).next_same_first;
            }
            if !found {
                return Err(format!("node {id:?} missing from its parent's map"));
            }
            let want = expected_locks.get(&id).copied().unwrap_or(0);
            if n.lock_ref != want {
                return Err(format!("node {id:?}: lock_ref {} but {want} locks", n.lock_ref));
            }
            total += n.key.len();
            if n.lock_ref == 0 || self.policy == EvictionPolicy::Fifo {
                listed += 1;
            }
            let fifo = self.policy == EvictionPolicy::Fifo;
            if fifo && pn.parent.is_some() && pn.created < n.created {
                return Err(format!("node {id:?} created after its parent's newest"));
            }
            if n.lock_ref > 0 {
                protected += n.key.len();
                if n.in_list != (self.policy == EvictionPolicy::Fifo) {
                    return Err(format!("locked node {id:?}: list membership wrong"));
                }
            } else {
                if !n.in_list {
                    return Err(format!("unlocked node {id:?} not in the eviction lists"));
                }
            }
            if pn.parent.is_some() && pn.stamp < n.stamp {
                return Err(format!("node {id:?} touched after its parent"));
            }
        }
        if total != self.total || protected != self.protected {
            return Err(format!(
                "total {} / protected {} but recomputed {total} / {protected}",
                self.total, self.protected
            ));
        }
        // Buckets in key order, each in order of the policy's time
        // (stamp; creation for FIFO); every node is listed after all of
        // its children.
        let mut seen = 0usize;
        let mut pos: FxHashMap<NodeId, usize> = FxHashMap::default();
        for (&bucket, ends) in &self.lists {
            let mut c = Some(ends.head);
            let mut prev = None;
            let mut last_stamp = 0;
            while let Some(id) = c {
                let n = self.node(id);
                if n.prev != prev || !n.in_list || n.bucket != bucket {
                    return Err(format!("list links broken at {id:?}"));
                }
                let time = match self.policy {
                    EvictionPolicy::Fifo => n.created,
                    _ => n.stamp,
                };
                if n.bucket != self.bucket_key(id) || time < last_stamp {
                    return Err(format!("node {id:?} is in the wrong bucket or place"));
                }
                last_stamp = time;
                pos.insert(id, seen);
                seen += 1;
                prev = c;
                c = n.next;
            }
            if prev != Some(ends.tail) {
                return Err(format!("bucket {bucket}: tail is wrong"));
            }
        }
        if seen != listed {
            return Err(format!("the lists hold {seen} nodes, {listed} expected"));
        }
        for (&id, &at) in &pos {
            if let Some(p) = self.node(id).parent
                && let Some(&pat) = pos.get(&p)
                && pat < at
            {
                return Err(format!("{p:?} is listed before its child {id:?}"));
            }
        }
        Ok(())
    }
}
