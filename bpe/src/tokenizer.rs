//! [`Tokenizer`]: a vocabulary with its pre-tokenizer, normalizer and special
//! tokens, and the encode / count / decode entry points.

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, MatchKind};
use unicode_normalization::UnicodeNormalization;

use crate::error::{DecodeError, EncodeError, LoadError};
use crate::model::Model;
use crate::pretok::Pattern;
use crate::vocab::{Kind, Tokens};

/// Which special tokens [`Tokenizer::encode_with_specials`] may emit.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Allowed<'a> {
    /// None: any special token's name in the text is an error.
    None,
    /// All special (and added) tokens.
    All,
    /// These names; any other special token's name in the text is an error.
    Names(&'a [&'a str]),
}

/// When a space is put in front of a text segment before pre-tokenization
/// (SentencePiece's `▁` is stored as a space in our token bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Prefix {
    /// Never.
    #[default]
    Never,
    /// Before every non-empty segment (Hugging Face `Prepend("▁")`).
    Always,
    /// Before every segment that does not start with a space (`ByteLevel`
    /// `add_prefix_space`, `Metaspace` with `prepend_scheme: always`).
    IfNoSpace,
    /// Like `IfNoSpace`, only for the segment at the start of the text
    /// (`Metaspace` with `prepend_scheme: first`).
    IfNoSpaceFirst,
}

/// Text normalization applied to each segment between special tokens.
#[derive(Debug, Clone, Default)]
pub(crate) struct Normalizer {
    /// Unicode NFC (Qwen).
    pub(crate) nfc: bool,
    /// SentencePiece-style: `▁` (U+2581) in the text stands for a space.
    pub(crate) metaspace: bool,
    pub(crate) prefix: Prefix,
}

impl Normalizer {
    fn is_identity(&self) -> bool {
        !self.nfc && !self.metaspace && self.prefix == Prefix::Never
    }

    /// Whether normalizing every prefix of `text` gives the prefix of
    /// `text` normalized (for a prefix of at least one character): each
    /// character is replaced on its own (`▁` by a space) and the prefix
    /// space depends on the first character only. NFC changes sequences of
    /// characters, except on text it leaves alone, which its quick check
    /// answers for every prefix at once (the check runs left to right over
    /// per-character properties). The chunker splits such text after
    /// normalizing it once.
    pub(crate) fn is_prefix_stable(&self, text: &str) -> bool {
        !self.nfc
            || unicode_normalization::is_nfc_quick(text.chars())
                == unicode_normalization::IsNormalized::Yes
    }

    /// The length of `text` after its characters are normalized (`▁` to a
    /// space), without the prefix space: `text[..i]` becomes this many
    /// bytes. For text where [`is_prefix_stable`](Self::is_prefix_stable)
    /// holds.
    pub(crate) fn replaced_len(&self, text: &str) -> usize {
        if !self.metaspace {
            return text.len();
        }
        text.len() - 2 * text.matches('\u{2581}').count()
    }

    /// The byte offset in `text` whose prefix normalizes (characters only,
    /// as [`replaced_len`](Self::replaced_len)) to `len` bytes: the inverse
    /// of `replaced_len` on character boundaries.
    pub(crate) fn original_offset(&self, text: &str, len: usize) -> usize {
        if !self.metaspace {
            return len;
        }
        let mut n = 0;
        for (i, c) in text.char_indices() {
            if n >= len {
                return i;
            }
            n += if c == '\u{2581}' { 1 } else { c.len_utf8() };
        }
        text.len()
    }

    /// `seg` normalized; `first` when it starts the text (a special token
    /// or nothing before it decides `Prefix::IfNoSpaceFirst`), `prefix`
    /// false for a continuation (no prefix space whatever the rule).
    fn apply<'a>(&self, seg: &'a str, first: bool, prefix: bool) -> Cow<'a, str> {
        if self.is_identity() || seg.is_empty() {
            return Cow::Borrowed(seg);
        }
        let mut s: Cow<'a, str> = Cow::Borrowed(seg);
        if self.nfc
            && !unicode_normalization::is_nfc_quick(seg.chars())
                .eq(&unicode_normalization::IsNormalized::Yes)
        {
            s = Cow::Owned(seg.nfc().collect());
        }
        if self.metaspace && s.contains('\u{2581}') {
            s = Cow::Owned(s.replace('\u{2581}', " "));
        }
        let prepend = prefix
            && match self.prefix {
                Prefix::Never => false,
                Prefix::Always => true,
                Prefix::IfNoSpace => !s.starts_with(' '),
                Prefix::IfNoSpaceFirst => first && !s.starts_with(' '),
            };
        if prepend {
            s = Cow::Owned(format!(" {s}"));
        }
        s
    }
}

/// A BPE tokenizer: vocabulary, merge rules, pre-tokenizer, normalizer and
/// special tokens. Cheap to share across threads (`Send + Sync`); every
/// method takes `&self`.
#[derive(Debug)]
pub struct Tokenizer {
    pub(crate) tokens: Tokens,
    pub(crate) model: Model,
    pub(crate) pattern: Pattern,
    pub(crate) normalizer: Normalizer,
    /// `(id, name)` sorted by id.
    specials: Vec<(u32, String)>,
    /// Finds special names in text (leftmost-longest); pattern `i` is
    /// `specials[i]`.
    special_matcher: Option<AhoCorasick>,
    /// The longest ordinary token, in bytes.
    max_token_len: usize,
}

impl Tokenizer {
    pub(crate) fn assemble(
        tokens: Tokens,
        model: Model,
        pattern: Pattern,
        normalizer: Normalizer,
    ) -> Result<Tokenizer, LoadError> {
        let mut specials: Vec<(u32, String)> = (0..tokens.len() as u32)
            .filter(|&id| tokens.kind(id) == Kind::Special)
            .map(|id| (id, String::from_utf8_lossy(tokens.bytes(id)).into_owned()))
            .collect();
        specials.sort();
        let special_matcher = if specials.is_empty() {
            None
        } else {
            let m = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(specials.iter().map(|s| s.1.as_bytes()))
                .map_err(|e| LoadError::Unsupported {
                    what: format!("special-token matcher: {e}"),
                })?;
            Some(m)
        };
        let max_token_len = (0..tokens.len() as u32)
            .filter(|&id| tokens.kind(id) == Kind::Normal)
            .map(|id| tokens.token_len(id))
            .max()
            .unwrap_or(1);
        Ok(Tokenizer {
            tokens,
            model,
            pattern,
            normalizer,
            specials,
            special_matcher,
            max_token_len,
        })
    }

    /// The number of ids: the largest id (special tokens included) plus one.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The bytes token `id` stands for: after byte-level, Metaspace (`▁` is
    /// a space) and byte-fallback (`<0x41>` is `A`) decoding; for a special
    /// token, its name. `None` for ids that are not in the vocabulary.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        match self.tokens.kind(id) {
            Kind::Absent => None,
            _ => Some(self.tokens.bytes(id)),
        }
    }

    /// Whether byte `b` has a token of its own. False only for the bytes a
    /// byte-level vocabulary has no token for (SmolLM2 lacks 21 of the
    /// 256: six control characters and bytes never or rarely in UTF-8):
    /// encoding drops such a byte, or spells it with the unknown token when
    /// the vocabulary names one, as Hugging Face `tokenizers` does, so no
    /// sequence of ordinary tokens ever spells it. Always true for tiktoken
    /// and SentencePiece-style vocabularies (the latter spell bytes with
    /// byte-fallback tokens).
    pub fn byte_has_token(&self, b: u8) -> bool {
        !self.model.has_gap(&[b])
    }

    /// Whether `id` is a special (or added) token.
    pub fn is_special(&self, id: u32) -> bool {
        self.tokens.kind(id) == Kind::Special
    }

    /// The special tokens, `(id, name)`, by increasing id.
    pub fn special_tokens(&self) -> impl Iterator<Item = (u32, &str)> + '_ {
        self.specials.iter().map(|(id, name)| (*id, name.as_str()))
    }

    /// The id of the special token called `name`.
    pub fn special_id(&self, name: &str) -> Option<u32> {
        self.specials.iter().find(|s| s.1 == name).map(|s| s.0)
    }

    /// The pre-tokenization pattern.
    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// Whether encoding puts a space in front of a text (SentencePiece-style
    /// vocabularies do); `decode(encode(x))` then starts with that space.
    pub fn prepends_space(&self) -> bool {
        self.normalizer.prefix != Prefix::Never
    }

    /// Whether long pieces use the linear-time backtracking encoder (byte
    /// symbols and monotone merge priorities; see `DESIGN.md`) rather than
    /// the `O(n log n)` priority-queue BPE. Builds the encoder's tables if
    /// they are not built yet.
    pub fn has_linear_encoder(&self) -> bool {
        self.model.backtracker(&self.tokens).is_some()
    }

    /// Heap memory held by the tokenizer, in bytes (tables built lazily
    /// included once built).
    pub fn memory_bytes(&self) -> usize {
        self.tokens.heap_bytes() + self.model.heap_bytes()
    }

    /// The length in bytes of the longest ordinary token.
    pub fn max_token_len(&self) -> usize {
        self.max_token_len
    }

    /// `text` after normalization (unchanged for tiktoken vocabularies).
    pub(crate) fn normalize<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.normalizer.apply(text, true, true)
    }

    pub(crate) fn normalizer_is_identity(&self) -> bool {
        self.normalizer.is_identity()
    }

    /// Calls `f` with the pieces of one segment (text between specials).
    #[inline]
    fn pieces(&self, seg: &str, first: bool, f: impl FnMut(&[u8])) {
        self.pieces_with(seg, first, true, f);
    }

    /// [`Tokenizer::pieces`], without the prefix space when `prefix` is
    /// false.
    #[inline]
    fn pieces_with(&self, seg: &str, first: bool, prefix: bool, mut f: impl FnMut(&[u8])) {
        let norm = self.normalizer.apply(seg, first, prefix);
        for piece in self.pattern.split(&norm) {
            f(piece.as_bytes());
        }
    }

    /// Encodes `text` as ordinary text: special-token names are encoded like
    /// any other text (tiktoken's `encode_ordinary`).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        self.encode_into(text, &mut out);
        out
    }

    /// Like [`Tokenizer::encode`], appending to `out`.
    pub fn encode_into(&self, text: &str, out: &mut Vec<u32>) {
        self.pieces(text, true, |p| self.model.encode_piece(&self.tokens, p, out));
    }

    /// Encodes `text` as the continuation of a sequence: the tokens a model
    /// generates for it after other text, which a grammar walks.
    ///
    /// Equals [`Tokenizer::encode`] except for SentencePiece-style
    /// vocabularies (Llama-2, Mistral), which put a space (`▁`) in front of
    /// a text: `encode("a")` is `[▁a]`, a document that starts with a
    /// space, while `encode_continuation("a")` is `[a]` and decodes to
    /// exactly `"a"`. The bytes of the ids are exactly `text`, up to the
    /// normalizer (NFC for Qwen; `▁` in the text stands for a space in
    /// SentencePiece-style vocabularies; bytes without a token, see
    /// [`Tokenizer::byte_has_token`], are dropped). Special-token names are
    /// ordinary text.
    pub fn encode_continuation(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        self.pieces_with(text, false, false, |p| {
            self.model.encode_piece(&self.tokens, p, &mut out)
        });
        out
    }

    /// Encodes `text` where the names of allowed special tokens become their
    /// ids; a special token's name that is not allowed is an error (tiktoken's
    /// `encode` with `disallowed_special="all"`). Matching is leftmost-longest.
    pub fn encode_with_specials(
        &self,
        text: &str,
        allowed: Allowed<'_>,
    ) -> Result<Vec<u32>, EncodeError> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        let Some(matcher) = &self.special_matcher else {
            self.encode_into(text, &mut out);
            return Ok(out);
        };
        let mut last = 0;
        for m in matcher.find_iter(text.as_bytes()) {
            let (id, name) = &self.specials[m.pattern().as_usize()];
            let ok = match allowed {
                Allowed::None => false,
                Allowed::All => true,
                Allowed::Names(names) => names.contains(&name.as_str()),
            };
            if !ok {
                return Err(EncodeError::DisallowedSpecial {
                    name: name.clone(),
                    offset: m.start(),
                });
            }
            // Names are valid UTF-8 and start and end on char boundaries.
            let seg = &text[last..m.start()];
            self.pieces(seg, last == 0, |p| self.model.encode_piece(&self.tokens, p, &mut out));
            out.push(*id);
            last = m.end();
        }
        let seg = &text[last..];
        self.pieces(seg, last == 0, |p| self.model.encode_piece(&self.tokens, p, &mut out));
        Ok(out)
    }

    /// Encodes a byte string that need not be UTF-8: maximal valid UTF-8
    /// runs are pre-tokenized as text; each invalid byte sequence is a piece
    /// of its own. Equals [`Tokenizer::encode`] on valid UTF-8.
    pub fn encode_bytes(&self, bytes: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut rest = bytes;
        let mut first = true;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.pieces(s, first, |p| self.model.encode_piece(&self.tokens, p, &mut out));
                    break;
                }
                Err(e) => {
                    let (valid, tail) = rest.split_at(e.valid_up_to());
                    // `valid` is valid UTF-8 by construction.
                    if let Ok(s) = std::str::from_utf8(valid) {
                        self.pieces(s, first, |p| {
                            self.model.encode_piece(&self.tokens, p, &mut out)
                        });
                    }
                    let bad = e.error_len().unwrap_or(tail.len()).max(1).min(tail.len());
                    self.model.encode_piece(&self.tokens, &tail[..bad], &mut out);
                    rest = &tail[bad..];
                    first = false;
                }
            }
        }
        out
    }

    /// The number of tokens of [`Tokenizer::encode`]`(text)`, without keeping
    /// the tokens.
    pub fn count(&self, text: &str) -> usize {
        let mut buf = Vec::new();
        let mut n = 0;
        self.pieces(text, true, |p| n += self.model.count_piece(&self.tokens, p, &mut buf));
        n
    }

    /// The encoding by the brute-force merge loop (quadratic per piece): the
    /// oracle the fast encoders are tested against.
    pub fn encode_reference(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.pieces(text, true, |p| self.model.encode_piece_reference(&self.tokens, p, &mut out));
        out
    }

    /// The encoding of one piece, bypassing pre-tokenization and
    /// normalization (BPE of exactly these bytes).
    pub fn encode_piece(&self, piece: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        self.model.encode_piece(&self.tokens, piece, &mut out);
        out
    }

    /// The pre-tokenized pieces of `text` after normalization (they
    /// concatenate to `text` when the tokenizer has no normalizer).
    pub fn pieces_of(&self, text: &str) -> Vec<String> {
        let mut v = Vec::new();
        self.pieces(text, true, |p| v.push(String::from_utf8_lossy(p).into_owned()));
        v
    }

    /// The concatenated bytes of `ids`.
    pub fn decode(&self, ids: &[u32]) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for (index, &id) in ids.iter().enumerate() {
            match self.token_bytes(id) {
                Some(b) => out.extend_from_slice(b),
                None => return Err(DecodeError::UnknownId { id, index }),
            }
        }
        Ok(out)
    }

    /// The text of `ids`; an error when the bytes are not valid UTF-8.
    pub fn decode_to_string(&self, ids: &[u32]) -> Result<String, DecodeError> {
        let bytes = self.decode(ids)?;
        String::from_utf8(bytes)
            .map_err(|e| DecodeError::InvalidUtf8 { valid_up_to: e.utf8_error().valid_up_to() })
    }
}
