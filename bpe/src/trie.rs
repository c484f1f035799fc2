//! The byte trie of the backtracking encoder: longest-match lookups and the
//! prefix links its table build walks.
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
    pub(crate) nodes: Vec<(u32, u32)>,
    /// Edges sorted by label within a node: `child << 8 | label`
    /// (so node ids stay below 2^24).
    edges: Vec<u32>,
    /// Root children by byte, for the first step.
    root: Vec<u32>,
    /// Depth-two nodes by their two bytes (`b0 << 8 | b1`), for the second
    /// step: 256 KiB that save a search in the widest levels.
    level2: Vec<u32>,
    /// Bit `n` is set when node `n` spells one of the tokens the trie was
    /// built from (kept when `nodes[n].1` is later cleared).
    word: Vec<u64>,
}

/// What the table build needs besides the trie: for every node, the nearest
/// proper ancestor spelling a token (`NONE` at the top), and the node of
/// every token.
#[derive(Debug)]
pub(crate) struct Links {
    pub(crate) up: Vec<u32>,
    pub(crate) node_of: Vec<u32>,
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
    /// Builds the trie breadth-first from the tokens sorted by bytes: a node
    /// is a run of sorted tokens sharing a prefix, its children the sub-runs
    /// by the next byte. `ids` must have distinct bytes; `n_ids` bounds them.
    /// `None` past `MAX_NODES` nodes.
    ///
    /// The sort compares 8-byte keys (full strings only on ties) and the
    /// sorted bytes are copied into one buffer, so the breadth-first passes
    /// read memory in order: this build is part of the first long-piece
    /// encode and must stay in the tens of milliseconds.
    pub(crate) fn build(tokens: &Tokens, ids: &[u32], n_ids: usize) -> Option<(Trie, Links)> {
        let mut keyed: Vec<(u64, u32)> =
            ids.iter().map(|&id| (prefix_key(tokens.bytes(id)), id)).collect();
        keyed.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| tokens.bytes(a.1).cmp(tokens.bytes(b.1)))
        });
        let mut buf = Vec::new();
        let mut off = Vec::with_capacity(keyed.len() + 1);
        for &(_, id) in &keyed {
            off.push(buf.len() as u32);
            buf.extend_from_slice(tokens.bytes(id));
        }
        off.push(buf.len() as u32);
        let bytes = |i: usize| &buf[off[i] as usize..off[i + 1] as usize];

        let mut trie = Trie::default();
        let mut links = Links { up: Vec::new(), node_of: vec![NONE; n_ids] };
        // (run start, run end, depth) per node, in node order.
        let mut queue: Vec<(u32, u32, u32)> = vec![(0, keyed.len() as u32, 0)];
        links.up.push(NONE);
        let mut q = 0;
        while q < queue.len() {
            let (lo, hi, d) = queue[q];
            let (mut i, hi, d) = (lo as usize, hi as usize, d as usize);
            // The shortest string sorts first; it ends here when its length is d.
            let ends_here = i < hi && bytes(i).len() == d;
            let node = trie.nodes.len();
            if trie.word.len() <= node / 64 {
                trie.word.push(0);
            }
            let token = if ends_here { keyed[i].1 } else { NONE };
            if ends_here {
                trie.word[node / 64] |= 1 << (node % 64);
                links.node_of[token as usize] = node as u32;
                i += 1;
            }
            trie.nodes.push((trie.edges.len() as u32, token));
            let child_up = if ends_here { node as u32 } else { links.up[node] };
            while i < hi {
                let b = bytes(i)[d];
                let mut j = i + 1;
                while j < hi && bytes(j)[d] == b {
                    j += 1;
                }
                if queue.len() >= MAX_NODES {
                    return None;
                }
                trie.edges.push((queue.len() as u32) << 8 | u32::from(b));
                queue.push((i as u32, j as u32, d as u32 + 1));
                links.up.push(child_up);
                i = j;
            }
            q += 1;
        }
        trie.nodes.push((trie.edges.len() as u32, NONE));
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
        Some((trie, links))
    }

    /// The number of nodes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.nodes.len() - 1
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

    /// Whether node `n` spells one of the tokens the trie was built from.
    #[inline]
    pub(crate) fn is_word(&self, n: u32) -> bool {
        self.word[n as usize / 64] & (1 << (n % 64)) != 0
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

    /// The longest token (of those left in `nodes`) that is a prefix of
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
            + self.word.capacity() * 8
    }
}
