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

/// Encodes a text that grows by appending; [`AppendingEncoder::tokens`]
/// always equals [`Tokenizer::encode`] of the text so far.
///
/// ```
/// let tok = bpe::Tokenizer::o200k_base();
/// let mut enc = bpe::AppendingEncoder::new(&tok);
/// for word in ["Hello", ",", " wor", "ld", "!"] {
///     enc.push(word);
///     assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(enc.text()));
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
    /// Tokens of `text[fixed_end..]`.
    tail: Vec<u32>,
    /// Prefix tables of the open pieces, by piece start (all at or after
    /// `fixed_end`); the flag marks tables used by the latest split.
    tables: Vec<(PrefixTable, bool)>,
}

impl<'t> AppendingEncoder<'t> {
    /// An encoder over the empty text.
    ///
    /// Exact for every tokenizer. Incremental for tokenizers without a
    /// normalizer (tiktoken and byte-level `tokenizer.json` vocabularies)
    /// and with the linear encoder ([`Tokenizer::has_linear_encoder`]);
    /// without the linear encoder open pieces are re-encoded on every
    /// append; with a normalizer that depends on the start of the text
    /// (SentencePiece-style) the whole text is re-encoded on every append.
    pub fn new(tok: &'t Tokenizer) -> Self {
        AppendingEncoder {
            tok,
            text: String::new(),
            fixed: Vec::new(),
            fixed_end: 0,
            tail: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// Appends `s` and updates the tokens.
    ///
    /// Cost: re-splitting the open pieces after the last safe boundary (a
    /// word or two of prose) plus one table step per appended byte. Inside
    /// one huge piece (a megabyte of spaces) the re-split scans the piece.
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.tail.clear();
        let tok = self.tok;
        if !tok.restartable() {
            tok.encode_into(&self.text, &mut self.tail);
            return;
        }
        let bt = tok.model.backtracker(&tok.tokens);
        let end = self.text.len();
        let bytes = self.text.as_bytes();
        let mut pos = self.fixed_end;
        let mut fix = None;
        for t in &mut self.tables {
            t.1 = false;
        }
        for piece in tok.pattern.split(&self.text[self.fixed_end..]) {
            let (x, y) = (pos, pos + piece.len());
            match bt {
                Some(bt) => {
                    let k = match self.tables.iter().position(|t| t.0.start == x) {
                        Some(k) => k,
                        None => {
                            self.tables.push((PrefixTable::new(x), false));
                            self.tables.len() - 1
                        }
                    };
                    let (table, used) = &mut self.tables[k];
                    *used = true;
                    table.extend(bt, &tok.model, &tok.tokens, bytes, y);
                    let m = y - x;
                    let word = tok.model.whole_piece
                        && table.count(m) > 1
                        && if table.len() == m {
                            table.whole_is_word(bt)
                        } else {
                            m <= tok.max_token_len()
                        };
                    match word.then(|| tok.model.map.get(&tok.tokens, piece.as_bytes())).flatten() {
                        Some(id) => self.tail.push(id),
                        None => table.tokens_into(&tok.tokens, m, &mut self.tail),
                    }
                }
                None => tok.model.encode_piece(&tok.tokens, piece.as_bytes(), &mut self.tail),
            }
            pos = y;
            if crate::chunk::safe_from(&self.text, y) <= end {
                fix = Some((y, self.tail.len()));
            }
        }
        if let Some((y, k)) = fix {
            self.fixed.extend_from_slice(&self.tail[..k]);
            self.tail.drain(..k);
            self.fixed_end = y;
        }
        let fixed_end = self.fixed_end;
        self.tables.retain(|t| t.1 && t.0.start >= fixed_end);
    }

    /// The tokens of the text so far.
    pub fn tokens(&self) -> impl Iterator<Item = u32> + '_ {
        self.fixed.iter().chain(&self.tail).copied()
    }

    /// The number of tokens of the text so far.
    pub fn count(&self) -> usize {
        self.fixed.len() + self.tail.len()
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }
}
