//! Forced tokens: the canonical tokenization of the forced bytes joined to
//! the generated tail, cut at the last final piece boundary.

use std::sync::Arc;

use bpe::Tokenizer;
use toktrie::TokTrie;

use crate::pieces::{ascii_key, boundaries, final_boundaries, supported};
use crate::tail::Tail;

/// What the grammar allows after the forced bytes: the next bytes, and
/// whether the text may end there (EOS) or a special token may come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Next {
    /// The allowed next bytes as a 256-bit set (bit `b` of word `b / 64`).
    pub bytes: [u64; 4],
    /// Whether the text may end after the forced bytes (EOS allowed or a
    /// special token may come).
    pub end: bool,
}

impl Next {
    /// Nothing is known about what follows: any byte, or the end.
    pub const UNKNOWN: Next = Next { bytes: [u64::MAX; 4], end: true };

    fn contains(&self, b: u8) -> bool {
        self.bytes[(b >> 6) as usize] >> (b & 63) & 1 != 0
    }
}

/// Why no token was forced although bytes were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The tokenizer cannot be re-tokenized from a piece boundary (a
    /// normalizer, or no split pattern this crate knows).
    Unsupported,
    /// The generated tail does not start at a token boundary.
    NotAligned,
    /// The generated tail or the forced bytes are not UTF-8 where it matters.
    InvalidUtf8,
    /// No piece boundary inside the forced bytes is final yet: every forced
    /// byte may still merge with what follows.
    Undecided,
    /// The canonical tokenization of the tail and the forced bytes does not
    /// start with the generated tokens: forcing would make the sequence
    /// non-canonical.
    NonCanonicalJoin,
    /// A forced byte has no token in the vocabulary
    /// ([`bpe::Tokenizer::byte_has_token`]; SmolLM2 lacks 21): no sequence
    /// of tokens spells the forced bytes.
    ByteWithoutToken,
}

/// The answer of [`Coalescer::forced_tokens`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forced {
    /// The tokens to append without a model call; canonical for the whole
    /// text whatever the grammar lets follow.
    pub tokens: Vec<u32>,
    /// How many of the forced bytes the tokens cover. The rest is held back:
    /// the next sampled token must start with it (the grammar's mask
    /// already says so).
    pub covered: usize,
    /// Why nothing was forced, when forced bytes were given but `tokens` is
    /// empty.
    pub refusal: Option<Refusal>,
}

/// The answer of [`Coalescer::process_prompt`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prompt {
    /// The prompt to give the model: the prompt's tokens before its last
    /// final boundary, then the canonical tokens of the rest joined with the
    /// grammar's forced bytes, up to the last final boundary.
    pub tokens: Vec<u32>,
    /// Bytes of the original prompt that the new prompt no longer contains
    /// (token healing): the model must generate them first.
    pub healed: Vec<u8>,
    /// How many of the grammar's forced bytes the new prompt contains.
    pub grammar_bytes: usize,
}

/// Computes forced tokens in the canonical tokenization of one tokenizer.
/// Cheap to clone and share (`Send + Sync`).
#[derive(Clone, Debug)]
pub struct Coalescer {
    tok: Arc<Tokenizer>,
    supported: bool,
    /// The tokenizer's trie, for the open-piece rule (see `with_trie`).
    trie: Option<Arc<TokTrie>>,
}

impl Coalescer {
    /// A coalescer for `tok`. Forcing is refused ([`Refusal::Unsupported`])
    /// for tokenizers with a normalizer or a split pattern this crate does
    /// not know (SentencePiece-style vocabularies).
    pub fn new(tok: Arc<Tokenizer>) -> Coalescer {
        // A normalizer shows as pieces that do not concatenate to the input.
        let probe = "e\u{301} A\u{a0}x";
        let identity = tok.pieces_of(probe).concat() == probe && !tok.prepends_space();
        let supported = identity && supported(tok.pattern());
        Coalescer { tok, supported, trie: None }
    }

    /// Also emits the tokens of the last, still open piece when it is an
    /// ASCII word and no token of `trie` (the same vocabulary) straddles
    /// the end of the text with a byte the grammar allows: BPE then never
    /// merges across the end, so the piece's left part is encoded exactly
    /// as on its own (see `DESIGN.md`).
    pub fn with_trie(mut self, trie: Arc<TokTrie>) -> Coalescer {
        self.trie = Some(trie);
        self
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Arc<Tokenizer> {
        &self.tok
    }

    /// Whether this tokenizer can have forced tokens at all.
    pub fn is_supported(&self) -> bool {
        self.supported
    }

    /// The tokens that `forced` (the bytes the grammar forces after the
    /// generated text) adds for certain, given what may follow (`next`).
    ///
    /// The tokens are the canonical tokens of `tail.text() + forced` up to
    /// the last piece boundary that no continuation allowed by `next` can
    /// move, minus the tail's own tokens, which they must start with
    /// (otherwise nothing is forced). See the crate documentation for why
    /// this is never non-canonical.
    pub fn forced_tokens(&self, tail: &Tail, forced: &[u8], next: &Next) -> Forced {
        let refuse = |r| Forced { tokens: Vec::new(), covered: 0, refusal: Some(r) };
        if forced.is_empty() {
            return Forced::default();
        }
        if !self.supported {
            return refuse(Refusal::Unsupported);
        }
        if !tail.is_aligned() {
            return refuse(Refusal::NotAligned);
        }
        if !forced.iter().all(|&b| self.tok.byte_has_token(b)) {
            return refuse(Refusal::ByteWithoutToken);
        }
        let mut w = Vec::with_capacity(tail.text().len() + forced.len());
        w.extend_from_slice(tail.text());
        w.extend_from_slice(forced);
        let Some((p, tokens)) = self.certain_tokens(&w, tail.text().len(), next) else {
            return refuse(Refusal::InvalidUtf8);
        };
        if p <= tail.text().len() {
            return refuse(Refusal::Undecided);
        }
        if !tokens.starts_with(tail.tokens()) {
            return refuse(Refusal::NonCanonicalJoin);
        }
        let tokens = tokens[tail.tokens().len()..].to_vec();
        Forced { tokens, covered: p - tail.text().len(), refusal: None }
    }

    /// The last final boundary `p` of `w` (whose first `min_valid` bytes
    /// must be UTF-8) and the canonical tokens of `w[..p]`; `None` on
    /// invalid UTF-8 in the first `min_valid` bytes.
    fn certain_tokens(&self, w: &[u8], min_valid: usize, next: &Next) -> Option<(usize, Vec<u32>)> {
        let valid = match std::str::from_utf8(w) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        if valid < min_valid {
            return None;
        }
        let k = std::str::from_utf8(&w[..valid]).ok()?;
        let pattern = self.tok.pattern();
        let mut fin = Vec::new();
        final_boundaries(pattern, k, &mut fin);
        let mut p = fin.last().copied().unwrap_or(0);
        if valid == w.len()
            && (self.end_is_final(k, p, next) || self.open_piece_is_safe(k, p, next))
        {
            p = k.len();
        }
        // The pieces of the whole text up to `p` (splitting `k[..p]` alone
        // could cut its end differently: `p` is final in `k`, not there).
        let mut tokens = Vec::new();
        let mut pos = 0;
        for piece in pattern.split(k) {
            if pos >= p {
                break;
            }
            tokens.extend(self.tok.encode_piece(piece.as_bytes()));
            pos += piece.len();
        }
        debug_assert_eq!(pos, p);
        Some((p, tokens))
    }

    /// Whether the end of `k` is a final boundary, with every boundary
    /// between `s` (the last final one) and it, for every continuation
    /// `next` allows: the end of the text, or one ASCII character that
    /// leaves the pieces of `k` alone by the rule of `pieces.rs`.
    fn end_is_final(&self, k: &str, s: usize, next: &Next) -> bool {
        if s == k.len() {
            return true;
        }
        if next.bytes[2] | next.bytes[3] != 0 {
            return false; // a non-ASCII character may follow
        }
        let pattern = self.tok.pattern();
        let rest = &k[s..];
        let mut want = Vec::new();
        boundaries(pattern, rest, &mut want);
        let mut seen: Vec<u16> = Vec::new();
        let mut text = String::with_capacity(rest.len() + 1);
        let mut fin = Vec::new();
        for b in 0u8..128 {
            if !next.contains(b) {
                continue;
            }
            let key = ascii_key(b);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            text.clear();
            text.push_str(rest);
            text.push(b as char);
            final_boundaries(pattern, &text, &mut fin);
            if fin.len() < want.len() || fin[..want.len()] != want[..] {
                return false;
            }
        }
        // With no byte allowed, only the end of the text remains.
        next.end || !seen.is_empty()
    }

    /// Whether the tokens of the one piece `k[s..]` are certain although the
    /// piece may go on: it is an ASCII word (an optional first character
    /// that is not a letter, digit, line break or apostrophe, then letters),
    /// which no continuation can cut before the end, and no token of the
    /// vocabulary starts with a suffix of it followed by an allowed byte
    /// that would continue it (a letter or an apostrophe).
    fn open_piece_is_safe(&self, k: &str, s: usize, next: &Next) -> bool {
        let Some(trie) = &self.trie else { return false };
        let q = &k[s..];
        let bytes = q.as_bytes();
        let body = match bytes.first() {
            Some(c) if c.is_ascii_alphabetic() => bytes,
            Some(c) if c.is_ascii() && !c.is_ascii_digit() && !b"\r\n'".contains(c) => &bytes[1..],
            _ => return false,
        };
        if body.is_empty() || !body.iter().all(u8::is_ascii_alphabetic) {
            return false;
        }
        if next.bytes[2] | next.bytes[3] != 0 {
            return false; // a non-ASCII letter may continue the piece
        }
        let mut one = Vec::new();
        boundaries(self.tok.pattern(), q, &mut one);
        if one != [q.len()] {
            return false; // not a single piece
        }
        let cont: Vec<u8> = (0u8..128)
            .filter(|&b| next.contains(b) && (b.is_ascii_alphabetic() || b == b'\''))
            .collect();
        let mut u = Vec::with_capacity(q.len() + 1);
        for i in 0..q.len() {
            for &b in &cont {
                u.clear();
                u.extend_from_slice(&bytes[i..]);
                u.push(b);
                if trie.has_extension(&u) || trie.token_id(&u).is_some() {
                    return false;
                }
            }
        }
        true
    }

    /// Tokenizes the prompt together with the grammar's forced prefix and
    /// heals its last tokens: see [`Prompt`]. `forced` are the bytes the
    /// grammar forces at its start and `next` what it allows after them.
    pub fn process_prompt(&self, prompt: &[u32], forced: &[u8], next: &Next) -> Prompt {
        let unchanged = Prompt { tokens: prompt.to_vec(), healed: Vec::new(), grammar_bytes: 0 };
        if !self.supported
            || prompt.iter().any(|&t| self.tok.token_bytes(t).is_none())
            || !forced.iter().all(|&b| self.tok.byte_has_token(b))
        {
            return unchanged;
        }
        let mut tail = Tail::new();
        tail.extend(&self.tok, prompt);
        if !tail.is_aligned() {
            return unchanged;
        }
        let head = &prompt[..prompt.len() - tail.tokens().len()];
        let mut w = tail.text().to_vec();
        w.extend_from_slice(forced);
        let Some((p, tokens)) = self.certain_tokens(&w, tail.text().len(), next) else {
            return unchanged;
        };
        let mut out = head.to_vec();
        out.extend_from_slice(&tokens);
        let n = tail.text().len();
        Prompt {
            tokens: out,
            healed: tail.text()[p.min(n)..].to_vec(),
            grammar_bytes: p.saturating_sub(n),
        }
    }
}
