//! The BPE model of one piece: initial symbols, merge rules, and the
//! encoders (a short-piece merge loop, a heap encoder for long pieces, and the
//! brute-force reference).
//!
//! A piece starts as a list of parts (initial symbols). Two adjacent parts
//! may merge under a rule with a priority; BPE repeatedly merges the pair with
//! the lowest priority, leftmost first, until no rule applies. Rules come in
//! two flavors:
//! - [`Rules::Ranks`] (tiktoken): two parts merge when their concatenated
//!   bytes are a token; the priority and the result are that token's rank.
//! - [`Rules::Pairs`] (Hugging Face): an explicit list of `(left, right)`
//!   merges; the priority is the position in the list.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::backtrack::Backtracker;
use crate::vocab::{ByteMap, Tokens};

/// How a piece's bytes become the initial parts.
#[derive(Debug, Clone)]
pub(crate) enum Symbols {
    /// Byte `b` starts as `ids[b]`; [`NO_TOKEN`] marks a byte the
    /// vocabulary has no token for ([`Model::gaps`] says what becomes of it).
    Bytes(Box<[u32; 256]>),
    /// SentencePiece-style: every character starts as its own token when the
    /// vocabulary has it; otherwise its UTF-8 bytes become byte-fallback
    /// tokens (`<0xNN>`) when all of them exist, else the unknown token.
    Chars { fallback: Option<Box<[u32; 256]>>, unk: Option<u32>, fuse_unk: bool },
}

/// [`Symbols::Bytes`] of a byte without a token.
pub(crate) const NO_TOKEN: u32 = u32::MAX;

/// What a byte-level vocabulary does with a byte it has no token for
/// (SmolLM2 lacks 21 of the 256), as Hugging Face `tokenizers` does: the
/// byte's character is not in the vocabulary and there is no byte
/// fallback, so the character becomes the unknown token when the model
/// names one (consecutive ones fused into one with `fuse_unk`), and is
/// dropped otherwise. A dropped byte leaves no part behind, so its
/// neighbours are adjacent and may merge: `a\x04b`, one piece, can encode
/// as the token `ab`. Such pieces run the priority-queue BPE on their
/// parts; the other encoders only ever see pieces without such bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gaps {
    /// The unknown token, which stands for the missing bytes.
    pub(crate) unk: Option<u32>,
    /// Consecutive missing bytes become one unknown token.
    pub(crate) fuse_unk: bool,
}

/// The merge rules.
#[derive(Debug, Clone)]
pub(crate) enum Rules {
    /// Adjacent parts merge when their concatenation is a token; priority and
    /// result are its id (rank).
    Ranks,
    /// `(left << 32 | right) -> (priority, result)`.
    Pairs(FxHashMap<u64, (u32, u32)>),
}

/// Everything needed to encode one pre-tokenized piece.
#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) symbols: Symbols,
    pub(crate) rules: Rules,
    /// Emit a piece that is itself a token as that token without running BPE
    /// (tiktoken always does; Hugging Face with `ignore_merges`).
    pub(crate) whole_piece: bool,
    /// Bytes to id for the ordinary tokens (not specials, not byte-fallback).
    pub(crate) map: ByteMap,
    /// `Some` when the symbols are bytes and some byte has no token
    /// ([`NO_TOKEN`] in [`Symbols::Bytes`]); `None` otherwise.
    pub(crate) gaps: Option<Gaps>,
    /// The vocabulary is known to meet the linear-time encoder's
    /// requirements (the embedded ones; a test checks), so its per-token
    /// tables can be filled lazily instead of checked up front.
    pub(crate) known_monotone: bool,
    /// The linear-time encoder, when the vocabulary admits it (byte symbols
    /// and consistent priorities); built on first use of a long piece.
    pub(crate) backtrack: std::sync::OnceLock<Option<Backtracker>>,
}

/// Pieces with at most this many initial parts use the quadratic merge loop,
/// which is fastest on short inputs; longer ones a linear or `n log n` one.
const SHORT: usize = 48;

/// Pieces longer than this use the backtracking encoder when the vocabulary
/// admits it: past a few characters it beats the quadratic loop.
const LINEAR_MIN: usize = 4;

/// The same for pieces ending in a non-ASCII byte (CJK pieces are runs of
/// 3-byte characters, and the quadratic loop's lookups grow with the bytes,
/// not the characters): measured on Japanese prose, without slowing ASCII
/// prose, where a short unknown word is cheapest in the merge loop.
const LINEAR_MIN_WIDE: usize = 4;

/// Whether `piece` goes to the backtracking encoder (when available).
#[inline]
fn wants_linear(piece: &[u8]) -> bool {
    piece.len() > LINEAR_MIN
        || (piece.len() > LINEAR_MIN_WIDE && piece.last().is_some_and(|&b| b >= 0x80))
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

#[derive(Debug, Clone, Copy)]
struct Part {
    /// Byte offset in the piece.
    start: u32,
    id: u32,
}

impl Model {
    /// The rule for merging `a` (at `a_start`) with its right neighbor `b`
    /// ending at `b_end`: `(priority, result)`.
    #[inline]
    pub(crate) fn pair(
        &self,
        tokens: &Tokens,
        piece: &[u8],
        a_start: usize,
        a: u32,
        b: u32,
        b_end: usize,
    ) -> Option<(u32, u32)> {
        match &self.rules {
            Rules::Ranks => self.map.get(tokens, &piece[a_start..b_end]).map(|id| (id, id)),
            Rules::Pairs(pairs) => pairs.get(&key(a, b)).copied(),
        }
    }

    fn initial_parts(&self, tokens: &Tokens, piece: &[u8], parts: &mut Vec<Part>) {
        parts.clear();
        match &self.symbols {
            Symbols::Bytes(ids) => match self.gaps {
                None => parts.extend(
                    piece
                        .iter()
                        .enumerate()
                        .map(|(i, &b)| Part { start: i as u32, id: ids[b as usize] }),
                ),
                Some(Gaps { unk, fuse_unk }) => {
                    let mut after_gap = false;
                    for (i, &b) in piece.iter().enumerate() {
                        let id = ids[b as usize];
                        if id != NO_TOKEN {
                            parts.push(Part { start: i as u32, id });
                            after_gap = false;
                        } else if let Some(unk) = unk {
                            if !(fuse_unk && after_gap) {
                                parts.push(Part { start: i as u32, id: unk });
                            }
                            after_gap = true;
                        }
                    }
                }
            },
            Symbols::Chars { fallback, unk, fuse_unk } => {
                let mut i = 0;
                while i < piece.len() {
                    let len = utf8_len(piece[i]).min(piece.len() - i);
                    let ch = &piece[i..i + len];
                    if let Some(id) = self.map.get(tokens, ch) {
                        parts.push(Part { start: i as u32, id });
                    } else if let Some(fb) = fallback
                        .as_ref()
                        .filter(|fb| ch.iter().all(|&b| fb[b as usize] != u32::MAX))
                    {
                        parts.extend(
                            ch.iter()
                                .enumerate()
                                .map(|(k, &b)| Part { start: (i + k) as u32, id: fb[b as usize] }),
                        );
                    } else if let Some(unk) = *unk {
                        let fuse = *fuse_unk && parts.last().is_some_and(|p| p.id == unk);
                        if !fuse {
                            parts.push(Part { start: i as u32, id: unk });
                        }
                    }
                    i += len;
                }
            }
        }
    }

    /// The backtracking encoder, built on first use; `None` when the
    /// vocabulary does not admit it.
    pub(crate) fn backtracker(&self, tokens: &Tokens) -> Option<&Backtracker> {
        self.backtrack
            .get_or_init(|| Backtracker::build(self, tokens, self.known_monotone))
            .as_ref()
    }

    /// The backtracking encoder when the symbols are bytes: the
    /// incremental encoders step its trie byte by byte from any position.
    pub(crate) fn byte_backtracker(&self, tokens: &Tokens) -> Option<&Backtracker> {
        match self.symbols {
            Symbols::Bytes(_) => self.backtracker(tokens),
            Symbols::Chars { .. } => None,
        }
    }

    /// Whether `bytes` holds a byte without a token (see [`Gaps`]).
    #[inline]
    pub(crate) fn has_gap(&self, bytes: &[u8]) -> bool {
        match (&self.gaps, &self.symbols) {
            (Some(_), Symbols::Bytes(ids)) => bytes.iter().any(|&b| ids[b as usize] == NO_TOKEN),
            _ => false,
        }
    }

    /// The number of bytes of `bytes` that have a token.
    pub(crate) fn present(&self, bytes: &[u8]) -> usize {
        match (&self.gaps, &self.symbols) {
            (Some(_), Symbols::Bytes(ids)) => {
                bytes.iter().filter(|&&b| ids[b as usize] != NO_TOKEN).count()
            }
            _ => bytes.len(),
        }
    }

    /// The length of the shortest prefix of `bytes` holding `n` bytes that
    /// have a token (all of `bytes` when there are fewer).
    pub(crate) fn present_prefix(&self, bytes: &[u8], n: usize) -> usize {
        match (&self.gaps, &self.symbols) {
            (Some(_), Symbols::Bytes(ids)) => {
                let mut seen = 0;
                for (i, &b) in bytes.iter().enumerate() {
                    if seen == n {
                        return i;
                    }
                    seen += usize::from(ids[b as usize] != NO_TOKEN);
                }
                bytes.len()
            }
            _ => n.min(bytes.len()),
        }
    }

    /// Encodes one piece, appending its tokens to `out`.
    pub(crate) fn encode_piece(&self, tokens: &Tokens, piece: &[u8], out: &mut Vec<u32>) {
        if piece.is_empty() {
            return;
        }
        if self.whole_piece
            && let Some(id) = self.map.get(tokens, piece)
        {
            out.push(id);
            return;
        }
        if self.has_gap(piece) {
            // Rare (control characters, bytes never in UTF-8): BPE on the
            // parts that remain, which the byte encoders cannot take.
            let mut parts = Vec::with_capacity(piece.len());
            self.initial_parts(tokens, piece, &mut parts);
            if !parts.is_empty() {
                self.merge_heap(tokens, piece, &parts, out);
            }
            return;
        }
        if wants_linear(piece)
            && let Some(bt) = self.backtracker(tokens)
        {
            match self.symbols {
                Symbols::Bytes(_) => bt.encode(self, tokens, piece, out),
                Symbols::Chars { .. } => self.encode_chars_linear(bt, tokens, piece, out),
            }
            return;
        }
        if let Symbols::Bytes(ids) = &self.symbols
            && piece.len() <= SHORT
        {
            self.merge_small(tokens, piece, ids, out);
            return;
        }
        let mut parts = Vec::with_capacity(piece.len());
        self.initial_parts(tokens, piece, &mut parts);
        if parts.len() <= SHORT {
            self.merge_loop(tokens, piece, &mut parts);
            out.extend(parts.iter().map(|p| p.id));
        } else {
            self.merge_heap(tokens, piece, &parts, out);
        }
    }

    /// A long piece of a vocabulary with character symbols: runs of
    /// characters that have a token go to the backtracking encoder; a run of
    /// characters without one becomes byte-fallback (or unknown) tokens.
    /// Exact because no merge involves a byte-fallback or unknown token (the
    /// backtracker is only built then), so no merge crosses such a run.
    fn encode_chars_linear(
        &self,
        bt: &Backtracker,
        tokens: &Tokens,
        piece: &[u8],
        out: &mut Vec<u32>,
    ) {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < piece.len() {
            let start = i;
            let has_token = |i: usize| {
                let len = utf8_len(piece[i]).min(piece.len() - i);
                (bt.char_has_token(&piece[i..i + len]), len)
            };
            let (known, len) = has_token(i);
            i += len;
            while i < piece.len() {
                let (k, len) = has_token(i);
                if k != known {
                    break;
                }
                i += len;
            }
            let run = &piece[start..i];
            if known {
                bt.encode(self, tokens, run, out);
            } else {
                self.initial_parts(tokens, run, &mut parts);
                out.extend(parts.iter().map(|p| p.id));
            }
        }
    }

    /// The number of tokens [`Model::encode_piece`] would append, without
    /// allocating for short pieces (`buf` serves long ones).
    pub(crate) fn count_piece(&self, tokens: &Tokens, piece: &[u8], buf: &mut Vec<u32>) -> usize {
        if piece.is_empty() {
            return 0;
        }
        if self.whole_piece && self.map.get(tokens, piece).is_some() {
            return 1;
        }
        if let Symbols::Bytes(ids) = &self.symbols
            && !wants_linear(piece)
            && !self.has_gap(piece)
        {
            return self.merge_small_ids(tokens, piece, ids).1;
        }
        buf.clear();
        self.encode_piece(tokens, piece, buf);
        buf.len()
    }

    /// The merge loop for short byte pieces, on stack arrays (no
    /// allocation): one rule per adjacent pair, rescanned for the minimum
    /// after each merge, like tiktoken.
    fn merge_small(&self, tokens: &Tokens, piece: &[u8], ids: &[u32; 256], out: &mut Vec<u32>) {
        let (id, n) = self.merge_small_ids(tokens, piece, ids);
        out.extend_from_slice(&id[..n]);
    }

    /// [`Model::merge_small`]'s tokens: the first `n` of the array.
    #[inline]
    fn merge_small_ids(
        &self,
        tokens: &Tokens,
        piece: &[u8],
        ids: &[u32; 256],
    ) -> ([u32; SHORT], usize) {
        const NO: u32 = u32::MAX;
        let m = piece.len();
        debug_assert!(m <= SHORT && SHORT < 256);
        // Part i covers piece[start[i]..start[i + 1]]; rule i merges parts i
        // and i + 1 with priority prio[i] into res[i].
        let mut start = [0u8; SHORT + 1];
        let mut id = [0u32; SHORT];
        let mut prio = [NO; SHORT];
        let mut res = [0u32; SHORT];
        for (i, &b) in piece.iter().enumerate() {
            start[i] = i as u8;
            id[i] = ids[b as usize];
        }
        start[m] = m as u8;
        let mut n = m;
        let rule = |start: &[u8], id: &[u32], i: usize| {
            self.pair(tokens, piece, start[i] as usize, id[i], id[i + 1], start[i + 2] as usize)
                .unwrap_or((NO, 0))
        };
        for i in 0..n - 1 {
            (prio[i], res[i]) = rule(&start, &id, i);
        }
        loop {
            let mut best = NO;
            let mut bi = 0;
            for (i, &p) in prio[..n - 1].iter().enumerate() {
                if p < best {
                    best = p;
                    bi = i;
                }
            }
            if best == NO {
                break;
            }
            id[bi] = res[bi];
            start.copy_within(bi + 2..=n, bi + 1);
            id.copy_within(bi + 2..n, bi + 1);
            if bi + 2 < n {
                prio.copy_within(bi + 2..n - 1, bi + 1);
                res.copy_within(bi + 2..n - 1, bi + 1);
            }
            n -= 1;
            prio[n - 1] = NO;
            if bi + 1 < n {
                (prio[bi], res[bi]) = rule(&start, &id, bi);
            } else {
                prio[bi] = NO;
            }
            if bi > 0 {
                (prio[bi - 1], res[bi - 1]) = rule(&start, &id, bi - 1);
            }
        }
        (id, n)
    }

    /// The quadratic merge loop for short pieces: keeps the priority of every
    /// adjacent pair and rescans for the minimum after each merge.
    fn merge_loop(&self, tokens: &Tokens, piece: &[u8], parts: &mut Vec<Part>) {
        let end =
            |parts: &[Part], i: usize| parts.get(i + 1).map_or(piece.len(), |p| p.start as usize);
        // rules[i]: the rule merging parts[i] and parts[i + 1].
        let mut rules: Vec<Option<(u32, u32)>> = (0..parts.len().saturating_sub(1))
            .map(|i| {
                self.pair(
                    tokens,
                    piece,
                    parts[i].start as usize,
                    parts[i].id,
                    parts[i + 1].id,
                    end(parts, i + 1),
                )
            })
            .collect();
        while let Some((i, _, result)) = lowest_rule(&rules) {
            parts[i].id = result;
            parts.remove(i + 1);
            rules.remove(i);
            if i < rules.len() {
                rules[i] = self.pair(
                    tokens,
                    piece,
                    parts[i].start as usize,
                    parts[i].id,
                    parts[i + 1].id,
                    end(parts, i + 1),
                );
            }
            if i > 0 {
                rules[i - 1] = self.pair(
                    tokens,
                    piece,
                    parts[i - 1].start as usize,
                    parts[i - 1].id,
                    parts[i].id,
                    end(parts, i),
                );
            }
        }
    }

    /// BPE with a priority queue: `O(m log m)` for `m` initial parts.
    fn merge_heap(&self, tokens: &Tokens, piece: &[u8], parts: &[Part], out: &mut Vec<u32>) {
        const NONE: u32 = u32::MAX;
        let n = parts.len();
        let mut id: Vec<u32> = parts.iter().map(|p| p.id).collect();
        let start: Vec<u32> = parts.iter().map(|p| p.start).collect();
        let mut next: Vec<u32> = (1..=n as u32).collect();
        next[n - 1] = NONE;
        let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
        prev[0] = NONE;
        let end_of = |next: &[u32], i: usize| -> usize {
            let j = next[i];
            if j == NONE { piece.len() } else { start[j as usize] as usize }
        };
        // Entries: (priority, left node, left id, right id); stale entries are
        // skipped when the ids no longer match.
        let mut heap: BinaryHeap<Reverse<(u32, u32, u32, u32)>> = BinaryHeap::with_capacity(n);
        let push = |heap: &mut BinaryHeap<_>, id: &[u32], next: &[u32], l: usize| {
            let r = next[l];
            if r == NONE {
                return;
            }
            let r = r as usize;
            if let Some((prio, _)) =
                self.pair(tokens, piece, start[l] as usize, id[l], id[r], end_of(next, r))
            {
                heap.push(Reverse((prio, l as u32, id[l], id[r])));
            }
        };
        for l in 0..n {
            push(&mut heap, &id, &next, l);
        }
        while let Some(Reverse((_, l, lid, rid))) = heap.pop() {
            let l = l as usize;
            let r = next[l];
            if id[l] != lid || r == NONE || id[r as usize] != rid {
                continue;
            }
            let r = r as usize;
            let Some((_, result)) =
                self.pair(tokens, piece, start[l] as usize, lid, rid, end_of(&next, r))
            else {
                continue;
            };
            id[l] = result;
            id[r] = NONE;
            next[l] = next[r];
            if next[r] != NONE {
                prev[next[r] as usize] = l as u32;
            }
            push(&mut heap, &id, &next, l);
            if prev[l] != NONE {
                push(&mut heap, &id, &next, prev[l] as usize);
            }
        }
        let mut i = 0u32;
        while i != NONE {
            out.push(id[i as usize]);
            i = next[i as usize];
        }
    }

    /// The brute-force reference: rescan every adjacent pair after each
    /// merge. Quadratic; for tests.
    pub(crate) fn encode_piece_reference(&self, tokens: &Tokens, piece: &[u8], out: &mut Vec<u32>) {
        if piece.is_empty() {
            return;
        }
        if self.whole_piece
            && let Some(id) = self.map.get(tokens, piece)
        {
            out.push(id);
            return;
        }
        self.merge_reference(tokens, piece, out);
    }

    /// The brute-force merge loop without the whole-piece shortcut.
    pub(crate) fn merge_reference(&self, tokens: &Tokens, piece: &[u8], out: &mut Vec<u32>) {
        let mut parts = Vec::new();
        self.initial_parts(tokens, piece, &mut parts);
        loop {
            let mut best: Option<(u32, usize, u32)> = None;
            for i in 0..parts.len().saturating_sub(1) {
                let end = parts.get(i + 2).map_or(piece.len(), |p| p.start as usize);
                if let Some((prio, res)) = self.pair(
                    tokens,
                    piece,
                    parts[i].start as usize,
                    parts[i].id,
                    parts[i + 1].id,
                    end,
                ) && best.is_none_or(|(p, _, _)| prio < p)
                {
                    best = Some((prio, i, res));
                }
            }
            let Some((_, i, res)) = best else { break };
            parts[i].id = res;
            parts.remove(i + 1);
        }
        out.extend(parts.iter().map(|p| p.id));
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let rules = match &self.rules {
            Rules::Ranks => 0,
            Rules::Pairs(p) => p.capacity() * 20,
        };
        let bt = self.backtrack.get().and_then(|b| b.as_ref()).map_or(0, |b| b.heap_bytes());
        self.map.heap_bytes() + rules + bt
    }
}

/// The next merge of a naive BPE pass: the applicable rule of lowest
/// priority, leftmost on ties, as `(index, priority, result)`; `rules[i]`
/// is the rule merging parts `i` and `i + 1`, if any.
#[inline]
pub(crate) fn lowest_rule(rules: &[Option<(u32, u32)>]) -> Option<(usize, u32, u32)> {
    let mut best: Option<(usize, u32, u32)> = None;
    for (i, r) in rules.iter().enumerate() {
        if let Some((prio, res)) = *r
            && best.is_none_or(|(_, p, _)| prio < p)
        {
            best = Some((i, prio, res));
        }
    }
    best
}

/// The length of the UTF-8 sequence a lead byte announces (1 for stray
/// continuation bytes, so malformed input still advances).
#[inline]
pub(crate) fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}
