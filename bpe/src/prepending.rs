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

/// Encodes a text that grows by prepending;
/// [`PrependableEncoder::tokens`] always equals [`Tokenizer::encode`] of the
/// text so far.
///
/// ```
/// let tok = bpe::Tokenizer::o200k_base();
/// let mut enc = bpe::PrependableEncoder::new(&tok);
/// for word in ["!", "ld", " wor", ",", "Hello"] {
///     enc.push_front(word);
///     assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(enc.text()));
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
    bounds: Vec<(usize, usize)>,
    /// The tokens, last first.
    rev: Vec<u32>,
    /// Suffix tables of the newest pieces, by piece end (distance from the
    /// end); the flag marks tables used by the latest prepend.
    tables: Vec<(usize, SuffixTable, bool)>,
    /// Scratch for one piece's tokens.
    scratch: Vec<u32>,
}

impl<'t> PrependableEncoder<'t> {
    /// An encoder over the empty text.
    ///
    /// Exact for every tokenizer; incremental under the same conditions as
    /// [`crate::AppendingEncoder`] (no normalizer; the linear encoder for
    /// the per-piece tables).
    pub fn new(tok: &'t Tokenizer) -> Self {
        PrependableEncoder {
            tok,
            buf: Vec::new(),
            front: 0,
            bounds: vec![(0, 0)],
            rev: Vec::new(),
            tables: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        // Only whole `&str`s are written, in order, so this never fails.
        std::str::from_utf8(&self.buf[self.front..]).unwrap_or_default()
    }

    /// The tokens of the text so far.
    pub fn tokens(&self) -> impl Iterator<Item = u32> + '_ {
        self.rev.iter().rev().copied()
    }

    /// The number of tokens of the text so far.
    pub fn count(&self) -> usize {
        self.rev.len()
    }

    /// Puts `s` in front of the text and updates the tokens.
    ///
    /// Cost: re-splitting from the front until the split lands on an old
    /// boundary (the new text plus about a word), a table step per new
    /// byte of the first piece, and the tokens of the new pieces. A first
    /// piece that keeps growing (a megabyte of spaces prepended one by one)
    /// is re-scanned on every prepend.
    pub fn push_front(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        self.make_room(s.len());
        self.front -= s.len();
        self.buf[self.front..self.front + s.len()].copy_from_slice(s.as_bytes());
        let tok = self.tok;
        let len = self.buf.len() - self.front;
        if !tok.restartable() {
            let text = std::str::from_utf8(&self.buf[self.front..]).unwrap_or_default();
            self.rev = tok.encode(text);
            self.rev.reverse();
            self.bounds = vec![(0, 0)];
            return;
        }
        // Split a window of the front that grows until the split lands on
        // an old boundary that is safe for the window's end (so the pieces
        // before it are the full text's).
        let mut w = (s.len() + 64).min(len);
        let (window, sync, pieces) = loop {
            while w < len && (self.buf[self.front + w] & 0xC0) == 0x80 {
                w += 1;
            }
            let window = &self.buf[self.front..self.front + w];
            let Ok(window) = std::str::from_utf8(window) else {
                // Unreachable: the window ends on a char boundary.
                w = len;
                continue;
            };
            let mut ends = Vec::new();
            let mut j = self.bounds.len() - 1;
            let mut pos = 0;
            let mut sync = None;
            for piece in tok.pattern.split(window) {
                pos += piece.len();
                ends.push(pos);
                let dist = len - pos;
                while self.bounds[j].0 > dist {
                    j -= 1;
                }
                if self.bounds[j].0 == dist
                    && (w == len || crate::chunk::safe_from(window, pos) <= w)
                {
                    sync = Some(j);
                    break;
                }
            }
            match sync {
                Some(j) => break (window, j, ends),
                // The split reached the end of the text: it lands on (0, 0).
                None if w == len => break (window, 0, ends),
                None => w = (w * 2).min(len),
            }
        };
        // Replace the boundaries and tokens before the sync point.
        self.bounds.truncate(sync + 1);
        self.rev.truncate(self.bounds[sync].1);
        for t in &mut self.tables {
            t.2 = false;
        }
        let bt = tok.model.backtracker(&tok.tokens);
        let wb = window.as_bytes();
        for k in (0..pieces.len()).rev() {
            let x = if k == 0 { 0 } else { pieces[k - 1] };
            let y = pieces[k];
            let piece = &wb[x..y];
            self.scratch.clear();
            match bt {
                Some(bt) => {
                    let key = len - y;
                    let i = match self.tables.iter().position(|t| t.0 == key) {
                        Some(i) => i,
                        None => {
                            self.tables.push((key, SuffixTable::new(), false));
                            self.tables.len() - 1
                        }
                    };
                    let (_, table, used) = &mut self.tables[i];
                    *used = true;
                    let m = y - x;
                    table.extend(bt, &tok.model, &tok.tokens, wb, y, m);
                    let word = tok.model.whole_piece
                        && table.count(m) > 1
                        && if table.len() == m {
                            table.whole_is_word()
                        } else {
                            m <= tok.max_token_len()
                        };
                    match word.then(|| tok.model.map.get(&tok.tokens, piece)).flatten() {
                        Some(id) => self.scratch.push(id),
                        None => table.tokens_into(&tok.tokens, m, &mut self.scratch),
                    }
                }
                None => tok.model.encode_piece(&tok.tokens, piece, &mut self.scratch),
            }
            self.rev.extend(self.scratch.iter().rev());
            self.bounds.push((len - x, self.rev.len()));
        }
        self.tables.retain(|t| t.2);
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
