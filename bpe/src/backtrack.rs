//! The backtracking encoder: linear-time BPE for byte-symbol vocabularies.
//!
//! See `DESIGN.md` for the argument. In short: an encoding is valid exactly
//! when every adjacent pair of its tokens is *compatible* (BPE of the two
//! tokens' bytes gives back the two tokens). The encoder appends the longest
//! token that matches at the current position; when it is not compatible with
//! the previous token, it tries the next shorter prefix token; when none is
//! left, the position is marked dead in a bitfield and the previous token is
//! replaced by its next shorter prefix. A dead position is never tried again,
//! which bounds the work by the number of (position, candidate) pairs.
//!
//! The compatibility test walks the right spine of the left token and the
//! left spine of the right token backwards in merge order (a token's spine is
//! the chain of canonical splits down to a byte), checking at each step
//! whether the pair at the boundary would have merged before either side was
//! consumed: a handful of table lookups.

use crate::model::{Model, Rules, Symbols};
use crate::vocab::{Kind, Tokens};

/// "No token" / "no node".
pub(crate) const NONE: u32 = u32::MAX;

/// The trie's root node.
pub(crate) const ROOT: u32 = 0;

/// A token's canonical split and creation priority, side by side so that
/// the compatibility walk touches one cache line per step.
#[derive(Debug, Clone, Copy)]
struct Meta {
    left: u32,
    right: u32,
    /// The priority (plus one) of the merge that creates the token; 0 for
    /// single bytes. Invariant: a token's priority exceeds its parts'.
    created: u32,
}

/// Tables of the backtracking encoder.
#[derive(Debug)]
pub(crate) struct Backtracker {
    /// Canonical split `(left, right)` and creation priority of every valid
    /// token; `(t, t)` for a single byte; `(NONE, NONE)` for tokens BPE never
    /// produces.
    split: Vec<Meta>,
    /// The longest valid token that is a proper prefix of each token.
    next_prefix: Vec<u32>,
    /// tiktoken rules between valid tokens, filled once the splits are
    /// known (during the split search the byte map answers instead).
    pairs: PairTable,
    trie: Trie,
    /// Distinguishes backtrackers in the thread-local compatibility cache
    /// (unique per build, never reused).
    id: u64,
}

/// Log2 of the entries of the compatibility cache (128 KiB per thread).
const CACHE_BITS: u32 = 14;

/// The source of [`Backtracker::id`]s.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Compatibility answers of one backtracker: `(a << 32 | b) << 1 | answer`
/// per slot, `u64::MAX` when empty.
#[derive(Debug, Default)]
struct PairCache {
    owner: u64,
    slots: Vec<u64>,
}

thread_local! {
    static PAIR_CACHE: std::cell::RefCell<PairCache> = std::cell::RefCell::new(PairCache::default());
}

/// A byte trie over the valid tokens with children stored contiguously.
///
/// Layout for few cache misses per step: a node's edge range and token sit
/// side by side in `nodes`, and an edge packs its label with its child.
#[derive(Debug, Default)]
struct Trie {
    /// Per node: the index of its first edge in `edges` and the valid token
    /// ending at it (or `NONE`). Node `n`'s edges are
    /// `edges[nodes[n].0..nodes[n + 1].0]`; a last sentinel entry closes the
    /// range of the last node.
    nodes: Vec<(u32, u32)>,
    /// Edges sorted by label within a node: `child << 8 | label`
    /// (so node ids stay below 2^24).
    edges: Vec<u32>,
    /// Root children by byte, for the first step.
    root: Vec<u32>,
    /// Depth-two nodes by their two bytes (`b0 << 8 | b1`), for the second
    /// step: 256 KiB that save a search in the widest levels.
    level2: Vec<u32>,
    /// Bit `n` is set when node `n` spells an ordinary token, valid or not
    /// (the whole-piece shortcut of the incremental encoders needs both).
    word: Vec<u64>,
}

/// Trie node ids must fit the 24 bits of an edge.
const MAX_NODES: usize = 1 << 24;

impl Trie {
    /// Builds the trie breadth-first from the tokens sorted by bytes: a
    /// node is a run of sorted tokens sharing a prefix, its children the
    /// sub-runs by the next byte. Linear in the total token length after the
    /// sort; `ids` must have distinct bytes. `None` past `MAX_NODES` nodes.
    fn build(tokens: &Tokens, ids: &[u32]) -> Option<Trie> {
        let mut ids = ids.to_vec();
        ids.sort_unstable_by(|&a, &b| tokens.bytes(a).cmp(tokens.bytes(b)));
        let mut trie = Trie::default();
        // (run start, run end, depth) per node, in node order.
        let mut queue: Vec<(u32, u32, u32)> = vec![(0, ids.len() as u32, 0)];
        let mut q = 0;
        while q < queue.len() {
            let (lo, hi, d) = queue[q];
            let (mut i, hi, d) = (lo as usize, hi as usize, d as usize);
            // The shortest string sorts first; it ends here when its length is d.
            let ends_here = i < hi && tokens.token_len(ids[i]) == d;
            let node = trie.nodes.len();
            if trie.word.len() <= node / 64 {
                trie.word.push(0);
            }
            if ends_here {
                trie.word[node / 64] |= 1 << (node % 64);
            }
            trie.nodes.push((trie.edges.len() as u32, if ends_here { ids[i] } else { NONE }));
            if ends_here {
                i += 1;
            }
            while i < hi {
                let b = tokens.bytes(ids[i])[d];
                let mut j = i + 1;
                while j < hi && tokens.bytes(ids[j])[d] == b {
                    j += 1;
                }
                if queue.len() >= MAX_NODES {
                    return None;
                }
                trie.edges.push((queue.len() as u32) << 8 | u32::from(b));
                queue.push((i as u32, j as u32, d as u32 + 1));
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
        Some(trie)
    }

    /// The edges of node `n`.
    #[inline]
    fn node_edges(&self, n: u32) -> &[u32] {
        let lo = self.nodes[n as usize].0 as usize;
        let hi = self.nodes[n as usize + 1].0 as usize;
        &self.edges[lo..hi]
    }

    /// The valid token ending at node `n`, or `NONE`.
    #[inline]
    fn token(&self, n: u32) -> u32 {
        self.nodes[n as usize].1
    }

    /// Calls `f` with every token that is a proper prefix of `bytes`.
    #[inline]
    fn prefixes(&self, bytes: &[u8], mut f: impl FnMut(u32, usize) -> bool) {
        let mut n = 0u32;
        for (i, &b) in bytes[..bytes.len().saturating_sub(1)].iter().enumerate() {
            n = self.child(n, b);
            if n == NONE {
                return;
            }
            let t = self.token(n);
            if t != NONE && f(t, i + 1) {
                return;
            }
        }
    }

    #[inline]
    fn child(&self, n: u32, b: u8) -> u32 {
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

    /// The longest valid token that is a prefix of `bytes`.
    #[inline]
    fn longest(&self, bytes: &[u8]) -> u32 {
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
}

impl Backtracker {
    /// The child of trie node `n` by byte `b`, or [`NONE`].
    #[inline]
    pub(crate) fn step(&self, n: u32, b: u8) -> u32 {
        self.trie.child(n, b)
    }

    /// The valid token spelled by trie node `n`, or [`NONE`].
    #[inline]
    pub(crate) fn node_token(&self, n: u32) -> u32 {
        self.trie.token(n)
    }

    /// Whether trie node `n` spells an ordinary token (valid or not).
    #[inline]
    pub(crate) fn node_is_word(&self, n: u32) -> bool {
        self.trie.word[n as usize / 64] & (1 << (n % 64)) != 0
    }

    /// Whether BPE of `bytes(a) ++ bytes(b)` is `[a, b]`, for valid `a` and
    /// `b` meeting at `boundary` in `text`.
    #[inline]
    pub(crate) fn pair_compatible(
        &self,
        model: &Model,
        tokens: &Tokens,
        text: &[u8],
        boundary: usize,
        a: u32,
        b: u32,
    ) -> bool {
        self.compatible(model, tokens, text, boundary, a, b)
    }

    /// Builds the tables, or `None` when the vocabulary does not meet the
    /// encoder's requirements (byte symbols; every valid token's merge has a
    /// higher priority than its parts' merges).
    pub(crate) fn build(model: &Model, tokens: &Tokens) -> Option<Backtracker> {
        let Symbols::Bytes(byte_ids) = &model.symbols else { return None };
        let n = tokens.len();
        let mut bt = Backtracker {
            split: vec![Meta { left: NONE, right: NONE, created: 0 }; n],
            next_prefix: Vec::new(),
            pairs: PairTable::default(),
            trie: Trie::default(),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        for &id in byte_ids.iter() {
            bt.split[id as usize] = Meta { left: id, right: id, created: 0 };
        }
        let ordinary = |id: u32| {
            tokens.kind(id) == Kind::Normal
                && tokens.token_len(id) >= 2
                && model.map.get(tokens, tokens.bytes(id)) == Some(id)
        };
        let mut ordinary_ids: Vec<u32> = byte_ids.to_vec();
        ordinary_ids.extend((0..n as u32).filter(|&id| ordinary(id)));
        let mut all = Trie::build(tokens, &ordinary_ids)?;
        // Canonical splits in merge-priority order: a token's parts are
        // known before it, and `reaches` (BPE of the parts' bytes gets to the
        // two parts) needs only tables of lower priority.
        match &model.rules {
            Rules::Ranks => {
                // Prefix tokens come from a trie walk; only they need a
                // lookup of the rest.
                for id in 0..n as u32 {
                    if !ordinary(id) {
                        continue;
                    }
                    let t = tokens.bytes(id);
                    let mut found = None;
                    all.prefixes(t, |l, i| {
                        let Some(r) = model.map.get(tokens, &t[i..]) else { return false };
                        if bt.is_valid(l)
                            && bt.is_valid(r)
                            && bt.walk(model, tokens, t, i, l, r, true)
                        {
                            found = Some((l, r));
                            return true;
                        }
                        false
                    });
                    if let Some(split) = found {
                        bt.split[id as usize] =
                            Meta { left: split.0, right: split.1, created: id.checked_add(1)? };
                    }
                }
            }
            Rules::Pairs(table) => {
                let mut merges: Vec<(u32, u32, u32, u32)> = table
                    .iter()
                    .map(|(&k, &(prio, res))| (prio, (k >> 32) as u32, k as u32, res))
                    .collect();
                merges.sort_unstable();
                for (prio, l, r, res) in merges {
                    if bt.is_valid(res) || !ordinary(res) || !bt.is_valid(l) || !bt.is_valid(r) {
                        continue;
                    }
                    let t = tokens.bytes(res);
                    if bt.walk(model, tokens, t, tokens.token_len(l), l, r, true) {
                        bt.split[res as usize] =
                            Meta { left: l, right: r, created: prio.checked_add(1)? };
                    }
                }
            }
        }
        // A token this pass missed could still be produced through parts of
        // higher priority (a non-monotone vocabulary); BPE on its bytes
        // settles it, and such a vocabulary falls back to the heap encoder.
        let mut parts = Vec::new();
        let mut rules = Vec::new();
        for id in 0..n as u32 {
            if ordinary(id)
                && !bt.is_valid(id)
                && last_merge(model, tokens, byte_ids, tokens.bytes(id), &mut parts, &mut rules)
                    .is_some()
            {
                return None;
            }
        }
        // The trie keeps only valid tokens.
        for node in all.nodes.iter_mut() {
            if node.1 != NONE && !bt.is_valid(node.1) {
                node.1 = NONE;
            }
        }
        let mut next_prefix = vec![NONE; n];
        for t in 0..n as u32 {
            if bt.is_valid(t) {
                let b = tokens.bytes(t);
                next_prefix[t as usize] = all.longest(&b[..b.len() - 1]);
            }
        }
        if let Rules::Ranks = model.rules {
            // Every split of a valid token into two valid tokens is a rule
            // whose priority is the token's rank.
            // Two passes (count, then fill) so that no list of the entries
            // is held: the table is sized exactly and the peak memory of the
            // build stays low.
            let pass = |table: Option<&mut PairTable>| {
                let mut count = 0usize;
                let mut table = table;
                for id in 0..n as u32 {
                    if !bt.is_valid(id) || tokens.token_len(id) < 2 {
                        continue;
                    }
                    let t = tokens.bytes(id);
                    all.prefixes(t, |l, i| {
                        if let Some(r) = model.map.get(tokens, &t[i..]).filter(|&r| bt.is_valid(r))
                        {
                            count += 1;
                            if let Some(table) = table.as_deref_mut() {
                                table.insert(key(l, r), id + 1);
                            }
                        }
                        false
                    });
                }
                count
            };
            let mut table = PairTable::with_capacity(pass(None));
            pass(Some(&mut table));
            bt.pairs = table;
        }
        bt.trie = all;
        bt.next_prefix = next_prefix;
        Some(bt)
    }

    /// The priority (plus one) of the rule merging `x` and `y`, which sit
    /// at `piece[boundary - len(x)..boundary + len(y)]`.
    #[inline]
    fn rule(
        &self,
        model: &Model,
        tokens: &Tokens,
        piece: &[u8],
        boundary: usize,
        x: u32,
        y: u32,
    ) -> Option<u32> {
        match &model.rules {
            Rules::Ranks if !self.pairs.is_empty() => self.pairs.get(key(x, y)),
            Rules::Ranks => {
                let bytes = &piece[boundary - tokens.token_len(x)..boundary + tokens.token_len(y)];
                let t = model.map.get(tokens, bytes)?;
                // Only valid tokens ever form (see DESIGN.md).
                (self.split[t as usize].left != NONE).then_some(t + 1)
            }
            Rules::Pairs(table) => {
                let &(prio, res) = table.get(&key(x, y))?;
                (self.split[res as usize].left != NONE).then_some(prio + 1)
            }
        }
    }

    #[inline]
    pub(crate) fn is_valid(&self, t: u32) -> bool {
        self.split[t as usize].left != NONE
    }

    /// Whether BPE of `bytes(a) ++ bytes(b)` is `[a, b]` (both valid), where
    /// `a` ends and `b` starts at `boundary` in `piece`.
    #[inline]
    fn compatible(
        &self,
        model: &Model,
        tokens: &Tokens,
        piece: &[u8],
        boundary: usize,
        a: u32,
        b: u32,
    ) -> bool {
        // A thread-local direct-mapped cache of answers: text repeats token
        // pairs (kana particles, common word pairs), and a full walk costs
        // a pair-table probe per step down both spines. The cache belongs to
        // one backtracker at a time (`id`); ids fit 24 bits, so `key << 1`
        // leaves room for the answer bit and never equals the empty mark.
        let key = (u64::from(a) << 32) | u64::from(b);
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CACHE_BITS)) as usize;
        PAIR_CACHE.with(|cache| {
            let Ok(mut cache) = cache.try_borrow_mut() else {
                return self.walk(model, tokens, piece, boundary, a, b, false);
            };
            if cache.owner != self.id {
                cache.owner = self.id;
                cache.slots.clear();
                cache.slots.resize(1 << CACHE_BITS, u64::MAX);
            }
            let e = cache.slots[slot];
            if e != u64::MAX && e >> 1 == key {
                return e & 1 == 1;
            }
            let ok = self.walk(model, tokens, piece, boundary, a, b, false);
            cache.slots[slot] = key << 1 | u64::from(ok);
            ok
        })
    }

    /// Walks the boundary states of BPE on `bytes(a) ++ bytes(b)` backwards
    /// in merge order; false as soon as a cross-boundary merge would fire.
    /// With `skip_top` the final pair `(a, b)` itself may merge: the answer
    /// is then whether BPE reaches the two parts `[a, b]`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        model: &Model,
        tokens: &Tokens,
        piece: &[u8],
        boundary: usize,
        a: u32,
        b: u32,
        skip_top: bool,
    ) -> bool {
        let (mut x, mut y) = (a, b);
        // The priorities at which x and y get consumed by their parents.
        let (mut end_x, mut end_y) = (u32::MAX, u32::MAX);
        let mut first = skip_top;
        loop {
            if std::mem::take(&mut first) {
                // The top pair is the merge under test.
            } else if let Some(q) = self.rule(model, tokens, piece, boundary, x, y) {
                if q < end_x && q <= end_y {
                    return false;
                }
            }
            let (mx, my) = (self.split[x as usize], self.split[y as usize]);
            let (cx, cy) = (mx.created, my.created);
            if cx == 0 && cy == 0 {
                return true;
            }
            // Undo the later of the two creating merges; on a tie the right
            // one happened later (leftmost merges first).
            if cx > cy {
                end_x = cx;
                x = mx.right;
            } else {
                end_y = cy;
                y = my.left;
            }
        }
    }

    /// Encodes `piece` (no whole-piece shortcut), appending to `out`.
    pub(crate) fn encode(&self, model: &Model, tokens: &Tokens, piece: &[u8], out: &mut Vec<u32>) {
        let base = out.len();
        let n = piece.len();
        // dead[p]: no valid encoding of piece[p..] follows the tokens chosen
        // so far (BPE is determined by the last token, so this holds for any
        // prefix reaching p once it failed once).
        let mut dead = vec![0u64; n / 64 + 1];
        let mut pos = 0usize;
        let mut next = self.trie.longest(piece);
        while next != NONE {
            let t = next;
            let end = pos + tokens.token_len(t);
            let alive = dead[end / 64] & (1 << (end % 64)) == 0;
            if alive
                && (out.len() == base
                    || self.compatible(model, tokens, piece, pos, out[out.len() - 1], t))
            {
                out.push(t);
                pos = end;
                next = if pos < n { self.trie.longest(&piece[pos..]) } else { NONE };
            } else {
                next = self.next_prefix[t as usize];
                while next == NONE {
                    dead[pos / 64] |= 1 << (pos % 64);
                    // Every byte is a valid token, so some encoding exists and
                    // position 0 is never dead: `out` is not empty here.
                    if out.len() == base {
                        return;
                    }
                    let Some(last) = out.pop() else { return };
                    pos -= tokens.token_len(last);
                    next = self.next_prefix[last as usize];
                }
            }
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.split.capacity() * 12
            + self.next_prefix.capacity() * 4
            + self.pairs.slots.capacity() * 12
            + self.trie.nodes.capacity() * 8
            + self.trie.edges.capacity() * 4
            + self.trie.level2.capacity() * 4
            + self.trie.word.capacity() * 8
    }
}

/// An open-addressing table (linear probing) from a token pair to a rule
/// priority, 12 bytes a slot, at most 5/8 full.
#[derive(Debug, Default)]
struct PairTable {
    /// `[key >> 32, key as u32, value]` per slot (one cache line per
    /// probe); `u64::MAX` keys mark empty slots. Never full.
    slots: Vec<[u32; 3]>,
}

impl PairTable {
    /// An empty table for `n` entries at a load factor of at most 5/8.
    fn with_capacity(n: usize) -> PairTable {
        PairTable { slots: vec![[u32::MAX, u32::MAX, 0]; n * 8 / 5 + 2] }
    }

    fn insert(&mut self, k: u64, v: u32) {
        let mut i = self.slot(k);
        while self.key(i) != u64::MAX && self.key(i) != k {
            i = if i + 1 == self.slots.len() { 0 } else { i + 1 };
        }
        self.slots[i] = [(k >> 32) as u32, k as u32, v];
    }

    #[inline]
    fn key(&self, i: usize) -> u64 {
        let [hi, lo, _] = self.slots[i];
        (u64::from(hi) << 32) | u64::from(lo)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The home slot of `k`: a multiplicative hash mapped onto the table
    /// length (any length, not only powers of two).
    #[inline]
    fn slot(&self, k: u64) -> usize {
        let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((u128::from(h) * self.slots.len() as u128) >> 64) as usize
    }

    #[inline]
    fn get(&self, k: u64) -> Option<u32> {
        let mut i = self.slot(k);
        loop {
            let s = self.key(i);
            if s == k {
                return Some(self.slots[i][2]);
            }
            if s == u64::MAX {
                return None;
            }
            i = if i + 1 == self.slots.len() { 0 } else { i + 1 };
        }
    }
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// Runs BPE on `bytes` (a token's bytes) and returns the final merge
/// `(left, right, priority)` if the result is a single token.
fn last_merge(
    model: &Model,
    tokens: &Tokens,
    byte_ids: &[u32; 256],
    bytes: &[u8],
    parts: &mut Vec<(usize, u32)>,
    rules: &mut Vec<Option<(u32, u32)>>,
) -> Option<(u32, u32, u32)> {
    parts.clear();
    parts.extend(bytes.iter().enumerate().map(|(i, &b)| (i, byte_ids[b as usize])));
    let end = |parts: &[(usize, u32)], i: usize| parts.get(i + 1).map_or(bytes.len(), |p| p.0);
    rules.clear();
    for i in 0..parts.len() - 1 {
        rules.push(model.pair(
            tokens,
            bytes,
            parts[i].0,
            parts[i].1,
            parts[i + 1].1,
            end(parts, i + 1),
        ));
    }
    loop {
        let mut best: Option<(usize, u32, u32)> = None;
        for (i, r) in rules.iter().enumerate() {
            if let Some((prio, res)) = *r {
                if best.is_none_or(|(_, p, _)| prio < p) {
                    best = Some((i, prio, res));
                }
            }
        }
        let (i, prio, result) = best?;
        if parts.len() == 2 {
            return Some((parts[0].1, parts[1].1, prio)).filter(|_| tokens.bytes(result) == bytes);
        }
        parts[i].1 = result;
        parts.remove(i + 1);
        rules.remove(i);
        if i < rules.len() {
            rules[i] = model.pair(
                tokens,
                bytes,
                parts[i].0,
                parts[i].1,
                parts[i + 1].1,
                end(parts, i + 1),
            );
        }
        if i > 0 {
            rules[i - 1] = model.pair(
                tokens,
                bytes,
                parts[i - 1].0,
                parts[i - 1].1,
                parts[i].1,
                end(parts, i),
            );
        }
    }
}
