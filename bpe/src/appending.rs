//! The appending encoder: the exact tokens of a text that grows at the end.
//!
//! Appending can change the last tokens (BPE and the split patterns look
//! ahead), but not the pieces before a *safe* boundary: one whose regex
//! matches only looked at characters before the current end (see
//! `chunk.rs`). The encoder keeps the tokens of the pieces before the last
//! safe boundary fixed and re-encodes only the tail after it on every
//! append. The tail is usually the last word or two, so appending costs about
//! the tail's length; a tail that never becomes safe (one huge piece such as
//! a megabyte of spaces or of `a`) is re-encoded whole on every append.

use crate::tokenizer::Tokenizer;

/// Encodes a text that grows by appending; [`AppendingEncoder::tokens`]
/// always equals [`Tokenizer::encode`] of the text so far.
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
}

impl<'t> AppendingEncoder<'t> {
    /// An encoder over the empty text.
    ///
    /// Exact for tokenizers without a normalizer (tiktoken and byte-level
    /// `tokenizer.json` vocabularies). With a normalizer that depends on
    /// the start of the text (SentencePiece-style) the whole text is the
    /// tail and is re-encoded on every append.
    pub fn new(tok: &'t Tokenizer) -> Self {
        AppendingEncoder {
            tok,
            text: String::new(),
            fixed: Vec::new(),
            fixed_end: 0,
            tail: Vec::new(),
        }
    }

    /// Appends `s` and updates the tokens.
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.tail.clear();
        let restartable = self.tok.restartable();
        let tail_text = &self.text[self.fixed_end..];
        if !restartable {
            self.tok.encode_into(tail_text, &mut self.tail);
            return;
        }
        let end = self.text.len();
        let mut pos = self.fixed_end;
        let mut new_fixed_end = self.fixed_end;
        let mut new_fixed_len = 0;
        for piece in self.tok.pattern.split(tail_text) {
            self.tok.model.encode_piece(&self.tok.tokens, piece.as_bytes(), &mut self.tail);
            pos += piece.len();
            if crate::chunk::safe_from(&self.text, pos) <= end {
                new_fixed_end = pos;
                new_fixed_len = self.tail.len();
            }
        }
        if new_fixed_len > 0 || new_fixed_end > self.fixed_end {
            self.fixed.extend_from_slice(&self.tail[..new_fixed_len]);
            self.tail.drain(..new_fixed_len);
            self.fixed_end = new_fixed_end;
        }
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
