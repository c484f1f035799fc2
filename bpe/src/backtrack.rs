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
use crate::runs::{Alone, Scratch, Step};
use crate::vocab::{Kind, Tokens};

mod last_merge;
use last_merge::last_merge;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

pub(crate) use crate::trie::NONE;
use crate::trie::Trie;

/// The trie's root node.
pub(crate) const ROOT: u32 = 0;

/// [`Backtracker::state`] of a token not looked at yet.
const UNKNOWN: u64 = 0;
/// [`Backtracker::state`] of a token BPE never produces.
const INVALID: u64 = 1 << 63;
/// [`Backtracker::state`] flag of a valid token, or-ed with
/// `len(left) << 48 | left << 24 | right` (ids fit 24 bits; a left part
/// longer than [`LEN_MAX`] bytes stores 0 and its length is looked up).
const VALID: u64 = 1 << 62;

/// The longest left-part length a state holds.
const LEN_MAX: usize = (1 << 12) - 1;

/// The state of a valid token with canonical split `(left, right)`.
#[inline]
fn valid_state(tokens: &Tokens, left: u32, right: u32) -> u64 {
    let ll = tokens.token_len(left);
    let ll = if ll <= LEN_MAX { ll as u64 } else { 0 };
    VALID | ll << 48 | u64::from(left) << 24 | u64::from(right)
}

/// Tables of the backtracking encoder.
///
/// Per-token facts (validity, canonical split, next prefix) are atomics
/// filled on first use for tiktoken vocabularies: computing one token's
/// facts reads only facts of shorter tokens, so the recursion is bounded by
/// the token length, and two threads racing on a token store the same
/// value. Hugging Face vocabularies fill them when built.
#[derive(Debug)]
pub(crate) struct Backtracker {
    /// Per token: its facts, one cache line for everything the encoder
    /// reads about a token.
    facts: Vec<Fact>,
    /// Hugging Face rules: the priority (plus one) of the merge that creates
    /// each valid token, 0 for single bytes (a token's priority exceeds its
    /// parts'). Empty for tiktoken ranks, where it is the id plus one.
    created: Vec<u32>,
    /// tiktoken ranks with the 256 bytes at ids 0..=255: a byte is an id
    /// below 256, so the walk needs no length lookup to tell.
    ranked: bool,
    /// tiktoken ranks: the token of every two bytes `b0 << 8 | b1`, plus
    /// one (0 for none). Every compatible walk ends on a pair of bytes, and
    /// this 256 KiB table (a few lines of it, for a given script) answers
    /// it without the byte map. A two-byte token is always valid (its only
    /// merge is of its two bytes).
    pair2: Vec<u32>,
    /// Every ordinary token, valid or not.
    trie: Trie,
    /// The alone-runs of every valid token (`runs.rs`), when some run is
    /// not sorted (Llama-3, Llama-2, Mistral); empty otherwise.
    steps: Vec<Step>,
    /// Distinguishes backtrackers in the thread-local compatibility cache
    /// (unique per build, never reused).
    id: u64,
}

/// What the encoder reads about a token, in one 32-byte-aligned record so
/// that a token costs one cache line (the encoder is bound by cache misses
/// on these tables once a text has more distinct tokens than fit the cache).
#[derive(Debug)]
#[repr(C, align(32))]
struct Fact {
    /// [`UNKNOWN`], [`INVALID`], or [`valid_state`] of the canonical split
    /// (`(t, t)` for a single byte). The left part's length rides along so
    /// that the walk down the spines reads no other record.
    state: AtomicU64,
    /// The first 8 bytes of the token, zero-padded: rule lookups check a
    /// byte-map candidate against it instead of the token buffer.
    head: u64,
    /// The token's length in bytes.
    len: u32,
    /// 0 when not computed yet, else the longest valid proper prefix plus
    /// one (`u32::MAX` for none).
    next: AtomicU32,
    /// Non-monotone Hugging Face vocabularies: where the token's alone-run
    /// starts in [`Backtracker::steps`] (its header; `runs.rs`).
    run: u32,
    /// The number of merges of that run.
    nrun: u16,
    /// Whether the run fires its merges in non-decreasing priority (always
    /// for monotone vocabularies): then the spine walk is exact.
    sorted: bool,
}

/// The first 8 bytes of `b`, zero-padded, as a number.
#[inline]
fn head(b: &[u8]) -> u64 {
    let mut k = [0u8; 8];
    let m = b.len().min(8);
    k[..m].copy_from_slice(&b[..m]);
    u64::from_le_bytes(k)
}

/// Log2 of the entries of the compatibility cache (128 KiB per thread).
const CACHE_BITS: u32 = 14;

/// The source of [`Backtracker::id`]s.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

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
    pub(crate) fn node_token(&self, model: &Model, tokens: &Tokens, n: u32) -> u32 {
        let t = self.trie.token(n);
        if t != NONE && self.is_valid(model, tokens, t) { t } else { NONE }
    }

    /// Whether `ch` (one character's bytes) is an ordinary token: a
    /// character symbol of the encoder.
    #[inline]
    pub(crate) fn char_has_token(&self, ch: &[u8]) -> bool {
        let mut n = ROOT;
        for &b in ch {
            n = self.trie.child(n, b);
            if n == NONE {
                return false;
            }
        }
        self.trie.token(n) != NONE
    }

    /// Whether trie node `n` spells an ordinary token (valid or not).
    #[inline]
    pub(crate) fn node_is_word(&self, n: u32) -> bool {
        self.trie.token(n) != NONE
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
    /// encoder's requirements.
    ///
    /// tiktoken ranks: byte symbols, and every valid token's merge has a
    /// higher priority than its parts' (monotone). `known_monotone` skips
    /// that check for vocabularies already known to pass it (the embedded
    /// ones; a test runs the check): their per-token facts are then
    /// computed on first use, and building costs only the trie. Otherwise
    /// every token is settled here and the vocabulary is checked.
    ///
    /// Hugging Face merges: any merge order. Every token's alone-run (BPE
    /// of its own bytes, `runs.rs`) settles its validity and canonical
    /// split; the runs are kept when some of them are not sorted. Symbols
    /// are bytes, or characters when no merge involves a byte-fallback or
    /// unknown token (then no merge crosses a character without a token, and
    /// the encoder is given runs of characters that have one).
    pub(crate) fn build(
        model: &Model,
        tokens: &Tokens,
        known_monotone: bool,
    ) -> Option<Backtracker> {
        let n = tokens.len();
        let ranks = matches!(model.rules, Rules::Ranks);
        // tiktoken files reject duplicate bytes when loaded; Hugging Face
        // vocabularies may hold them, and the byte map keeps the first.
        let ordinary = |id: u32| {
            tokens.kind(id) == Kind::Normal
                && (ranks || model.map.get(tokens, tokens.bytes(id)) == Some(id))
        };
        let ordinary_ids: Vec<u32> = (0..n as u32).filter(|&id| ordinary(id)).collect();
        let byte_ids = match &model.symbols {
            Symbols::Bytes(ids) => Some(ids),
            Symbols::Chars { .. } => None,
        };
        if let Rules::Pairs(table) = &model.rules {
            // Character symbols: every merge joins two ordinary tokens.
            let in_map = |id: u32| ordinary(id);
            if byte_ids.is_none()
                && !table.iter().all(|(&k, _)| in_map((k >> 32) as u32) && in_map(k as u32))
            {
                return None;
            }
        } else if byte_ids.is_none() {
            return None;
        }
        let mut bt = Backtracker {
            facts: (0..n as u32)
                .map(|t| {
                    let b = tokens.bytes(t);
                    Fact {
                        state: AtomicU64::new(UNKNOWN),
                        head: head(b),
                        len: b.len() as u32,
                        next: AtomicU32::new(0),
                        run: 0,
                        nrun: 0,
                        sorted: true,
                    }
                })
                .collect(),
            created: if ranks { Vec::new() } else { vec![0; n] },
            ranked: ranks && byte_ids.is_some_and(|ids| ids.iter().all(|&b| b < 256)),
            pair2: Vec::new(),
            trie: Trie::build(tokens, &ordinary_ids)?,
            steps: Vec::new(),
            id: NEXT_ID.fetch_add(1, Relaxed),
        };
        match (&model.rules, byte_ids) {
            (Rules::Ranks, Some(byte_ids)) => {
                for &id in byte_ids.iter() {
                    bt.set_split(tokens, id, id, id);
                }
                bt.pair2 = vec![0; 1 << 16];
                for &id in &ordinary_ids {
                    if let &[b0, b1] = tokens.bytes(id) {
                        bt.pair2[usize::from(b0) << 8 | usize::from(b1)] = id + 1;
                    }
                }
                if known_monotone {
                    return Some(bt);
                }
                for &id in &ordinary_ids {
                    bt.is_valid(model, tokens, id);
                }
                // A token this pass missed could still be produced through
                // parts of higher priority (a non-monotone vocabulary); BPE
                // on its bytes settles it, and such a vocabulary falls back
                // to the heap encoder.
                let mut parts = Vec::new();
                let mut rules = Vec::new();
                for &id in &ordinary_ids {
                    if !bt.is_valid(model, tokens, id)
                        && last_merge(
                            model,
                            tokens,
                            byte_ids,
                            tokens.bytes(id),
                            &mut parts,
                            &mut rules,
                        )
                        .is_some()
                    {
                        return None;
                    }
                }
            }
            (Rules::Pairs(table), _) => {
                let mut scratch = Scratch::default();
                let mut steps = Vec::new();
                let mut all_sorted = true;
                for &t in &ordinary_ids {
                    let at = steps.len();
                    let alone =
                        crate::runs::alone_run(model, tokens, table, t, &mut scratch, &mut steps);
                    let f = &mut bt.facts[t as usize];
                    match alone {
                        Alone::Base => {
                            f.state.store(valid_state(tokens, t, t), Relaxed);
                        }
                        Alone::Valid { left, right, prio, sorted } => {
                            f.state.store(valid_state(tokens, left, right), Relaxed);
                            f.sorted = sorted;
                            all_sorted &= sorted;
                            bt.created[t as usize] = prio.checked_add(1)?;
                        }
                        Alone::Invalid => {
                            f.state.store(INVALID, Relaxed);
                            continue;
                        }
                    }
                    f.run = u32::try_from(at).ok()?;
                    f.nrun = u16::try_from(steps.len() - at - 1).ok()?;
                }
                for f in &bt.facts {
                    if f.state.load(Relaxed) == UNKNOWN {
                        f.state.store(INVALID, Relaxed);
                    }
                }
                if !all_sorted {
                    steps.shrink_to_fit();
                    bt.steps = steps;
                }
            }
            (Rules::Ranks, None) => return None,
        }
        Some(bt)
    }

    fn set_split(&self, tokens: &Tokens, t: u32, left: u32, right: u32) {
        let s = valid_state(tokens, left, right);
        self.facts[t as usize].state.store(s, Relaxed);
    }

    /// The state of `t`, computed first if needed (tiktoken ranks).
    #[inline]
    fn state(&self, model: &Model, tokens: &Tokens, t: u32) -> u64 {
        let s = self.facts[t as usize].state.load(Relaxed);
        if s != UNKNOWN {
            return s;
        }
        self.settle(model, tokens, t)
    }

    /// Computes and stores the state of ordinary token `t` (tiktoken ranks;
    /// Hugging Face states are all set when built, and an unsettled one
    /// during that build counts as invalid).
    #[cold]
    fn settle(&self, model: &Model, tokens: &Tokens, t: u32) -> u64 {
        if !matches!(model.rules, Rules::Ranks) {
            return INVALID;
        }
        // The canonical split `(l, r)`: both valid with lower priority (a
        // monotone vocabulary), and BPE of their bytes reaches them. At most
        // one split can, since BPE is deterministic. `l` is a prefix token
        // (a trie walk), `r` the token of the rest (a byte-map lookup).
        let tb = tokens.bytes(t);
        let lower = |x: u32| x < t || tokens.token_len(x) == 1;
        let mut s = INVALID;
        let mut node = ROOT;
        for (i, &b) in tb[..tb.len().saturating_sub(1)].iter().enumerate() {
            node = self.trie.child(node, b);
            if node == NONE {
                break;
            }
            let l = self.trie.token(node);
            if l == NONE || !lower(l) {
                continue;
            }
            let Some(r) = model.map.get(tokens, &tb[i + 1..]) else { continue };
            if lower(r)
                && self.is_valid(model, tokens, l)
                && self.is_valid(model, tokens, r)
                && self.walk(model, tokens, tb, i + 1, l, r, true)
            {
                s = valid_state(tokens, l, r);
                break;
            }
        }
        self.facts[t as usize].state.store(s, Relaxed);
        s
    }

    #[inline]
    pub(crate) fn is_valid(&self, model: &Model, tokens: &Tokens, t: u32) -> bool {
        self.state(model, tokens, t) & VALID != 0
    }

    /// The canonical split of valid `t`.
    #[cfg(test)]
    fn split(&self, model: &Model, tokens: &Tokens, t: u32) -> (u32, u32) {
        let s = self.state(model, tokens, t);
        ((s >> 24) as u32 & 0xFF_FFFF, s as u32 & 0xFF_FFFF)
    }

    /// The canonical split of valid `t` and the left part's length.
    #[inline]
    fn split_len(&self, model: &Model, tokens: &Tokens, t: u32) -> (u32, u32, usize) {
        let s = self.state(model, tokens, t);
        let (l, r) = ((s >> 24) as u32 & 0xFF_FFFF, s as u32 & 0xFF_FFFF);
        let ll = (s >> 48) as usize & LEN_MAX;
        (l, r, if ll == 0 { tokens.token_len(l) } else { ll })
    }

    /// The longest valid token that is a proper prefix of valid `t`, or
    /// [`NONE`].
    #[inline]
    fn next_prefix(&self, model: &Model, tokens: &Tokens, t: u32) -> u32 {
        match self.facts[t as usize].next.load(Relaxed) {
            0 => self.settle_next_prefix(model, tokens, t),
            u32::MAX => NONE,
            p => p - 1,
        }
    }

    #[cold]
    fn settle_next_prefix(&self, model: &Model, tokens: &Tokens, t: u32) -> u32 {
        let tb = tokens.bytes(t);
        let mut best = NONE;
        let mut node = ROOT;
        for &b in &tb[..tb.len().saturating_sub(1)] {
            node = self.trie.child(node, b);
            if node == NONE {
                break;
            }
            let l = self.trie.token(node);
            if l != NONE && self.is_valid(model, tokens, l) {
                best = l;
            }
        }
        let stored = if best == NONE { u32::MAX } else { best + 1 };
        self.facts[t as usize].next.store(stored, Relaxed);
        best
    }

    /// The longest valid token that is a prefix of `bytes`, or [`NONE`].
    #[inline]
    fn longest(&self, model: &Model, tokens: &Tokens, bytes: &[u8]) -> u32 {
        let t = self.trie.longest(bytes);
        if t == NONE || self.is_valid(model, tokens, t) {
            t
        } else {
            self.next_prefix(model, tokens, t)
        }
    }

    /// The length of token `t`.
    #[inline]
    fn len(&self, t: u32) -> usize {
        self.facts[t as usize].len as usize
    }

    /// The token whose bytes are `key`, for keys that are rarely tokens
    /// (the byte map's Bloom filter answers most), checked against the
    /// token's record (which the caller reads next) rather than the token
    /// buffer.
    #[inline]
    fn token_of(&self, model: &Model, tokens: &Tokens, key: &[u8]) -> Option<u32> {
        model.map.get_rare_by(key, |s| {
            let f = &self.facts[s as usize];
            f.len as usize == key.len()
                && if key.len() <= 8 { f.head == head(key) } else { tokens.bytes(s) == key }
        })
    }

    /// The priority (plus one) of the merge creating valid `t`; 0 for bytes.
    #[inline]
    fn created(&self, tokens: &Tokens, t: u32) -> u32 {
        if self.ranked {
            if t < 256 { 0 } else { t + 1 }
        } else if self.created.is_empty() {
            if tokens.token_len(t) == 1 { 0 } else { t + 1 }
        } else {
            self.created[t as usize]
        }
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
        PAIR_CACHE.with(|cache| match cache.try_borrow_mut() {
            Ok(mut cache) => {
                self.claim(&mut cache);
                self.compatible_cached(&mut cache, model, tokens, piece, boundary, a, b).0
            }
            Err(_) => self.check(model, tokens, piece, boundary, a, b),
        })
    }

    /// Makes `cache` hold this backtracker's answers (clearing another's).
    fn claim(&self, cache: &mut PairCache) {
        if cache.owner != self.id {
            cache.owner = self.id;
            cache.slots.clear();
            cache.slots.resize(1 << CACHE_BITS, u64::MAX);
        }
    }

    /// [`Backtracker::compatible`] through a claimed cache, and whether the
    /// cache answered.
    ///
    /// A direct-mapped cache of answers: text repeats token pairs (kana
    /// particles, common word pairs), and a full walk costs a rule lookup
    /// per step down both spines. The cache belongs to one backtracker at a
    /// time (`id`); ids fit 24 bits, so `key << 1` leaves room for the answer
    /// bit and never equals the empty mark.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn compatible_cached(
        &self,
        cache: &mut PairCache,
        model: &Model,
        tokens: &Tokens,
        piece: &[u8],
        boundary: usize,
        a: u32,
        b: u32,
    ) -> (bool, bool) {
        let key = (u64::from(a) << 32) | u64::from(b);
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CACHE_BITS)) as usize;
        let e = cache.slots[slot];
        if e != u64::MAX && e >> 1 == key {
            return (e & 1 == 1, true);
        }
        let ok = self.check(model, tokens, piece, boundary, a, b);
        cache.slots[slot] = key << 1 | u64::from(ok);
        (ok, false)
    }

    /// Whether valid `a` and `b`, meeting at `boundary` in `piece`, are
    /// compatible: the spine walk, or, when either alone-run is not sorted
    /// (a non-monotone vocabulary), the replay of both runs (`runs.rs`).
    #[inline]
    fn check(
        &self,
        model: &Model,
        tokens: &Tokens,
        piece: &[u8],
        boundary: usize,
        a: u32,
        b: u32,
    ) -> bool {
        let sorted = |t: u32| self.facts[t as usize].sorted;
        if !self.steps.is_empty()
            && (!sorted(a) || !sorted(b))
            && let Rules::Pairs(table) = &model.rules
        {
            return crate::runs::simulate(table, self.run(a), self.run(b));
        }
        self.walk(model, tokens, piece, boundary, a, b, false)
    }

    /// The alone-run of valid `t`, header first (non-monotone vocabularies).
    #[inline]
    fn run(&self, t: u32) -> &[Step] {
        let f = &self.facts[t as usize];
        &self.steps[f.run as usize..f.run as usize + f.nrun as usize + 1]
    }

    /// Walks the boundary states of BPE on `bytes(a) ++ bytes(b)` (at
    /// `piece[boundary - len(a)..boundary + len(b)]`) backwards in merge
    /// order; false as soon as a cross-boundary merge would fire. With
    /// `skip_top` the final pair `(a, b)` itself may merge: the answer is
    /// then whether BPE reaches the two parts `[a, b]`.
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
        let (mut lx, mut ly) = (self.len(a), self.len(b));
        // The priorities at which x and y get consumed by their parents.
        let (mut end_x, mut end_y) = (u32::MAX, u32::MAX);
        let mut first = skip_top;
        loop {
            if !std::mem::take(&mut first) {
                // The rule merging x and y, if its result is a valid token
                // (only valid tokens ever form; see DESIGN.md) and it would
                // fire before either side is consumed.
                let fires = match &model.rules {
                    Rules::Ranks if lx == 1 && ly == 1 => {
                        let p = self.pair2
                            [usize::from(piece[boundary - 1]) << 8 | usize::from(piece[boundary])];
                        p != 0 && p < end_x && p <= end_y
                    }
                    Rules::Ranks => {
                        let span = boundary - lx..boundary + ly;
                        // The priority first: a validity may need computing
                        // (of a shorter token, so the recursion ends).
                        self.token_of(model, tokens, &piece[span]).is_some_and(|s| {
                            s + 1 < end_x && s < end_y && self.is_valid(model, tokens, s)
                        })
                    }
                    Rules::Pairs(table) => table.get(&key(x, y)).is_some_and(|&(prio, res)| {
                        prio + 1 < end_x && prio < end_y && self.is_valid(model, tokens, res)
                    }),
                };
                if fires {
                    return false;
                }
            }
            let (cx, cy) = (self.created(tokens, x), self.created(tokens, y));
            if cx == 0 && cy == 0 {
                return true;
            }
            // Undo the later of the two creating merges; on a tie the right
            // one happened later (leftmost merges first).
            if cx > cy {
                end_x = cx;
                let (_, r, ll) = self.split_len(model, tokens, x);
                x = r;
                lx -= ll;
            } else {
                end_y = cy;
                (y, _, ly) = self.split_len(model, tokens, y);
            }
        }
    }

    /// Encodes `piece` (no whole-piece shortcut), appending to `out`.
    pub(crate) fn encode(&self, model: &Model, tokens: &Tokens, piece: &[u8], out: &mut Vec<u32>) {
        // The thread's cache of answers, taken once per piece rather than
        // once per pair (the thread-local access costs ~10% on text with
        // few repeated pairs).
        PAIR_CACHE.with(|cache| {
            let mut cache = cache.try_borrow_mut().ok();
            if let Some(cache) = cache.as_deref_mut() {
                self.claim(cache);
            }
            self.encode_with(cache.as_deref_mut(), model, tokens, piece, out);
        });
    }

    fn encode_with(
        &self,
        mut cache: Option<&mut PairCache>,
        model: &Model,
        tokens: &Tokens,
        piece: &[u8],
        out: &mut Vec<u32>,
    ) {
        let base = out.len();
        let n = piece.len();
        let (mut lookups, mut hits) = (0u32, 0u32);
        // dead[p]: no valid encoding of piece[p..] follows the tokens chosen
        // so far (BPE is determined by the last token, so this holds for any
        // prefix reaching p once it failed once).
        let mut small = [0u64; 4];
        let mut large = Vec::new();
        let dead: &mut [u64] = if n < 256 {
            &mut small
        } else {
            large.resize(n / 64 + 1, 0u64);
            &mut large
        };
        let mut pos = 0usize;
        let mut next = self.longest(model, tokens, piece);
        while next != NONE {
            let t = next;
            let end = pos + self.len(t);
            let alive = dead[end / 64] & (1 << (end % 64)) == 0;
            if alive
                && (out.len() == base || {
                    let a = out[out.len() - 1];
                    match cache.as_deref_mut() {
                        Some(c) => {
                            let (ok, hit) =
                                self.compatible_cached(c, model, tokens, piece, pos, a, t);
                            // Text with few repeated pairs (random letters)
                            // gains nothing from the cache and pays a miss
                            // per pair for it: after 4096 lookups with under
                            // 1/16 hits, the rest of the piece walks directly.
                            lookups += 1;
                            hits += u32::from(hit);
                            if lookups == 4096 && hits < 256 {
                                cache = None;
                            }
                            ok
                        }
                        None => self.check(model, tokens, piece, pos, a, t),
                    }
                })
            {
                out.push(t);
                pos = end;
                next = if pos < n { self.longest(model, tokens, &piece[pos..]) } else { NONE };
            } else {
                next = self.next_prefix(model, tokens, t);
                while next == NONE {
                    dead[pos / 64] |= 1 << (pos % 64);
                    // Every byte of the piece is a valid token (pieces with
                    // a byte without one never come here), so some encoding
                    // exists and position 0 is never dead: `out` is not
                    // empty here.
                    if out.len() == base {
                        return;
                    }
                    let Some(last) = out.pop() else { return };
                    pos -= self.len(last);
                    next = self.next_prefix(model, tokens, last);
                }
            }
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.facts.capacity() * std::mem::size_of::<Fact>()
            + self.created.capacity() * 4
            + self.pair2.capacity() * 4
            + self.trie.heap_bytes()
            + self.steps.capacity() * std::mem::size_of::<Step>()
    }
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

#[cfg(test)]
mod tests;
