//! Per-piece tables of the incremental encoders: the last token of the BPE
//! encoding of every prefix of a piece (for appending) and the first token
//! of every suffix (for prepending).
//!
//! Both follow GitHub's rust-gems `bpe` (see `DESIGN.md`): the encoding of a
//! string is determined by its last token (drop it, look up the last token of
//! the shorter prefix, and so on), and the last token of a prefix is the one
//! candidate ending there that is compatible with the last token of the
//! prefix before it. Exactly one candidate passes (BPE output is unique and
//! a sequence of pairwise compatible valid tokens is the BPE output), so the
//! order of the tries does not matter for exactness; longest first is the
//! fastest order because it usually wins.
//!
//! Extending a table by one byte costs the candidates examined: the tokens
//! ending (or starting) at that byte, at most `L` (longest token) and about
//! three on text, each a compatibility check of a few lookups.

use crate::backtrack::{Backtracker, NONE, ROOT};
use crate::model::Model;
use crate::vocab::Tokens;

/// The last token of every prefix of `text[start..]`, grown at the end.
#[derive(Debug, Clone)]
pub(crate) struct PrefixTable {
    /// Piece start in the text.
    pub(crate) start: usize,
    /// `last[k]`: the last token of BPE(`text[start..start + k]`), `k >= 1`;
    /// `last[0]` is unused. `last.len() == depth.len()`.
    last: Vec<u32>,
    /// `depth[k]`: the number of tokens of that encoding.
    depth: Vec<u32>,
    /// `(k0, node)`: `text[start + k0..start + len]` spells trie node `node`
    /// (a prefix of some token), by increasing `k0` (longest first).
    active: Vec<(u32, u32)>,
}

impl PrefixTable {
    /// The table of the empty prefix at `start`.
    pub(crate) fn new(start: usize) -> PrefixTable {
        PrefixTable { start, last: vec![NONE], depth: vec![0], active: Vec::new() }
    }

    /// The number of bytes covered.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.last.len() - 1
    }

    /// Extends the table to cover `text[start..end]` (`text` only grows at
    /// the end between calls, so covered bytes never change).
    pub(crate) fn extend(
        &mut self,
        bt: &Backtracker,
        model: &Model,
        tokens: &Tokens,
        text: &[u8],
        end: usize,
    ) {
        while self.start + self.len() < end {
            let k = self.len();
            let b = text[self.start + k];
            let mut w = 0;
            for r in 0..self.active.len() {
                let (k0, n) = self.active[r];
                let n = bt.step(n, b);
                if n != NONE {
                    self.active[w] = (k0, n);
                    w += 1;
                }
            }
            self.active.truncate(w);
            let n = bt.step(ROOT, b);
            if n != NONE {
                self.active.push((k as u32, n));
            }
            let mut chosen = (NONE, k);
            // First the previous prefix's last token grown by this byte: in
            // a run (of spaces, of one letter) the last token usually grows
            // byte by byte, and the longest candidates all fail. Any order
            // is exact (one candidate passes).
            let grown = (k > 0 && self.last[k] != NONE)
                .then(|| (k - tokens.token_len(self.last[k])) as u32);
            let first = grown.and_then(|g| self.active.iter().position(|&(k0, _)| k0 == g));
            let order =
                first.into_iter().chain((0..self.active.len()).filter(|&r| Some(r) != first));
            for r in order {
                let (k0, n) = self.active[r];
                let t = bt.node_token(model, tokens, n);
                if t == NONE {
                    continue;
                }
                let k0 = k0 as usize;
                if k0 != 0 && self.last[k0] == NONE {
                    // Inside a character: no token ends there.
                    continue;
                }
                if k0 == 0
                    || bt.pair_compatible(model, tokens, text, self.start + k0, self.last[k0], t)
                {
                    chosen = (t, k0);
                    break;
                }
            }
            // Some candidate always passes at a symbol boundary (the BPE
            // output of the prefix ends with a valid token). With character
            // symbols (SentencePiece-style) no token ends inside a
            // multi-byte character: such a position keeps no token and the
            // count of the character boundary before it; callers ask only
            // at character boundaries.
            if chosen.0 == NONE {
                let n = bt.step(ROOT, b);
                let single = if n == NONE { NONE } else { bt.node_token(model, tokens, n) };
                if single == NONE {
                    self.last.push(NONE);
                    self.depth.push(self.depth[k]);
                    continue;
                }
                chosen = (single, k);
            }
            let (t, k0) = chosen;
            self.last.push(t);
            self.depth.push(self.depth[k0] + 1);
        }
    }

    /// Whether `text[start..start + len]` is one ordinary token (valid or
    /// not): the whole-piece shortcut. Only for the full covered length.
    #[inline]
    pub(crate) fn whole_is_word(&self, bt: &Backtracker) -> bool {
        self.active.first().is_some_and(|&(k0, n)| k0 == 0 && bt.node_is_word(n))
    }

    /// The number of tokens of BPE(`text[start..start + k]`), `k <= len`.
    #[inline]
    pub(crate) fn count(&self, k: usize) -> usize {
        self.depth[k] as usize
    }

    /// Appends the tokens of BPE(`text[start..start + k]`) to `out`.
    pub(crate) fn tokens_into(&self, tokens: &Tokens, k: usize, out: &mut Vec<u32>) {
        let base = out.len();
        let mut k = k;
        while k > 0 {
            let t = self.last[k];
            out.push(t);
            k -= tokens.token_len(t);
        }
        out[base..].reverse();
    }
}

/// The first token of every suffix of `text[..end]`, grown at the front.
/// Positions are counted back from `end` so that they survive prepending.
#[derive(Debug, Clone)]
pub(crate) struct SuffixTable {
    /// `first[m]`: the first token of BPE of the `m` bytes before the end,
    /// `m >= 1`; `first[0]` is unused.
    first: Vec<u32>,
    /// `depth[m]`: the number of tokens of that encoding.
    depth: Vec<u32>,
    /// Whether the `len` bytes covered are one ordinary token.
    whole_word: bool,
    /// Scratch: `(length, token)` candidates of one extension.
    cands: Vec<(u32, u32)>,
}

impl SuffixTable {
    pub(crate) fn new() -> SuffixTable {
        SuffixTable { first: vec![NONE], depth: vec![0], whole_word: false, cands: Vec::new() }
    }

    /// The number of bytes covered.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.first.len() - 1
    }

    /// Extends the table to cover `text[end - m..end]`.
    pub(crate) fn extend(
        &mut self,
        bt: &Backtracker,
        model: &Model,
        tokens: &Tokens,
        text: &[u8],
        end: usize,
        m: usize,
    ) {
        while self.len() < m {
            let m1 = self.len() + 1;
            let x = end - m1;
            self.cands.clear();
            let mut n = ROOT;
            let mut reached_end = false;
            for (i, &b) in text[x..end].iter().enumerate() {
                n = bt.step(n, b);
                if n == NONE {
                    break;
                }
                let t = bt.node_token(model, tokens, n);
                if t != NONE {
                    self.cands.push((i as u32 + 1, t));
                }
                reached_end = i + 1 == m1;
            }
            self.whole_word = reached_end && n != NONE && bt.node_is_word(n);
            let mut chosen = (NONE, 1);
            for &(l, t) in self.cands.iter().rev() {
                let l = l as usize;
                if l == m1 || bt.pair_compatible(model, tokens, text, x + l, t, self.first[m1 - l])
                {
                    chosen = (t, l);
                    break;
                }
            }
            debug_assert!(chosen.0 != NONE, "no compatible first token");
            if chosen.0 == NONE {
                chosen = (bt.node_token(model, tokens, bt.step(ROOT, text[x])), 1);
            }
            let (t, l) = chosen;
            self.first.push(t);
            self.depth.push(self.depth[m1 - l] + 1);
        }
    }

    /// Whether the `len` covered bytes are one ordinary token.
    #[inline]
    pub(crate) fn whole_is_word(&self) -> bool {
        self.whole_word
    }

    /// The number of tokens of BPE of the last `m` bytes, `m <= len`.
    #[inline]
    pub(crate) fn count(&self, m: usize) -> usize {
        self.depth[m] as usize
    }

    /// Appends the tokens of BPE of the last `m` bytes to `out`, in order.
    pub(crate) fn tokens_into(&self, tokens: &Tokens, m: usize, out: &mut Vec<u32>) {
        let mut m = m;
        while m > 0 {
            let t = self.first[m];
            out.push(t);
            m -= tokens.token_len(t);
        }
    }
}

/// The number of tokens of BPE of `c` repeated `k` times, for every `k`
/// up to `max`: the prefix table of a run of one byte, where the candidates
/// ending at a position are the runs of `c` that are valid tokens.
pub(crate) fn run_counts(
    bt: &Backtracker,
    model: &Model,
    tokens: &Tokens,
    c: u8,
    max: usize,
) -> Vec<u32> {
    // Lengths l with c^l a valid token, longest first.
    let mut lens: Vec<(usize, u32)> = Vec::new();
    let mut n = ROOT;
    let mut l = 0;
    while l < max {
        n = bt.step(n, c);
        if n == NONE {
            break;
        }
        l += 1;
        let t = bt.node_token(model, tokens, n);
        if t != NONE {
            lens.push((l, t));
        }
    }
    lens.reverse();
    let longest = lens.first().map_or(1, |&(l, _)| l);
    let buf = vec![c; 2 * longest];
    let mut last = vec![NONE; max + 1];
    let mut depth = vec![0u32; max + 1];
    for k in 1..=max {
        for &(l, t) in &lens {
            if l > k {
                continue;
            }
            // Compatibility of (last[k - l], t) only looks at their bytes,
            // all `c`: any buffer of c's with the boundary in place serves.
            if l == k || {
                let a = last[k - l];
                let la = tokens.token_len(a);
                bt.pair_compatible(model, tokens, &buf[longest - la.min(longest)..], la, a, t)
            } {
                last[k] = t;
                depth[k] = depth[k - l] + 1;
                break;
            }
        }
        if last[k] == NONE {
            // Unreachable for a byte-symbol vocabulary (the byte is a valid
            // token and some candidate passes); keep the table total.
            last[k] = lens.last().map_or(NONE, |&(_, t)| t);
            depth[k] = depth[k - 1] + 1;
        }
    }
    depth
}
