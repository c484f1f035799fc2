//! Node storage: typed ids, the node record and the arena helpers.

use std::num::NonZeroU32;

use rustc_hash::FxHashMap;

use crate::Namespace;

/// The id of a node in the cache's arena (an index, with a niche so that
/// `Option<NodeId>` takes four bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(NonZeroU32);

impl NodeId {
    /// The id of arena slot `index`; the arena holds fewer than `u32::MAX`
    /// nodes (the cache refuses to grow past that, see `RadixCache::insert`).
    pub(crate) fn from_index(index: usize) -> NodeId {
        NodeId(NonZeroU32::MIN.saturating_add(index as u32))
    }

    /// The arena slot of this node.
    pub fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// One node of the radix tree: the edge from its parent, the KV handles of
/// the edge's tokens, and the bookkeeping of locking and eviction.
#[derive(Debug, Clone)]
pub(crate) struct Node<V> {
    /// The edge's tokens; empty only for a namespace root. Its length is a
    /// multiple of the page size, and it is never empty for a live non-root.
    pub(crate) key: Vec<u32>,
    /// One value per token of `key`.
    pub(crate) values: Vec<V>,
    /// `key[0]` (0 for a root), kept inline: removing a leaf from its
    /// parent's map then does not touch the edge's allocation.
    pub(crate) first: u32,
    /// `None` only for a namespace root.
    pub(crate) parent: Option<NodeId>,
    /// Children by the first token of their edge; children whose first pages
    /// share a first token (page size > 1) are chained by `next_same_first`.
    pub(crate) children: FxHashMap<u32, NodeId>,
    /// The next sibling with the same first token, see `children`.
    pub(crate) next_same_first: Option<NodeId>,
    /// Tokens from the root to the end of this edge. A split keeps it (it
    /// creates the *upper* part as a new node); only eviction trimming the
    /// tail of a leaf lowers it.
    pub(crate) depth_end: u32,
    /// Locks held on this node or a descendant: a node's count is at least
    /// the sum over its children, so the locked nodes are closed upwards.
    pub(crate) lock_ref: u32,
    /// The namespace of the tree the node is in.
    pub(crate) namespace: Namespace,
    /// Bumped when the slot is freed, so stale handles are detected.
    pub(crate) generation: u32,
    /// Whether the slot holds a node (false on the free list).
    pub(crate) live: bool,
    /// Last access (the cache's logical clock). A parent's stamp is at least
    /// each child's: every touch touches the whole path.
    pub(crate) stamp: u64,
    /// The creation time of the newest node in the subtree (a leaf's own,
    /// unless it lost its children; copied to the upper half of a split):
    /// FIFO's order. A parent's is at least each child's.
    pub(crate) created: u64,
    /// Touches (LFU count); a parent's count is at least each child's.
    pub(crate) hits: u64,
    /// The highest priority of the inserts that touched the node.
    pub(crate) priority: i32,
    /// Eviction-list links and bucket; meaningful only when `in_list`.
    pub(crate) prev: Option<NodeId>,
    pub(crate) next: Option<NodeId>,
    pub(crate) bucket: u64,
    /// Whether the node is in the eviction lists (exactly: live, non-root,
    /// and unlocked under LRU, LFU or priority, locked or not under FIFO).
    pub(crate) in_list: bool,
    /// Hashes of the event blocks whose last token lies on this edge.
    pub(crate) blocks: Vec<u64>,
}

impl<V> Node<V> {
    pub(crate) fn new(namespace: Namespace, parent: Option<NodeId>, depth_end: u32) -> Node<V> {
        Node {
            key: Vec::new(),
            values: Vec::new(),
            first: 0,
            parent,
            children: FxHashMap::default(),
            next_same_first: None,
            depth_end,
            lock_ref: 0,
            namespace,
            generation: 0,
            live: true,
            stamp: 0,
            created: 0,
            hits: 0,
            priority: i32::MIN,
            prev: None,
            next: None,
            bucket: 0,
            in_list: false,
            blocks: Vec::new(),
        }
    }

    /// Tokens from the root to the start of this edge.
    pub(crate) fn depth_start(&self) -> u32 {
        self.depth_end - self.key.len() as u32
    }

    pub(crate) fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }
}

/// The length of the common prefix of `a` and `b`.
pub(crate) fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    // Compare eight tokens at a time; the remainder one by one.
    while i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}
