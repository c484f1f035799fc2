//! The prependable encoder: the exact tokens of a text that grows at the
//! front.
//!
//! The split patterns have no look-behind, so the pieces from any piece
//! boundary on depend only on the text from there: after a prepend, the new
//! split from the front agrees with the old one from the first old boundary
//! it lands on. The encoder keeps the old boundaries (as distances from the
//! end, which prepending does not move) with the token count from each to
//! the end, re-splits from the front until it lands on one (usually the end
//! of the first word), and encodes only the new pieces before it. Each of
//! those is encoded from a per-piece table of the first token of every
//! suffix (`incremental.rs`), kept by piece end, so a byte prepended to a
//! growing first piece costs one table step.

use crate::incremental::SuffixTable;
use crate::tokenizer::Tokenizer;

/// Prepends are settled (re-split) once this many bytes have come since the
/// last settling (half the first piece when that is longer), or when read.
const BATCH: usize = 16;

/// A first piece at least this long keeps a suffix table, extended on every
/// prepend; a shorter one is encoded when the tokens are read or when it
/// stops being the first piece.
const TABLE_MIN: usize = 32;

/// Encodes a text that grows by prepending;
/// [`PrependableEncoder::tokens`] always equals [`Tokenizer::encode`] of the
/// text so far.
///
/// ```
/// let tok = structgen_bpe::Tokenizer::o200k_base();
/// let mut enc = structgen_bpe::PrependableEncoder::new(&tok);
/// for word in ["!", "ld", " wor", ",", "Hello"] {
///     enc.push_front(word);
///     assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(enc.text()));
///     assert_eq!(enc.count(), tok.count(enc.text()));
/// }
/// ```
#[derive(Debug, Clone)]
pub struct PrependableEncoder<'t> {
    tok: &'t Tokenizer,
    /// The text is `buf[front..]` (valid UTF-8: only whole `&str`s are
    /// written); prepending writes before `front`.
    buf: Vec<u8>,
    front: usize,
    /// `(dist, count)`: a piece boundary `dist` bytes before the end and the
    /// number of tokens from it to the end; increasing, starting `(0, 0)`.
    /// The last one is the end of the first piece, which is not encoded
    /// until it is read or another piece comes in front of it.
    bounds: Vec<(usize, usize)>,
    /// The tokens after the first piece, last first.
    rev: Vec<u32>,
    /// The suffix table of a long first piece, by its end (a distance from
    /// the end of the text).
    table: Option<(usize, SuffixTable)>,
    /// Bytes prepended since the last settling (the state above describes
    /// the text without them).
    pending: usize,
}

impl<'t> PrependableEncoder<'t> {
    /// An encoder over the empty text.
    ///
    /// Exact for every tokenizer; incremental under the same conditions as
    /// [`crate::AppendingEncoder`] (no normalizer; the linear encoder for
    /// the table of a long first piece).
    pub fn new(tok: &'t Tokenizer) -> Self {
        PrependableEncoder {
            tok,
            buf: Vec::new(),
            front: 0,
            bounds: vec![(0, 0)],
            rev: Vec::new(),
            table: None,
            pending: 0,
        }
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        // Only whole `&str`s are written, in order, so this never fails.
        std::str::from_utf8(&self.buf[self.front..]).unwrap_or_default()
    }

    /// The tokens of the text so far (settles the pending prepends; the
    /// first piece is encoded by this call).
    pub fn tokens(&mut self) -> impl Iterator<Item = u32> + '_ {
        self.settle();
        self.first_tokens().into_iter().chain(self.rev.iter().rev().copied())
    }

    /// The number of tokens of the text so far (settles the pending
    /// prepends; the first piece is encoded by this call).
    pub fn count(&mut self) -> usize {
        self.settle();
        self.first_tokens().len() + self.rev.len()
    }

    /// The tokens of the first piece (of the whole text when the tokenizer
    /// is not restartable).
    fn first_tokens(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(8);
        let len = self.buf.len() - self.front;
        if !self.tok.restartable() {
            self.tok.encode_into(self.text(), &mut out);
            return out;
        }
        let end = self.bounds.last().map_or(0, |b| b.0);
        self.piece_tokens(&self.buf[self.front..], 0, len - end, &mut out);
        out
    }

    /// The tokens of the piece `text[x..y]` (`text` the current text): from
    /// the table when it covers the piece, else encoded.
    fn piece_tokens(&self, text: &[u8], x: usize, y: usize, out: &mut Vec<u32>) {
        let tok = self.tok;
        let piece = &text[x..y];
        let m = y - x;
        let table = self.table.as_ref().filter(|t| t.0 == text.len() - y && t.1.len() >= m);
        let (Some((_, table)), Some(bt)) =
            (table, tok.model.backtrack.get().and_then(Option::as_ref))
        else {
            tok.model.encode_piece(&tok.tokens, piece, out);
            return;
        };
        let _ = bt;
        let word = tok.model.whole_piece
            && table.count(m) > 1
            && if table.len() == m { table.whole_is_word() } else { m <= tok.max_token_len() };
        match word.then(|| tok.model.map.get(&tok.tokens, piece)).flatten() {
            Some(id) => out.push(id),
            None => table.tokens_into(&tok.tokens, m, out),
        }
    }

    /// Puts `s` in front of the text.
    ///
    /// Cost, amortized per byte: re-splitting from the front until the
    /// split lands on an old boundary (the new bytes plus about a word) once
    /// per batch of 16 bytes (half the first piece when that is longer),
    /// encoding the pieces that stop being first (each once), and a table
    /// step per byte of a long first piece. Reading
    /// ([`PrependableEncoder::count`], [`PrependableEncoder::tokens`])
    /// settles the pending bytes and encodes the first piece.
    pub fn push_front(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        self.make_room(s.len());
        self.front -= s.len();
        self.buf[self.front..self.front + s.len()].copy_from_slice(s.as_bytes());
        self.pending += s.len();
        // New bytes wait for a batch (half the first piece when that is
        // longer, so a huge first piece is re-split only after it grows by
        // half: `O(1)` amortized per byte); reading settles them.
        let first = self.buf.len() - self.front - self.bounds.last().map_or(0, |b| b.0);
        let batch = if first < TABLE_MIN { BATCH } else { (first / 2).max(BATCH) };
        if self.pending >= batch {
            self.settle();
        }
    }

    /// Re-splits after the bytes prepended since the last settling.
    fn settle(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let tok = self.tok;
        if pending == 0 || !tok.restartable() {
            return;
        }
        let len = self.buf.len() - self.front;
        let old_len = len - pending;
        let frontier = self.bounds.last().map_or(0, |b| b.0);
        // The common case, a word growing at the front: the new first piece
        // is `s` plus the old one, short, and ends where the old one did.
        let y = len - frontier;
        if frontier < old_len && y < TABLE_MIN {
            let mut w = (y + 16).min(len);
            while w < len && (self.buf[self.front + w] & 0xC0) == 0x80 {
                w += 1;
            }
            if let Ok(window) = std::str::from_utf8(&self.buf[self.front..self.front + w])
                && tok.pattern.piece_end(window, 0) == y
                && (w == len || crate::chunk::safe_from(window, y) <= w)
            {
                self.table = None;
                return;
            }
        }
        // Split a window of the front that grows until the split lands on
        // an old boundary that is safe for the window's end (so the pieces
        // before it are the full text's): an encoded boundary, or the old
        // front when the old first piece is not empty.
        let mut w = (pending + 64).min(len);
        let mut ends: Vec<usize> = Vec::new();
        let sync = loop {
            while w < len && (self.buf[self.front + w] & 0xC0) == 0x80 {
                w += 1;
            }
            let Ok(window) = std::str::from_utf8(&self.buf[self.front..self.front + w]) else {
                // Unreachable: the window ends on a char boundary.
                w = len;
                continue;
            };
            ends.clear();
            let mut j = self.bounds.len() - 1;
            let mut pos = 0;
            let mut sync = None;
            for piece in tok.pattern.split(window) {
                pos += piece.len();
                ends.push(pos);
                let dist = len - pos;
                let safe = || w == len || crate::chunk::safe_from(window, pos) <= w;
                if dist == old_len && old_len > frontier && safe() {
                    sync = Some(None);
                    break;
                }
                while self.bounds[j].0 > dist {
                    j -= 1;
                }
                if self.bounds[j].0 == dist && safe() {
                    sync = Some(Some(j));
                    break;
                }
            }
            match sync {
                Some(sync) => break sync,
                // The split reached the end of the text: it lands on (0, 0).
                None if w == len => break Some(0),
                None => w = (w * 2).min(len),
            }
        };
        let text = &self.buf[self.front..];
        let mut rev = std::mem::take(&mut self.rev);
        let mut scratch = Vec::new();
        match sync {
            Some(j) => {
                self.bounds.truncate(j + 1);
                rev.truncate(self.bounds[j].1);
            }
            None => {
                // The old first piece stays a piece, no longer first.
                self.piece_tokens(text, len - old_len, len - frontier, &mut scratch);
                rev.extend(scratch.iter().rev());
                self.bounds.push((old_len, rev.len()));
            }
        }
        // Encode the new pieces but the first, last first.
        for k in (1..ends.len()).rev() {
            let (x, y) = (ends[k - 1], ends[k]);
            scratch.clear();
            self.piece_tokens(text, x, y, &mut scratch);
            rev.extend(scratch.iter().rev());
            self.bounds.push((len - x, rev.len()));
        }
        self.rev = rev;
        // The first piece: a table when it is long.
        let y = ends.first().copied().unwrap_or(len);
        let key = len - y;
        if y < TABLE_MIN || tok.model.has_gap(&self.buf[self.front..self.front + y]) {
            // A piece holding a byte without a token (`model::Gaps`) is
            // encoded whole: the table steps the trie over every byte.
            self.table = None;
        } else if let Some(bt) = tok.model.byte_backtracker(&tok.tokens) {
            if self.table.as_ref().is_none_or(|t| t.0 != key) {
                self.table = Some((key, SuffixTable::new()));
            }
            if let Some((_, table)) = &mut self.table {
                table.extend(bt, &tok.model, &tok.tokens, &self.buf[self.front..], y, y);
            }
        }
    }

    /// Makes room for `extra` bytes before `front`, doubling the buffer.
    fn make_room(&mut self, extra: usize) {
        if self.front >= extra {
            return;
        }
        let len = self.buf.len() - self.front;
        let room = (len + extra).max(64);
        let mut buf = vec![0u8; room + len];
        buf[room..].copy_from_slice(&self.buf[self.front..]);
        self.buf = buf;
        self.front = room;
    }
}
