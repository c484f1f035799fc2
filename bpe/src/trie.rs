//! The byte trie of the backtracking encoder: longest-match lookups.
//!
//! Children are stored contiguously: a node's edge range and token sit side
//! by side in `nodes`, and an edge packs its label with its child, so a step
//! touches few cache lines. The first two levels are direct tables.

use crate::vocab::Tokens;

/// "No token" / "no node".
pub(crate) const NONE: u32 = u32::MAX;

/// Trie node ids must fit the 24 bits of an edge.
const MAX_NODES: usize = 1 << 24;

/// A byte trie over tokens with children stored contiguously.
#[derive(Debug, Default)]
pub(crate) struct Trie {
    /// Per node: the index of its first edge in `edges` and the token ending
    /// at it (or `NONE`). Node `n`'s edges are
    /// `edges[nodes[n].0..nodes[n + 1].0]`; a last sentinel entry closes the
    /// range of the last node. Nodes are numbered breadth-first, so a parent
    /// comes before its children.
    nodes: Vec<(u32, u32)>,
    /// Edges sorted by label within a node: `child << 8 | label`
    /// (so node ids stay below 2^24).
    edges: Vec<u32>,
    /// Root children by byte, for the first step.
    root: Vec<u32>,
    /// Depth-two nodes by their two bytes (`b0 << 8 | b1`), for the second
    /// step: 256 KiB that save a search in the widest levels.
    level2: Vec<u32>,
}

/// The first eight bytes of `b` as a big-endian number, zero-padded: a sort
/// key whose order agrees with the byte order of the strings (ties need a
/// full comparison).
#[inline]
fn prefix_key(b: &[u8]) -> u64 {
    let mut k = [0u8; 8];
    let m = b.len().min(8);
    k[..m].copy_from_slice(&b[..m]);
    u64::from_be_bytes(k)
}

impl Trie {
    /// Builds the trie from the tokens sorted by bytes, in one pass: each
    /// token adds the nodes past its longest common prefix with the previous
    /// one (nodes are numbered in depth-first preorder, so a parent comes
    /// before its children, and a node's children are created in label
    /// order); a second pass lays the edges out contiguously per node.
    /// `ids` must have distinct bytes. `None` past `MAX_NODES` nodes.
    ///
    /// The sort compares 8-byte keys (full strings only on ties): this build
    /// is part of the first long-piece encode and must stay in the
    /// milliseconds.
    pub(crate) fn build(tokens: &Tokens, ids: &[u32]) -> Option<Trie> {
        // (first 8 bytes, length, id), sorted by key, then ties (tokens
        // sharing 8 bytes, or zero bytes against padding) by full bytes. The
        // keys are read in id order (sequential memory); after the sort
        // only tokens longer than 8 bytes are read again.
        let mut keyed: Vec<(u64, u32, u32)> = ids
            .iter()
            .map(|&id| {
                let b = tokens.bytes(id);
                (prefix_key(b), b.len() as u32, id)
            })
            .collect();
        keyed.sort_unstable();
        let mut i = 0;
        while i < keyed.len() {
            let mut j = i + 1;
            while j < keyed.len() && keyed[j].0 == keyed[i].0 {
                j += 1;
            }
            if j - i > 1 {
                keyed[i..j].sort_unstable_by(|a, b| tokens.bytes(a.2).cmp(tokens.bytes(b.2)));
            }
            i = j;
        }
        // Per node: its token, parent and incoming label; `path[d]` is the
        // node at depth `d` on the previous token's path.
        let most = 1 + keyed.iter().map(|e| e.1 as usize).sum::<usize>();
        let mut token = Vec::with_capacity(most);
        let mut parent = Vec::with_capacity(most);
        let mut label = Vec::with_capacity(most);
        token.push(NONE);
        parent.push(NONE);
        label.push(0u8);
        let mut path = vec![0u32];
        let mut prev = (0u64, 0u32, NONE);
        for &(k, len, id) in &keyed {
            let long = |len: u32| len > 8;
            let lcp = if k != prev.0 || !long(len) || !long(prev.1) {
                ((k ^ prev.0).leading_zeros() / 8).min(len).min(prev.1) as usize
            } else {
                let (s, p) = (tokens.bytes(id), tokens.bytes(prev.2));
                s.iter().zip(p).take_while(|(a, b)| a == b).count()
            };
            path.truncate(lcp + 1);
            let kb = k.to_be_bytes();
            #[allow(clippy::needless_range_loop)] // bytes past 8 come from elsewhere
            for d in lcp..len as usize {
                if token.len() >= MAX_NODES {
                    return None;
                }
                let v = token.len() as u32;
                token.push(NONE);
                parent.push(path[path.len() - 1]);
                label.push(if d < 8 { kb[d] } else { tokens.bytes(id)[d] });
                path.push(v);
            }
            token[path[path.len() - 1] as usize] = id;
            prev = (k, len, id);
        }
        let mut start = vec![0u32; token.len() + 1];
        for &p in &parent[1..] {
            start[p as usize + 1] += 1;
        }
        for v in 1..start.len() {
            start[v] += start[v - 1];
        }
        let mut trie = Trie {
            nodes: start.iter().zip(token.iter().chain([&NONE])).map(|(&s, &t)| (s, t)).collect(),
            edges: vec![0; token.len() - 1],
            ..Trie::default()
        };
        for v in 1..token.len() {
            let p = parent[v] as usize;
            trie.edges[start[p] as usize] = (v as u32) << 8 | u32::from(label[v]);
            start[p] += 1;
        }
        let mut root = vec![NONE; 256];
        for &e in trie.node_edges(0) {
            root[(e & 0xFF) as usize] = e >> 8;
        }
        let mut level2 = vec![NONE; 1 << 16];
        for (b0, &n) in root.iter().enumerate() {
            if n == NONE {
                continue;
            }
            for &e in trie.node_edges(n) {
                level2[b0 << 8 | (e & 0xFF) as usize] = e >> 8;
            }
        }
        trie.root = root;
        trie.level2 = level2;
        Some(trie)
    }

    /// The edges of node `n`.
    #[inline]
    pub(crate) fn node_edges(&self, n: u32) -> &[u32] {
        let lo = self.nodes[n as usize].0 as usize;
        let hi = self.nodes[n as usize + 1].0 as usize;
        &self.edges[lo..hi]
    }

    /// The token ending at node `n`, or `NONE`.
    #[inline]
    pub(crate) fn token(&self, n: u32) -> u32 {
        self.nodes[n as usize].1
    }

    /// The child of node `n` by byte `b`, or `NONE`.
    #[inline]
    pub(crate) fn child(&self, n: u32, b: u8) -> u32 {
        if n == 0 {
            return self.root[b as usize];
        }
        let edges = self.node_edges(n);
        let k = if edges.len() <= 8 {
            edges.iter().position(|&e| e as u8 == b)
        } else {
            edges.binary_search_by_key(&b, |&e| e as u8).ok()
        };
        k.map_or(NONE, |k| edges[k] >> 8)
    }

    /// The longest token that is a prefix of
    /// `bytes`, or `NONE`.
    #[inline]
    pub(crate) fn longest(&self, bytes: &[u8]) -> u32 {
        let (n1, n2) = match *bytes {
            [] => return NONE,
            [b0] => (self.root[b0 as usize], NONE),
            [b0, b1, ..] => (self.root[b0 as usize], self.level2[(b0 as usize) << 8 | b1 as usize]),
        };
        if n1 == NONE {
            return NONE;
        }
        let mut best = self.token(n1);
        if n2 == NONE {
            return best;
        }
        let mut n = n2;
        if self.token(n) != NONE {
            best = self.token(n);
        }
        for &b in &bytes[2..] {
            n = self.child(n, b);
            if n == NONE {
                break;
            }
            let t = self.token(n);
            if t != NONE {
                best = t;
            }
        }
        best
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * 8
            + self.edges.capacity() * 4
            + self.root.capacity() * 4
            + self.level2.capacity() * 4
    }
}
