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

use crate::pairs::PairTable;
pub(crate) use crate::trie::NONE;
use crate::trie::Trie;

/// The trie's root node.
pub(crate) const ROOT: u32 = 0;

/// Tables of the backtracking encoder.
#[derive(Debug)]
pub(crate) struct Backtracker {
    /// Canonical split `[left, right]` of every valid token; `[t, t]` for a
    /// single byte; `[NONE, NONE]` for tokens BPE never produces.
    split: Vec<[u32; 2]>,
    /// The priority (plus one) of the merge that creates each valid token;
    /// 0 for single bytes. Invariant: a token's priority exceeds its parts'.
    /// Not read when `ranked` (it is then a function of the id).
    created: Vec<u32>,
    /// tiktoken ranks with the 256 bytes at ids 0..=255: the priority of a
    /// token is its id plus one (0 for bytes), so the compatibility walk
    /// needs no `created` lookup.
    ranked: bool,
    /// The longest valid token that is a proper prefix of each token.
    next_prefix: Vec<u32>,
    /// tiktoken rules between valid tokens: `(x, y)` to the priority (plus
    /// one) of the valid token `bytes(x) ++ bytes(y)`.
    pairs: PairTable,
    /// The valid tokens (and, through `is_word`, every ordinary token).
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
        self.trie.is_word(n)
    }

    /// Whether BPE of `bytes(a) ++ bytes(b)` is `[a, b]`, for valid `a` and
    /// `b`.
    #[inline]
    pub(crate) fn pair_compatible(&self, model: &Model, a: u32, b: u32) -> bool {
        self.compatible(model, a, b)
    }

    /// Builds the tables, or `None` when the vocabulary does not meet the
    /// encoder's requirements (byte symbols; every valid token's merge has a
    /// higher priority than its parts' merges).
    pub(crate) fn build(model: &Model, tokens: &Tokens) -> Option<Backtracker> {
        let Symbols::Bytes(byte_ids) = &model.symbols else { return None };
        let n = tokens.len();
        let ranks = matches!(model.rules, Rules::Ranks);
        let mut bt = Backtracker {
            split: vec![[NONE; 2]; n],
            created: vec![0; n],
            ranked: ranks && byte_ids.iter().all(|&b| b < 256),
            next_prefix: vec![NONE; n],
            pairs: PairTable::default(),
            trie: Trie::default(),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        for &id in byte_ids.iter() {
            bt.split[id as usize] = [id, id];
        }
        // tiktoken files reject duplicate bytes when loaded; Hugging Face
        // vocabularies may hold them, and the byte map keeps the first.
        let ordinary = |id: u32| {
            tokens.kind(id) == Kind::Normal
                && tokens.token_len(id) >= 2
                && (ranks || model.map.get(tokens, tokens.bytes(id)) == Some(id))
        };
        let mut ordinary_ids: Vec<u32> = byte_ids.to_vec();
        ordinary_ids.extend((0..n as u32).filter(|&id| ordinary(id)));
        let (mut trie, links) = Trie::build(tokens, &ordinary_ids, n)?;
        // Canonical splits in merge-priority order: a token's parts are
        // known before it, and `walk` (BPE of the parts' bytes gets to the
        // two parts) needs only rules of lower priority.
        match &model.rules {
            Rules::Ranks => bt.ranks_pass(model, tokens, &trie, &links, &ordinary),
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
                    if bt.walk(model, l, r, true) {
                        bt.split[res as usize] = [l, r];
                        bt.created[res as usize] = prio.checked_add(1)?;
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
        // Next prefixes top-down (parents are numbered before children):
        // `above[node]` is the deepest valid token strictly above it. Then
        // the trie keeps only valid tokens.
        let mut above = vec![NONE; trie.len()];
        for node in 0..trie.len() as u32 {
            let t = trie.token(node);
            let valid = t != NONE && bt.is_valid(t);
            if valid {
                bt.next_prefix[t as usize] = above[node as usize];
            }
            let here = if valid { t } else { above[node as usize] };
            for &e in trie.node_edges(node) {
                above[(e >> 8) as usize] = here;
            }
        }
        for node in trie.nodes.iter_mut() {
            if node.1 != NONE && !bt.is_valid(node.1) {
                node.1 = NONE;
            }
        }
        bt.trie = trie;
        Some(bt)
    }

    /// The canonical splits and the pair table of a tiktoken vocabulary, in
    /// one pass in rank order.
    ///
    /// The splits of token `t` are `(l, r)` with `l` a token ending at one of
    /// the trie ancestors of `t` (the prefix links) and `r` the token of the
    /// rest (one byte-map lookup). The canonical one is the split whose walk
    /// passes; the walk of `t` reads only rules of priority below `t`'s, with
    /// both parts below `t` (see DESIGN.md), so the table is filled as the
    /// pass goes: when `t` turns out valid its splits into valid tokens are
    /// inserted, and a split with a part of higher rank waits in `pending`
    /// until that part's validity is known.
    fn ranks_pass(
        &mut self,
        model: &Model,
        tokens: &Tokens,
        trie: &Trie,
        links: &crate::trie::Links,
        ordinary: &impl Fn(u32) -> bool,
    ) {
        use std::cmp::Reverse;
        let n = tokens.len();
        self.pairs = PairTable::with_capacity(n * 2);
        let mut pending: std::collections::BinaryHeap<Reverse<(u32, u32, u32, u32)>> =
            std::collections::BinaryHeap::new();
        let mut cands: Vec<(u32, u32)> = Vec::new();
        for t in 0..n as u32 {
            if ordinary(t) {
                let tb = tokens.bytes(t);
                cands.clear();
                let mut node = links.up[links.node_of[t as usize] as usize];
                while node != NONE {
                    let l = trie.token(node);
                    if let Some(r) = model.map.get(tokens, &tb[tokens.token_len(l)..]) {
                        cands.push((l, r));
                    }
                    node = links.up[node as usize];
                }
                for &(l, r) in &cands {
                    if self.is_valid(l) && self.is_valid(r) && self.walk(model, l, r, true) {
                        self.split[t as usize] = [l, r];
                        self.created[t as usize] = t + 1;
                        break;
                    }
                }
                if self.is_valid(t) {
                    // Parts of higher rank (not single bytes) are not
                    // settled yet.
                    let later = |x: u32| if x > t && tokens.token_len(x) > 1 { x } else { 0 };
                    for &(l, r) in &cands {
                        let wait = later(l).max(later(r));
                        if wait != 0 {
                            pending.push(Reverse((wait, l, r, t)));
                        } else if self.is_valid(l) && self.is_valid(r) {
                            self.pairs.insert(key(l, r), t + 1);
                        }
                    }
                }
            }
            while let Some(&Reverse((wait, l, r, s))) = pending.peek() {
                if wait > t {
                    break;
                }
                pending.pop();
                if self.is_valid(l) && self.is_valid(r) {
                    self.pairs.insert(key(l, r), s + 1);
                }
            }
        }
    }

    /// The priority (plus one) of the rule merging valid `x` and `y` into a
    /// valid token.
    #[inline]
    fn rule(&self, model: &Model, x: u32, y: u32) -> Option<u32> {
        match &model.rules {
            Rules::Ranks => self.pairs.get(key(x, y)),
            Rules::Pairs(table) => {
                let &(prio, res) = table.get(&key(x, y))?;
                // Only valid tokens ever form (see DESIGN.md).
                self.is_valid(res).then_some(prio + 1)
            }
        }
    }

    #[inline]
    pub(crate) fn is_valid(&self, t: u32) -> bool {
        self.split[t as usize][0] != NONE
    }

    /// The priority (plus one) of the merge creating valid `t`; 0 for bytes.
    #[inline]
    fn created(&self, t: u32) -> u32 {
        if self.ranked {
            if t < 256 { 0 } else { t + 1 }
        } else {
            self.created[t as usize]
        }
    }

    /// Whether BPE of `bytes(a) ++ bytes(b)` is `[a, b]` (both valid).
    #[inline]
    fn compatible(&self, model: &Model, a: u32, b: u32) -> bool {
        // A thread-local direct-mapped cache of answers: text repeats token
        // pairs (kana particles, common word pairs), and a full walk costs
        // a pair-table probe per step down both spines. The cache belongs to
        // one backtracker at a time (`id`); ids fit 24 bits, so `key << 1`
        // leaves room for the answer bit and never equals the empty mark.
        let key = (u64::from(a) << 32) | u64::from(b);
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CACHE_BITS)) as usize;
        PAIR_CACHE.with(|cache| {
            let Ok(mut cache) = cache.try_borrow_mut() else {
                return self.walk(model, a, b, false);
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
            let ok = self.walk(model, a, b, false);
            cache.slots[slot] = key << 1 | u64::from(ok);
            ok
        })
    }

    /// Walks the boundary states of BPE on `bytes(a) ++ bytes(b)` backwards
    /// in merge order; false as soon as a cross-boundary merge would fire.
    /// With `skip_top` the final pair `(a, b)` itself may merge: the answer
    /// is then whether BPE reaches the two parts `[a, b]`.
    #[inline]
    fn walk(&self, model: &Model, a: u32, b: u32, skip_top: bool) -> bool {
        let (mut x, mut y) = (a, b);
        // The priorities at which x and y get consumed by their parents.
        let (mut end_x, mut end_y) = (u32::MAX, u32::MAX);
        let mut first = skip_top;
        loop {
            if std::mem::take(&mut first) {
                // The top pair is the merge under test.
            } else if let Some(q) = self.rule(model, x, y) {
                if q < end_x && q <= end_y {
                    return false;
                }
            }
            let (cx, cy) = (self.created(x), self.created(y));
            if cx == 0 && cy == 0 {
                return true;
            }
            // Undo the later of the two creating merges; on a tie the right
            // one happened later (leftmost merges first).
            if cx > cy {
                end_x = cx;
                x = self.split[x as usize][1];
            } else {
                end_y = cy;
                y = self.split[y as usize][0];
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
            if alive && (out.len() == base || self.compatible(model, out[out.len() - 1], t)) {
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
        self.split.capacity() * 8
            + self.created.capacity() * 4
            + self.next_prefix.capacity() * 4
            + self.pairs.heap_bytes()
            + self.trie.heap_bytes()
    }

    /// Entries in the pair table (tiktoken vocabularies).
    #[cfg(test)]
    pub(crate) fn pair_count(&self) -> usize {
        self.pairs.len()
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
