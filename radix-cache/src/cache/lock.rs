//! Locks and touches: protecting a matched path, releasing it, and moving
//! nodes in the eviction order when they are used.

use super::{EvictionPolicy, LockId, LockSlot, MatchHandle, RadixCache};
use crate::Error;
use crate::node::NodeId;

impl<V: Clone> RadixCache<V> {
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
    pub(super) fn touch_node(&mut self, id: NodeId, now: u64, priority: i32) {
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
    pub(super) fn on_unlocked(&mut self, id: NodeId) {
        if self.policy != EvictionPolicy::Fifo {
            self.list_unlink(id);
            self.list_push_back(id);
        }
    }
}
