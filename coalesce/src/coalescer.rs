//! Forced tokens: the canonical tokenization of the forced bytes joined to
//! the generated tail, cut at the last final piece boundary.

use std::collections::HashMap;
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
}

/// What the grammar allows right after the forced bytes, asked for only as
/// far as the end check needs it: finding whether a byte is allowed costs
/// the parser a step per lexer byte class (a derivative when the lexer has
/// not met the transition yet), and the check usually needs a few classes,
/// not all of them. [`Next`] is the answer computed in advance.
pub trait NextBytes {
    /// Whether the text may end after the forced bytes (EOS allowed or a
    /// special token may come).
    fn may_end(&self) -> bool;

    /// The bytes of `set` (a 256-bit set, bit `b` of word `b / 64`) that
    /// may come next.
    fn allowed(&mut self, set: [u64; 4]) -> [u64; 4];

    /// Whether some byte of `set` may come next (an implementation may stop
    /// at the first one it finds).
    fn any_allowed_in(&mut self, set: [u64; 4]) -> bool {
        !is_empty(self.allowed(set))
    }

    /// Whether some byte may come next.
    fn any_allowed(&mut self) -> bool {
        self.any_allowed_in([u64::MAX; 4])
    }
}

impl NextBytes for Next {
    fn may_end(&self) -> bool {
        self.end
    }

    fn allowed(&mut self, set: [u64; 4]) -> [u64; 4] {
        std::array::from_fn(|i| self.bytes[i] & set[i])
    }
}

/// The bytes 128..=255: any of them may start or continue a character
/// outside ASCII.
const NON_ASCII: [u64; 4] = [0, 0, u64::MAX, u64::MAX];

/// The ASCII letters and the apostrophe: the bytes that continue an ASCII
/// word piece.
const WORD_BYTES: [u64; 4] = {
    let mut w = [0u64; 4];
    let mut b = 0;
    while b < 128 {
        if (b as u8).is_ascii_alphabetic() || b == b'\'' as usize {
            w[b / 64] |= 1 << (b % 64);
        }
        b += 1;
    }
    w
};

fn is_empty(set: [u64; 4]) -> bool {
    set == [0; 4]
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
    /// The end check's breaking bytes per text, kept by
    /// [`forced_tokens_asking`](Coalescer::forced_tokens_asking).
    memo: Breaking,
}

/// The ASCII bytes that would move a piece boundary when appended, per text
/// since the last final boundary (`{"`, `":`, `","`: a grammar meets the
/// same few again and again). A cache of a function of the text alone, so
/// what it holds never changes an answer; bounded in entries and text
/// length.
#[derive(Clone, Debug, Default)]
struct Breaking(HashMap<Box<str>, [u64; 2]>);

impl Breaking {
    /// Texts longer than this are not kept.
    const MAX_TEXT: usize = 48;
    /// Entries kept at most (the map is emptied when full).
    const MAX_ENTRIES: usize = 512;

    /// The breaking bytes of `rest`: kept, or computed by `compute` (and
    /// kept when `rest` is short enough).
    fn of(&mut self, rest: &str, compute: impl FnOnce() -> [u64; 2]) -> [u64; 2] {
        if let Some(&b) = self.0.get(rest) {
            return b;
        }
        let b = compute();
        if rest.len() <= Breaking::MAX_TEXT {
            if self.0.len() >= Breaking::MAX_ENTRIES {
                self.0.clear();
            }
            self.0.insert(rest.into(), b);
        }
        b
    }
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
        Coalescer { tok, supported, trie: None, memo: Breaking::default() }
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
        self.forced_with(tail, forced, &mut next.clone(), &mut Breaking::default())
    }

    /// [`forced_tokens`](Coalescer::forced_tokens), asking `next` only about
    /// the bytes that decide whether the end of the forced bytes is a final
    /// piece boundary (see [`NextBytes`]), and keeping what it learns about
    /// the texts it checks for the next call.
    pub fn forced_tokens_asking(
        &mut self,
        tail: &Tail,
        forced: &[u8],
        next: &mut dyn NextBytes,
    ) -> Forced {
        let mut memo = std::mem::take(&mut self.memo);
        let f = self.forced_with(tail, forced, next, &mut memo);
        self.memo = memo;
        f
    }

    fn forced_with(
        &self,
        tail: &Tail,
        forced: &[u8],
        next: &mut dyn NextBytes,
        memo: &mut Breaking,
    ) -> Forced {
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
        let Some((p, tokens)) = self.certain_tokens(&w, tail.text().len(), next, memo) else {
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
    fn certain_tokens(
        &self,
        w: &[u8],
        min_valid: usize,
        next: &mut dyn NextBytes,
        memo: &mut Breaking,
    ) -> Option<(usize, Vec<u32>)> {
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
            && (self.end_is_final(k, p, next, memo) || self.open_piece_is_safe(k, p, next))
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
    ///
    /// The ASCII bytes that would move a boundary are found first (one
    /// split per class of bytes the patterns treat alike, kept in `memo`),
    /// and `next` is asked only whether one of them or a byte outside ASCII
    /// may come.
    fn end_is_final(
        &self,
        k: &str,
        s: usize,
        next: &mut dyn NextBytes,
        memo: &mut Breaking,
    ) -> bool {
        if s == k.len() {
            return true;
        }
        let rest = &k[s..];
        let breaking = memo.of(rest, || self.breaking_ascii(rest));
        // A non-ASCII character may follow, or a byte that moves a boundary.
        if next.any_allowed_in([breaking[0], breaking[1], u64::MAX, u64::MAX]) {
            return false;
        }
        // No allowed byte moves a boundary; the end is final when the text
        // may end there or some (harmless) byte may follow.
        next.may_end() || next.any_allowed()
    }

    /// The ASCII bytes that, appended to `rest` (split from a final
    /// boundary), would leave some boundary of `rest` or its end not final.
    fn breaking_ascii(&self, rest: &str) -> [u64; 2] {
        let pattern = self.tok.pattern();
        let mut want = Vec::new();
        boundaries(pattern, rest, &mut want);
        let mut verdicts: Vec<(u16, bool)> = Vec::new();
        let mut text = String::with_capacity(rest.len() + 1);
        let mut fin = Vec::new();
        let mut breaking = [0u64; 2];
        for b in 0u8..128 {
            let key = ascii_key(b);
            let breaks = match verdicts.iter().find(|v| v.0 == key) {
                Some(&(_, v)) => v,
                None => {
                    text.clear();
                    text.push_str(rest);
                    text.push(b as char);
                    final_boundaries(pattern, &text, &mut fin);
                    let v = fin.len() < want.len() || fin[..want.len()] != want[..];
                    verdicts.push((key, v));
                    v
                }
            };
            if breaks {
                breaking[(b >> 6) as usize] |= 1 << (b & 63);
            }
        }
        breaking
    }

    /// Whether the tokens of the one piece `k[s..]` are certain although the
    /// piece may go on: it is an ASCII word (an optional first character
    /// that is not a letter, digit, line break or apostrophe, then letters),
    /// which no continuation can cut before the end, and no token of the
    /// vocabulary starts with a suffix of it followed by an allowed byte
    /// that would continue it (a letter or an apostrophe).
    fn open_piece_is_safe(&self, k: &str, s: usize, next: &mut dyn NextBytes) -> bool {
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
        let mut one = Vec::new();
        boundaries(self.tok.pattern(), q, &mut one);
        if one != [q.len()] {
            return false; // not a single piece
        }
        if next.any_allowed_in(NON_ASCII) {
            return false; // a non-ASCII letter may continue the piece
        }
        let allowed = next.allowed(WORD_BYTES);
        let cont: Vec<u8> =
            (0u8..128).filter(|&b| allowed[(b >> 6) as usize] >> (b & 63) & 1 != 0).collect();
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
        let Some((p, tokens)) =
            self.certain_tokens(&w, tail.text().len(), &mut next.clone(), &mut Breaking::default())
        else {
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
