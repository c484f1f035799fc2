//! Interval counting: the token count of any range of a preprocessed text,
//! equal to [`Tokenizer::count`] of that range, in near-constant time.
//!
//! The count of `text[a..b]` is a sum over the pieces of its own
//! pre-tokenization. Those pieces agree with the full text's pieces between
//! two points (see `DESIGN.md`, "Interval counting"):
//! - from the first position at or after `a` where the range's split lands
//!   on a full-text piece boundary `s` (the split from `s` only depends on
//!   the text from `s`), usually the end of the first piece;
//! - up to the last full-text boundary `e` that is *safe* for `b` (every
//!   regex match before `e` only looked at characters before `b`; found by
//!   binary search because the safe position grows with the boundary).
//!
//! Between `s` and `e` the count is a difference of prefix sums. The pieces
//! before `s` and after `e` (typically one or two words) are usually a
//! suffix or a prefix of a full-text piece, whose counts are stored for
//! every byte; other pieces are encoded. Two more shortcuts keep long runs
//! of whitespace constant-time: a piece inside a run of one whitespace byte
//! has its count looked up in a table of BPE counts of that byte repeated
//! `k` times, and the end of such a piece is found by jumping over the run
//! instead of scanning it.

use std::ops::Range;

use crate::backtrack::{Backtracker, NONE};
use crate::incremental::{PrefixTable, SuffixTable, run_counts};
use crate::tokenizer::Tokenizer;

/// Runs of one whitespace byte at least this long get a count table and a
/// jump; shorter ones are scanned and encoded.
const RUN_MIN: usize = 64;

/// Pieces at most this long get their prefix and suffix counts by direct
/// encoding; longer ones from the incremental tables.
const DIRECT_MAX: usize = 24;

/// A text preprocessed for counting the tokens of any of its ranges.
///
/// `count(a..b)` equals `tok.count(&text[a..b])` (see the module docs for
/// the algorithm and [`IntervalEncoding::count`] for its cost).
///
/// ```
/// let tok = structgen_bpe::Tokenizer::o200k_base();
/// let text = "Hello, world! Counting a range costs a few lookups.";
/// let iv = structgen_bpe::IntervalEncoding::new(&tok, text);
/// assert_eq!(iv.count(7..30), tok.count(&text[7..30]));
/// ```
#[derive(Debug)]
pub struct IntervalEncoding<'t> {
    tok: &'t Tokenizer,
    text: &'t str,
    /// Whether ranges are counted from the full text's pieces; false for
    /// tokenizers with a normalizer or no split pattern (SentencePiece
    /// style) and texts of 4 GiB or more, where every range is encoded.
    fast: bool,
    /// Piece boundaries of the full text, increasing, from 0 to `text.len()`.
    bounds: Vec<u32>,
    /// `cum[i]`: tokens of the full text's pieces before `bounds[i]`.
    cum: Vec<u32>,
    /// `safe[i]`: the smallest range end for which `bounds[i]` is safe
    /// (`chunk::safe_from`); non-decreasing in `i`.
    safe: Vec<u32>,
    /// `pre[p]`: the token count of `text[s..p]` encoded as a piece, `s`
    /// the start of the full-text piece holding byte `p - 1`; `NONE` when
    /// not computed (long pieces without the linear encoder).
    pre: Vec<u32>,
    /// `suf[p]`: the token count of `text[p..e]` encoded as a piece, `e` the
    /// end of the full-text piece holding byte `p`; `NONE` when not computed.
    suf: Vec<u32>,
    /// `piece[p]`: the index of the full-text piece holding byte `p`
    /// (`bounds[piece[p]] <= p < bounds[piece[p] + 1]`).
    piece: Vec<u32>,
    /// Maximal runs of one ASCII whitespace byte of at least `RUN_MIN`
    /// bytes, `(start, end)`, increasing.
    runs: Vec<(u32, u32)>,
    /// `(byte, counts)`: `counts[k]` is the token count of BPE of the byte
    /// repeated `k` times, for `k` up to its longest run; empty when the
    /// vocabulary has no linear encoder.
    run_counts: Vec<(u8, Vec<u32>)>,
    /// The tokenizer's linear encoder, when it has one.
    bt: Option<&'t Backtracker>,
}

impl<'t> IntervalEncoding<'t> {
    /// Preprocesses `text`: one encoding pass, the token counts of every
    /// prefix and suffix of every piece, and a scan for whitespace runs.
    /// `O(n)` time (a few times [`Tokenizer::count`]; long pieces use the
    /// incremental tables, a table step per byte); `12` bytes per byte of
    /// text plus `12` per piece plus `4` per byte of the longest run of each
    /// whitespace byte.
    pub fn new(tok: &'t Tokenizer, text: &'t str) -> IntervalEncoding<'t> {
        let mut iv = IntervalEncoding {
            tok,
            text,
            // A byte without a token (`model::Gaps`) breaks the tables'
            // premise that every byte is a token: such texts count each
            // range.
            fast: tok.restartable()
                && text.len() < u32::MAX as usize - 1
                && !tok.model.has_gap(text.as_bytes()),
            bounds: Vec::new(),
            cum: Vec::new(),
            safe: Vec::new(),
            piece: Vec::new(),
            pre: Vec::new(),
            suf: Vec::new(),
            runs: Vec::new(),
            run_counts: Vec::new(),
            bt: None,
        };
        if !iv.fast {
            return iv;
        }
        let mut buf = Vec::new();
        let (mut pos, mut n) = (0usize, 0usize);
        iv.bounds.push(0);
        iv.cum.push(0);
        for piece in tok.pattern.split(text) {
            buf.clear();
            tok.model.encode_piece(&tok.tokens, piece.as_bytes(), &mut buf);
            pos += piece.len();
            n += buf.len();
            iv.bounds.push(pos as u32);
            iv.cum.push(n.min(u32::MAX as usize) as u32);
        }
        iv.piece = Vec::with_capacity(text.len());
        for (i, w) in iv.bounds.windows(2).enumerate() {
            iv.piece.extend(std::iter::repeat_n(i as u32, (w[1] - w[0]) as usize));
        }
        iv.safe =
            iv.bounds.iter().map(|&b| crate::chunk::safe_from(text, b as usize) as u32).collect();
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut longest = [0usize; 256];
        while i < bytes.len() {
            let c = bytes[i];
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] == c {
                j += 1;
            }
            if j - i >= RUN_MIN && matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C) {
                iv.runs.push((i as u32, j as u32));
                longest[c as usize] = longest[c as usize].max(j - i);
            }
            i = j;
        }
        iv.bt = tok.model.byte_backtracker(&tok.tokens);
        iv.piece_prefix_suffix_counts();
        if let Some(bt) = iv.bt {
            for (c, &max) in longest.iter().enumerate() {
                if max > 0 {
                    let counts = run_counts(bt, &tok.model, &tok.tokens, c as u8, max);
                    iv.run_counts.push((c as u8, counts));
                }
            }
        }
        iv
    }

    /// Fills `pre` and `suf`: short pieces by encoding every prefix and
    /// suffix (a few times the cost of encoding the piece), long ones with
    /// the incremental tables (linear).
    fn piece_prefix_suffix_counts(&mut self) {
        let tok = self.tok;
        let bytes = self.text.as_bytes();
        let n = bytes.len();
        self.pre = vec![NONE; n + 1];
        self.suf = vec![NONE; n + 1];
        self.pre[0] = 0;
        let mut buf = Vec::new();
        // The whole-piece shortcut: a piece that is a token is one token.
        let word = |p: &[u8]| {
            tok.model.whole_piece
                && p.len() <= tok.max_token_len()
                && tok.model.map.get(&tok.tokens, p).is_some()
        };
        for w in self.bounds.windows(2) {
            let (s, e) = (w[0] as usize, w[1] as usize);
            if e - s <= DIRECT_MAX {
                for p in s + 1..=e {
                    self.pre[p] = tok.model.count_piece(&tok.tokens, &bytes[s..p], &mut buf) as u32;
                }
                for p in s..e {
                    self.suf[p] = tok.model.count_piece(&tok.tokens, &bytes[p..e], &mut buf) as u32;
                }
                continue;
            }
            let Some(bt) = self.bt else { continue };
            let mut pt = PrefixTable::new(s);
            pt.extend(bt, &tok.model, &tok.tokens, bytes, e);
            for p in s + 1..=e {
                self.pre[p] = if word(&bytes[s..p]) { 1 } else { pt.count(p - s) as u32 };
            }
            let mut st = SuffixTable::new();
            st.extend(bt, &tok.model, &tok.tokens, &bytes[..e], e, e - s);
            for p in s..e {
                self.suf[p] = if word(&bytes[p..e]) { 1 } else { st.count(e - p) as u32 };
            }
        }
    }

    /// The text.
    pub fn text(&self) -> &'t str {
        self.text
    }

    /// The token count of `text[range]` encoded on its own
    /// ([`Tokenizer::count`]).
    ///
    /// Cost: a few table lookups and a scan of the pieces of the range
    /// before it meets the full text's split and after the last boundary
    /// that is safe for its end (usually a word at each end, whose counts
    /// are stored). Runs of one whitespace byte cost a lookup whatever their
    /// length. A piece of the range that is neither a prefix nor a suffix
    /// of a full-text piece nor inside a whitespace run is encoded: rare
    /// (`!!word` cut after the first `!`), but a range inside one huge
    /// piece (a megabyte of random letters) encodes its part of the piece.
    ///
    /// # Panics
    /// When the range is out of bounds or does not start and end on char
    /// boundaries (like slicing `text`); [`IntervalEncoding::try_count`]
    /// returns `None` instead.
    pub fn count(&self, range: Range<usize>) -> usize {
        match self.try_count(range.clone()) {
            Some(n) => n,
            None => panic!("range {range:?} is out of bounds or not on char boundaries"),
        }
    }

    /// [`IntervalEncoding::count`], or `None` when the range is out of
    /// bounds or not on char boundaries.
    pub fn try_count(&self, range: Range<usize>) -> Option<usize> {
        let (a, b) = (range.start, range.end);
        let sub = self.text.get(a..b)?;
        if !self.fast {
            return Some(self.tok.count(sub));
        }
        let text = &self.text[..b];
        let mut buf = Vec::new();
        let mut n = 0usize;
        let mut pos = a;
        let mut synced = false;
        while pos < b {
            if !synced && let Some(i) = self.boundary_index(pos) {
                synced = true;
                // The last boundary that is safe for b: walk back from
                // the piece holding b - 1 (safe positions grow with the
                // boundary; usually a step or two).
                let mut j = self.piece[b - 1] as usize;
                while j > i && self.safe[j] as usize > b {
                    j -= 1;
                }
                if j > i {
                    n += (self.cum[j] - self.cum[i]) as usize;
                    pos = self.bounds[j] as usize;
                    continue;
                }
            }
            let end = self.piece_end(text, pos);
            n += self.piece_count(text, pos, end, &mut buf);
            pos = end;
        }
        Some(n)
    }

    /// The index `i` with `bounds[i] == pos`, if `pos < text.len()` is a
    /// full-text piece boundary.
    #[inline]
    fn boundary_index(&self, pos: usize) -> Option<usize> {
        let i = self.piece[pos] as usize;
        (self.bounds[i] as usize == pos).then_some(i)
    }

    /// The maximal run of one whitespace byte that contains `pos`.
    #[inline]
    fn run_at(&self, pos: usize) -> Option<(usize, usize)> {
        let k = self.runs.partition_point(|r| r.0 as usize <= pos);
        let (s, e) = *self.runs.get(k.checked_sub(1)?)?;
        (pos < e as usize).then_some((s as usize, e as usize))
    }

    /// The end of the piece of `text` (cut at the range end) that starts at
    /// `pos`, jumping over a run of one whitespace byte.
    fn piece_end(&self, text: &str, pos: usize) -> usize {
        if let Some((_, re)) = self.run_at(pos) {
            let re = re.min(text.len());
            // With two run bytes ahead no alternative before the whitespace
            // ones can match (they need a non-space after at most one
            // leading space), and the whitespace scan of the run only
            // records its last byte and, for a newline run, its end.
            if pos + 1 < re {
                let c = text.as_bytes()[pos];
                let nl = self.tok.pattern.has_newline_alternative();
                let last_newline = (nl && (c == b'\n' || c == b'\r')).then_some(re);
                return self.tok.pattern.resume_space(text, pos, re, last_newline, re - 1);
            }
        }
        let end = self.tok.pattern.piece_end(text, pos);
        if end > pos {
            end
        } else {
            // Every alternative consumes a character; stay total regardless.
            (pos + 1..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len())
        }
    }

    /// The token count of the piece `text[x..y]`.
    fn piece_count(&self, text: &str, x: usize, y: usize, buf: &mut Vec<u32>) -> usize {
        let piece = &text.as_bytes()[x..y];
        let i = self.piece[x] as usize;
        let (s, e) = (self.bounds[i] as usize, self.bounds[i + 1] as usize);
        let known = match (x == s, y == e) {
            (true, true) => self.cum[i + 1] - self.cum[i],
            (true, false) if y < e => self.pre[y],
            (false, true) => self.suf[x],
            _ => NONE,
        };
        if known != NONE {
            return known as usize;
        }
        // Longer than any token: no whole-piece shortcut applies.
        if piece.len() > self.tok.max_token_len().max(RUN_MIN)
            && let Some((_, re)) = self.run_at(x).filter(|&(_, re)| re >= y)
        {
            debug_assert!(re >= y);
            if let Some((_, counts)) = self.run_counts.iter().find(|r| r.0 == piece[0]) {
                return counts[piece.len()] as usize;
            }
        }
        let tok = self.tok;
        tok.model.count_piece(&tok.tokens, piece, buf)
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        (self.bounds.capacity() + self.cum.capacity() + self.safe.capacity()) * 4
            + (self.piece.capacity() + self.pre.capacity() + self.suf.capacity()) * 4
            + self.runs.capacity() * 8
            + self.run_counts.iter().map(|r| r.1.capacity() * 4).sum::<usize>()
    }
}
