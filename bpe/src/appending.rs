//! The appending encoder: the exact tokens of a text that grows at the end.
//!
//! Appending can change the last pieces (the split patterns look ahead) and
//! the last tokens of a piece (BPE looks ahead), but not the pieces before a
//! *safe* boundary: one whose regex matches only looked at characters before
//! the current end (see `chunk.rs`). The encoder keeps the tokens before the
//! last safe boundary fixed. After it, the *open* pieces (usually the last
//! word or two) are re-split on every append, and each open piece is encoded
//! from a per-piece table of the last token of every prefix
//! (`incremental.rs`): the table of a piece start survives appends, so an
//! appended byte costs one table step (the tokens ending at it, each a
//! compatibility check of a few lookups) instead of a re-encoding.

use crate::incremental::PrefixTable;
use crate::tokenizer::Tokenizer;

/// Appends are settled (re-split and fixed) once this many bytes have come
/// since the last settling (half the open text when that is longer).
const BATCH: usize = 16;

/// Open pieces at least this long keep a prefix table, extended on every
/// append; shorter ones are encoded when their tokens are read or fixed
/// (cheaper than a table step per byte: one hash lookup for a word).
const TABLE_MIN: usize = 32;

/// Encodes a text that grows by appending; [`AppendingEncoder::tokens`]
/// always equals [`Tokenizer::encode`] of the text so far.
///
/// ```
/// let tok = structgen_bpe::Tokenizer::o200k_base();
/// let mut enc = structgen_bpe::AppendingEncoder::new(&tok);
/// for word in ["Hello", ",", " wor", "ld", "!"] {
///     enc.push(word);
///     assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(enc.text()));
///     assert_eq!(enc.count(), tok.count(enc.text()));
/// }
/// ```
#[derive(Debug, Clone)]
pub struct AppendingEncoder<'t> {
    tok: &'t Tokenizer,
    text: String,
    /// Tokens of `text[..fixed_end]`, which no append can change.
    fixed: Vec<u32>,
    /// A piece boundary of `text` that is safe for its current end.
    fixed_end: usize,
    /// The ends of the open pieces at the last settling (scratch).
    open: Vec<usize>,
    /// The text length at the last settling; the bytes after it are
    /// re-split when read or when `BATCH` of them have come.
    settled: usize,
    /// Prefix tables of the open pieces of at least `TABLE_MIN` bytes, by
    /// piece start.
    tables: Vec<PrefixTable>,
}

impl<'t> AppendingEncoder<'t> {
    /// An encoder over the empty text.
    ///
    /// Exact for every tokenizer. Incremental for tokenizers without a
    /// normalizer (tiktoken and byte-level `tokenizer.json` vocabularies);
    /// long open pieces use tables when the tokenizer has the linear
    /// encoder ([`Tokenizer::has_linear_encoder`]). With a normalizer that
    /// depends on the start of the text (SentencePiece-style) the whole text
    /// is encoded whenever the tokens are read.
    pub fn new(tok: &'t Tokenizer) -> Self {
        AppendingEncoder {
            tok,
            text: String::new(),
            fixed: Vec::new(),
            fixed_end: 0,
            open: Vec::new(),
            settled: 0,
            tables: Vec::new(),
        }
    }

    /// Appends `s`.
    ///
    /// Cost, amortized per byte: re-splitting the open pieces after the
    /// last final boundary (a word or two of prose) once per batch of
    /// bytes, encoding the pieces that become fixed (each once, as
    /// [`Tokenizer::encode`] would), and one table step per byte of a long
    /// piece. A huge open piece (a megabyte of spaces) is re-split after
    /// every doubling, so pushes stay `O(1)` amortized; reading
    /// ([`AppendingEncoder::count`]) re-splits it every time.
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        let end = self.text.len();
        // Open text waits for a batch: re-splitting the open word on every
        // byte would cost more than encoding it once when read. A long open
        // piece (a run of spaces) is settled once the new bytes reach half
        // its length, so its re-split costs O(1) per byte amortized.
        let open = end - self.fixed_end;
        let batch = if open < TABLE_MIN { BATCH } else { (open / 2).max(BATCH) };
        if !self.tok.restartable() || end - self.settled < batch {
            return;
        }
        self.settle();
    }

    /// Re-splits the open text, fixes the pieces no append can change and
    /// extends the tables of the long open pieces.
    fn settle(&mut self) {
        let tok = self.tok;
        let end = self.text.len();
        self.settled = end;
        self.open.clear();
        let mut pos = self.fixed_end;
        for piece in tok.pattern.split(&self.text[self.fixed_end..]) {
            pos += piece.len();
            self.open.push(pos);
        }
        // Fix the leading open pieces that no append can change: those
        // before the last boundary that is safe for the end (`chunk.rs`),
        // and then each piece whose match is final (`Pattern::piece_is_final`;
        // it starts at a fixed boundary).
        let safe = self.open.iter().rposition(|&y| crate::chunk::safe_from(&self.text, y) <= end);
        let mut fix = safe;
        let mut x = safe.map_or(self.fixed_end, |k| self.open[k]);
        for (k, &y) in self.open.iter().enumerate().skip(safe.map_or(0, |k| k + 1)) {
            if !tok.pattern.piece_is_final(&self.text, x, y) {
                break;
            }
            fix = Some(k);
            x = y;
        }
        if let Some(k) = fix {
            let mut x = self.fixed_end;
            for i in 0..=k {
                let y = self.open[i];
                piece_tokens(tok, &self.text, &self.tables, x, y, &mut self.fixed);
                x = y;
            }
            self.fixed_end = x;
            self.open.drain(..=k);
        }
        // Tables for the long open pieces; others are dropped.
        // A piece holding a byte without a token (`model::Gaps`) is encoded
        // whole: the tables step the trie over every byte.
        let tabled = |x: usize, y: usize| {
            x + TABLE_MIN <= y && !tok.model.has_gap(&self.text.as_bytes()[x..y])
        };
        let mut x = self.fixed_end;
        let long = self.open.iter().any(|&y| tabled(std::mem::replace(&mut x, y), y));
        let Some(bt) = long.then(|| tok.model.byte_backtracker(&tok.tokens)).flatten() else {
            self.tables.clear();
            return;
        };
        let mut x = self.fixed_end;
        let mut keep = 0;
        for &y in &self.open {
            if tabled(x, y) {
                let k = match self.tables.iter().position(|t| t.start == x) {
                    Some(k) => k,
                    None => {
                        self.tables.push(PrefixTable::new(x));
                        self.tables.len() - 1
                    }
                };
                self.tables[k].extend(bt, &tok.model, &tok.tokens, self.text.as_bytes(), y);
                self.tables.swap(k, keep);
                keep += 1;
            }
            x = y;
        }
        self.tables.truncate(keep);
    }

    /// The tokens of the text so far.
    ///
    /// Takes `&mut self` to settle the bytes appended since the last
    /// settling; the open pieces (usually the last word) are encoded by
    /// this call.
    pub fn tokens(&mut self) -> impl Iterator<Item = u32> + '_ {
        let mut open = Vec::with_capacity(8);
        if !self.tok.restartable() {
            self.tok.encode_into(&self.text, &mut open);
            return self.fixed[..0].iter().copied().chain(open);
        }
        if self.settled < self.text.len() {
            self.settle();
        }
        let mut x = self.fixed_end;
        for &y in &self.open {
            piece_tokens(self.tok, &self.text, &self.tables, x, y, &mut open);
            x = y;
        }
        self.fixed.iter().copied().chain(open)
    }

    /// The number of tokens of the text so far (settles the appended bytes
    /// and counts the open pieces, like [`AppendingEncoder::tokens`]).
    pub fn count(&mut self) -> usize {
        if !self.tok.restartable() {
            return self.tok.count(&self.text);
        }
        if self.settled < self.text.len() {
            self.settle();
        }
        let mut buf = Vec::new();
        let mut n = self.fixed.len();
        let mut x = self.fixed_end;
        for &y in &self.open {
            let piece = &self.text.as_bytes()[x..y];
            n += match self.tables.iter().find(|t| t.start == x && t.len() >= y - x) {
                Some(_) => {
                    buf.clear();
                    piece_tokens(self.tok, &self.text, &self.tables, x, y, &mut buf);
                    buf.len()
                }
                None => self.tok.model.count_piece(&self.tok.tokens, piece, &mut buf),
            };
            x = y;
        }
        n
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The tokens of the piece `text[x..y]`: from its prefix table when it has
/// one, else encoded.
fn piece_tokens(
    tok: &Tokenizer,
    text: &str,
    tables: &[PrefixTable],
    x: usize,
    y: usize,
    out: &mut Vec<u32>,
) {
    let piece = &text.as_bytes()[x..y];
    let table = tables.iter().find(|t| t.start == x && t.len() >= y - x);
    let (Some(table), Some(bt)) = (table, tok.model.backtrack.get().and_then(Option::as_ref))
    else {
        tok.model.encode_piece(&tok.tokens, piece, out);
        return;
    };
    let m = y - x;
    let word = tok.model.whole_piece
        && table.count(m) > 1
        && if table.len() == m { table.whole_is_word(bt) } else { m <= tok.max_token_len() };
    match word.then(|| tok.model.map.get(&tok.tokens, piece)).flatten() {
        Some(id) => out.push(id),
        None => table.tokens_into(&tok.tokens, m, out),
    }
}
