//! Token budgets: `count_till_limit`, `split_at_tokens` and the chunker.
//!
//! BPE counts are not monotone in the prefix length (appending a byte can
//! lower the count), so "the longest prefix with at most n tokens" cannot be
//! found by binary search. What saves us is pre-tokenization: the encoding of
//! a text is the concatenation of its pieces' encodings, and a prefix
//! `text[..p]` is pre-tokenized like `text` up to a *safe* piece boundary
//! `b` (every regex match ending at or before `b` only looked at characters
//! before `p`). The split patterns look at most three characters past a
//! match, except whitespace alternatives, which scan to the end of the
//! whitespace run (plus one character). So `b` is safe for `p` when `p` is at
//! least four characters past the first non-space character at or after
//! `b`. Then `count(text[..p]) = C(b) + count(text[b..p])` with `C(b)` the
//! tokens of the pieces before `b`, and `count(text[..p]) >= C(b)` bounds
//! which prefixes can still fit.

use std::ops::Range;

use crate::tokenizer::Tokenizer;

/// Where [`Tokenizer::chunks`] prefers to cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Boundary {
    /// At the longest prefix that fits (any character boundary).
    #[default]
    Char,
    /// After the last newline that keeps the chunk within budget, else
    /// after the last whitespace, else at any character boundary.
    Newline,
    /// After the last whitespace character that keeps the chunk within
    /// budget, else at any character boundary.
    Whitespace,
}

/// One chunk of [`Tokenizer::chunks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Byte range in the input.
    pub range: Range<usize>,
    /// Tokens of `input[range]` encoded on its own.
    pub tokens: usize,
}

impl Tokenizer {
    /// The token count of `text` if it is at most `limit`, else `None`,
    /// stopping early once the limit is exceeded.
    ///
    /// Exact (no safety margin): the encoding of `text` is the concatenation
    /// of the encodings of its pre-tokenized pieces, every piece has at
    /// least one token, so the running sum over pieces only grows and equals
    /// the full count at the end; once it passes `limit` the full count does
    /// too. The work is proportional to the part of `text` read.
    pub fn count_till_limit(&self, text: &str, limit: usize) -> Option<usize> {
        let mut n = 0usize;
        let mut buf = Vec::new();
        let mut over = false;
        let norm = self.normalize(text);
        for piece in self.pattern.split(&norm) {
            if over {
                break;
            }
            buf.clear();
            self.model.encode_piece(&self.tokens, piece.as_bytes(), &mut buf);
            n += buf.len();
            over = n > limit;
        }
        (!over).then_some(n)
    }

    /// Whether prefixes can be re-tokenized from a piece boundary (no
    /// normalizer that depends on the segment start, a real split pattern).
    pub(crate) fn restartable(&self) -> bool {
        self.normalizer_is_identity() && self.pattern != crate::Pattern::Whole
    }

    /// The longest prefix of `text` that ends on a char boundary and has at
    /// most `max_tokens` tokens when encoded on its own; returns its length
    /// in bytes (0 when not even the first character fits).
    ///
    /// Exact: see the module docs of `chunk.rs` for why restarting at a safe
    /// piece boundary gives the prefix's count. Candidates are tried from the
    /// longest possible down; a candidate is skipped without encoding when
    /// the lower bound `C(b) + ceil((p - b) / L)` (`L` = longest token)
    /// already exceeds the budget. Typical cost: the pieces up to the cut
    /// plus a few re-encodings of the last pieces; inside one very long piece
    /// (a megabyte of spaces) each candidate re-encodes the piece prefix.
    pub fn split_at_tokens(&self, text: &str, max_tokens: usize) -> usize {
        let max_len = self.max_token_len().max(1);
        // Full-text piece boundaries with the tokens before them, and the
        // position from which each boundary is safe.
        let mut bounds: Vec<(usize, usize, usize)> = vec![(0, 0, 0)]; // (b, C(b), safe_from)
        let mut buf = Vec::new();
        let mut total = 0usize;
        let mut top = text.len();
        if self.restartable() {
            let mut pos = 0;
            for piece in self.pattern.split(text) {
                buf.clear();
                self.model.encode_piece(&self.tokens, piece.as_bytes(), &mut buf);
                total += buf.len();
                pos += piece.len();
                let safe = safe_from(text, pos);
                bounds.push((pos, total, safe));
                if total > max_tokens {
                    // Every p >= safe has count >= total > max_tokens.
                    top = safe.saturating_sub(1).min(text.len());
                    break;
                }
            }
            if total <= max_tokens && bounds.last().is_some_and(|b| b.0 == text.len()) {
                return text.len();
            }
        }
        let mut p = top;
        while p > 0 {
            while !text.is_char_boundary(p) {
                p -= 1;
            }
            // The largest boundary that is safe for p.
            let (b, c) = bounds
                .iter()
                .rev()
                .find(|&&(b, _, safe)| b <= p && safe <= p)
                .map_or((0, 0), |&(b, c, _)| (b, c));
            let lower = c + (p - b).div_ceil(max_len);
            if lower <= max_tokens
                && let Some(n) = self.count_till_limit(&text[b..p], max_tokens - c)
                && c + n <= max_tokens
            {
                return p;
            }
            p -= 1;
        }
        0
    }

    /// Cuts `text` into consecutive chunks of at most `max_tokens` tokens
    /// each (counted on the chunk alone), at char boundaries, preferring the
    /// given boundary. Chunks concatenate to `text`. A chunk exceeds
    /// `max_tokens` only when its first character alone needs more tokens.
    pub fn chunks(&self, text: &str, max_tokens: usize, prefer: Boundary) -> Vec<Chunk> {
        let mut out = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let rest = &text[start..];
            let mut len = self.split_at_tokens(rest, max_tokens);
            if len == 0 {
                // Not even one character fits: emit it alone.
                len = rest.chars().next().map_or(rest.len(), char::len_utf8);
            } else if len < rest.len() {
                len = self.preferred_cut(rest, len, max_tokens, prefer);
            }
            let piece = &rest[..len];
            out.push(Chunk { range: start..start + len, tokens: self.count(piece) });
            start += len;
        }
        out
    }

    /// A cut at or before `len` after the preferred kind of character whose
    /// prefix still fits; `len` when there is none.
    fn preferred_cut(&self, rest: &str, len: usize, max_tokens: usize, prefer: Boundary) -> usize {
        let kinds: &[fn(char) -> bool] = match prefer {
            Boundary::Char => return len,
            Boundary::Newline => &[|c| c == '\n', char::is_whitespace],
            Boundary::Whitespace => &[char::is_whitespace],
        };
        for is_cut in kinds {
            // Try the last few candidates; a shorter prefix usually fits.
            for (i, c) in rest[..len].char_indices().rev().filter(|&(_, c)| is_cut(c)).take(8) {
                let cut = i + c.len_utf8();
                if cut > 0 && self.count_till_limit(&rest[..cut], max_tokens).is_some() {
                    return cut;
                }
            }
        }
        len
    }
}

/// The byte position four characters past the first non-whitespace
/// character at or after `b` (the text end if there is none).
pub(crate) fn safe_from(text: &str, b: usize) -> usize {
    let rest = &text[b..];
    let Some(first) = rest.char_indices().find(|&(_, c)| !c.is_whitespace()).map(|(i, _)| i) else {
        return text.len() + 1;
    };
    let mut it = rest[first..].char_indices().map(|(i, c)| i + c.len_utf8());
    let mut end = first;
    for _ in 0..4 {
        match it.next() {
            Some(e) => end = first + e,
            None => return text.len() + 1,
        }
    }
    b + end
}
