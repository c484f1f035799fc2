//! The generated text since the last final piece boundary.

use bpe::Tokenizer;

use crate::pieces::final_boundaries;

/// How long the tail may grow without a final piece boundary that is also a
/// token boundary before it is cut anyway (then it is not aligned until the
/// next such boundary).
const MAX_TAIL: usize = 4096;

/// The generated tokens since the last *final* piece boundary of the
/// generated text (one no continuation can move; see the crate docs).
///
/// Invariant: `text` starts at a final piece boundary of everything
/// generated, so pre-tokenizing `text` followed by any continuation gives
/// the true pieces; when `aligned`, that boundary is also a token boundary
/// and `tokens` are exactly the tokens whose bytes make `text`.
#[derive(Clone, Debug, Default)]
pub struct Tail {
    text: Vec<u8>,
    tokens: Vec<u32>,
    /// The end of each token in `text`.
    ends: Vec<usize>,
    aligned: bool,
    scratch: Vec<usize>,
}

impl Tail {
    /// The tail of an empty text.
    pub fn new() -> Tail {
        Tail { aligned: true, ..Tail::default() }
    }

    /// Forgets everything: the next token starts a new text (after a special
    /// token, or at the start).
    pub fn clear(&mut self) {
        self.text.clear();
        self.tokens.clear();
        self.ends.clear();
        self.aligned = true;
    }

    /// The bytes since the last final boundary.
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// The tokens since the last final boundary (when aligned).
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Whether the tail starts at a token boundary, so its tokens can be
    /// compared with the canonical tokenization.
    pub fn is_aligned(&self) -> bool {
        self.aligned
    }

    /// Appends a generated token. A special token (or an unknown id) ends
    /// the text: special tokens split the tokenizer's input into segments.
    ///
    /// Cost: pre-tokenizing the tail, usually a piece or two.
    pub fn push(&mut self, tok: &Tokenizer, token: u32) {
        let bytes = match tok.token_bytes(token) {
            Some(b) if !tok.is_special(token) => b,
            _ => {
                self.clear();
                return;
            }
        };
        self.text.extend_from_slice(bytes);
        self.tokens.push(token);
        self.ends.push(self.text.len());
        self.advance(tok);
    }

    /// Appends several tokens.
    pub fn extend(&mut self, tok: &Tokenizer, tokens: &[u32]) {
        for &t in tokens {
            self.push(tok, t);
        }
    }

    /// Moves the start to the last final boundary that is a token boundary.
    fn advance(&mut self, tok: &Tokenizer) {
        let valid = match std::str::from_utf8(&self.text) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        // `valid` bytes are UTF-8 by construction.
        let Ok(k) = std::str::from_utf8(&self.text[..valid]) else { return };
        let mut fin = std::mem::take(&mut self.scratch);
        final_boundaries(tok.pattern(), k, &mut fin);
        let cut = fin.iter().rev().copied().find(|b| self.ends.binary_search(b).is_ok());
        match cut {
            Some(b) => self.cut(b, true),
            None if self.text.len() > MAX_TAIL => {
                if let Some(&b) = fin.last() {
                    self.cut(b, false);
                }
            }
            None => {}
        }
        self.scratch = fin;
    }

    /// Drops the text before `b` (a final boundary) and the tokens that end
    /// at or before it.
    fn cut(&mut self, b: usize, at_token_boundary: bool) {
        let n = self.ends.partition_point(|&e| e <= b);
        self.tokens.drain(..n);
        self.ends.drain(..n);
        self.ends.iter_mut().for_each(|e| *e -= b);
        self.text.drain(..b);
        self.aligned = at_token_boundary;
    }
}
