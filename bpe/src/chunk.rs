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

use crate::incremental::PrefixTable;
use crate::pretok::Pattern;
use crate::tokenizer::Tokenizer;
use crate::unicode::{LETTER, LOWER, NUMBER, SPACE, UPPER, flags};

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
    /// After the last sentence end that keeps the chunk within budget (a
    /// `.`, `!`, `?`, `…` or their CJK forms, with any closing quotes or
    /// brackets, and the whitespace after it), else as [`Newline`](Boundary::Newline).
    Sentence,
    /// After the last blank line (a line break, optional spaces, a line
    /// break) that keeps the chunk within budget, else as
    /// [`Sentence`](Boundary::Sentence).
    Paragraph,
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
    /// of the encodings of its pre-tokenized pieces, so the running sum over
    /// pieces never falls and equals the full count at the end; once it
    /// passes `limit` the full count does too. The work is proportional to
    /// the part of `text` read.
    pub fn count_till_limit(&self, text: &str, limit: usize) -> Option<usize> {
        self.count_normalized_till_limit(&self.normalize(text), limit)
    }

    /// [`count_till_limit`](Self::count_till_limit) of text already
    /// normalized.
    fn count_normalized_till_limit(&self, norm: &str, limit: usize) -> Option<usize> {
        let mut n = 0usize;
        let mut buf = Vec::new();
        for piece in self.pattern.split(norm) {
            #[cfg(test)]
            work::add(piece.len());
            buf.clear();
            self.model.encode_piece(&self.tokens, piece.as_bytes(), &mut buf);
            n += buf.len();
            if n > limit {
                return None;
            }
        }
        Some(n)
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
    /// piece boundary gives the prefix's count. Only the first
    /// `(max_tokens + 1) * L` bytes are read (`L` = longest token: no longer
    /// prefix fits; bytes the vocabulary has no token for, which encoding
    /// drops, are not counted). Candidates are tried from the longest
    /// possible down; a candidate is skipped without encoding when the
    /// lower bound `C(b) + ceil((p - b) / L)` already exceeds the budget. A cut deep
    /// inside a long piece (a run of one character or class) is counted
    /// from the piece's prefix table in `O(1)`; other candidates re-encode
    /// from their safe boundary, usually a word or two. Cost: linear in the
    /// bytes read for runs and prose.
    ///
    /// SentencePiece-style tokenizers (a `▁` normalizer and a prefix space,
    /// no split pattern or splits at spaces) normalize the window once:
    /// every prefix of the text normalizes to a prefix of the normalized
    /// window, so the same search runs there, with cuts mapped back. Their
    /// pieces are cut anywhere without changing the pieces before
    /// (`[^ ]+| +[^ ]*`, or the whole text), so each long piece's prefix
    /// table counts every cut inside it.
    pub fn split_at_tokens(&self, text: &str, max_tokens: usize) -> usize {
        let max_len = self.max_token_len().max(1);
        // Every token covers at most `max_len` bytes of normalized text, and
        // normalization shrinks text at most threefold (`▁` to a space, NFC),
        // so a prefix longer than this has more than `max_tokens` tokens.
        let shrink = if self.normalizer_is_identity() { 1 } else { 3 };
        let cap = max_tokens.saturating_add(1).saturating_mul(max_len).saturating_mul(shrink);
        // Bytes without a token (`model::Gaps`) are dropped: only the
        // others count towards the cap and the lower bounds below.
        let gaps = self.model.has_gap(text.as_bytes());
        let cap = if gaps { self.model.present_prefix(text.as_bytes(), cap) } else { cap };
        let text = &text[..floor_char_boundary(text, cap.min(text.len()))];
        if self.restartable() {
            return self.split_normalized(text, 0, max_tokens);
        }
        if !text.is_empty() && self.normalizer.is_prefix_stable(text) {
            let norm = self.normalize(text);
            // The prefix space, when normalization put one in front.
            let lo = norm.len() - self.normalizer.replaced_len(text);
            let cut = self.split_normalized(&norm, lo, max_tokens);
            return self.normalizer.original_offset(text, cut - lo);
        }
        // No restart: every candidate is counted from the start.
        let mut p = text.len();
        while p > 0 {
            while !text.is_char_boundary(p) {
                p -= 1;
            }
            if p.div_ceil(max_len * shrink) <= max_tokens
                && self.count_till_limit(&text[..p], max_tokens).is_some()
            {
                return p;
            }
            p -= 1;
        }
        0
    }

    /// [`split_at_tokens`](Self::split_at_tokens) on normalized text whose
    /// cuts may fall at `lo` or later (`lo` is the length of a prefix space
    /// the normalizer added: cutting there is the empty text). Returns `lo`
    /// when no longer prefix fits.
    fn split_normalized(&self, text: &str, lo: usize, max_tokens: usize) -> usize {
        let max_len = self.max_token_len().max(1);
        // Full-text piece boundaries with the tokens before them, and the
        // position from which each boundary is safe.
        let mut bounds: Vec<(usize, usize, usize)> = vec![(0, 0, 0)]; // (b, C(b), safe_from)
        let mut longs: Vec<LongPiece> = Vec::new();
        let mut buf = Vec::new();
        let mut total = 0usize;
        let mut top = text.len();
        // Character symbols (SentencePiece-style): a prefix table needs every
        // character of the piece to be a token (the encoder cuts runs at
        // the others).
        let chars = matches!(self.model.symbols, crate::model::Symbols::Chars { .. });
        // Bytes without a token (`model::Gaps`): a piece holding one runs
        // the heap encoder, which knows how to drop them.
        let gaps = self.model.has_gap(text.as_bytes());
        let bt = self.model.backtracker(&self.tokens);
        let pieces_stay = matches!(self.pattern, Pattern::SentencePiece | Pattern::Whole);
        let mut pos = 0;
        for piece in self.pattern.split(text) {
            let x = pos;
            pos += piece.len();
            let long = bt.filter(|bt| {
                piece.len() >= LONG_PIECE.max(max_len + 1)
                    && !(gaps && self.model.has_gap(piece.as_bytes()))
                    && (!chars
                        || piece
                            .chars()
                            .all(|c| bt.char_has_token(c.encode_utf8(&mut [0; 4]).as_bytes())))
            });
            match long {
                Some(bt) => {
                    let budget = max_tokens - total;
                    let long = LongPiece::new(self, bt, text, x, pos, total, budget);
                    total += long.count_or_floor(pos - x);
                    longs.push(long);
                }
                None => {
                    #[cfg(test)]
                    work::add(piece.len());
                    buf.clear();
                    self.model.encode_piece(&self.tokens, piece.as_bytes(), &mut buf);
                    total += buf.len();
                }
            }
            // A SentencePiece boundary is safe at once: the pieces before it
            // end there in every longer prefix.
            let safe = if pieces_stay { pos } else { safe_from(text, pos) };
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
        let mut p = top;
        let mut k = bounds.len();
        while p > lo {
            while !text.is_char_boundary(p) {
                p -= 1;
            }
            if p <= lo {
                break;
            }
            if let Some(long) = longs.iter().rev().find(|l| l.x < p && p < l.y)
                && let Some((n, lowest)) = long.deep_count(self.pattern, text, p, max_len)
            {
                if n <= max_tokens {
                    return p;
                }
                // Every cut in `lowest..=p` is deep with a count over budget.
                p = lowest - 1;
                continue;
            }
            // The largest boundary that is safe for p: `safe_from` grows
            // with the boundary (and is at least it), so the boundaries safe
            // for `p` are a prefix of `bounds`, shrinking as `p` falls. The
            // first, 0, is safe for every `p`.
            while k > 1 && bounds[k - 1].2 > p {
                k -= 1;
            }
            let (b, c, _) = bounds[k - 1];
            let present = if gaps { self.model.present(&text.as_bytes()[b..p]) } else { p - b };
            let lower = c + present.div_ceil(max_len);
            if lower <= max_tokens
                && let Some(n) = self.count_normalized_till_limit(&text[b..p], max_tokens - c)
                && c + n <= max_tokens
            {
                return p;
            }
            p -= 1;
        }
        lo
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

    /// A cut at or before `len` at the preferred kind of boundary whose
    /// prefix still fits; `len` when there is none.
    fn preferred_cut(&self, rest: &str, len: usize, max_tokens: usize, prefer: Boundary) -> usize {
        let kinds: &[fn(&str, usize) -> bool] = match prefer {
            Boundary::Char => return len,
            Boundary::Newline => &[after_newline, after_whitespace],
            Boundary::Whitespace => &[after_whitespace],
            Boundary::Sentence => &[after_sentence, after_newline, after_whitespace],
            Boundary::Paragraph => {
                &[after_blank_line, after_sentence, after_newline, after_whitespace]
            }
        };
        for is_cut in kinds {
            // Try the last few candidates; a shorter prefix usually fits.
            let cuts = rest[..len]
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .rev()
                .filter(|&cut| is_cut(rest, cut))
                .take(8);
            for cut in cuts {
                if self.count_till_limit(&rest[..cut], max_tokens).is_some() {
                    return cut;
                }
            }
        }
        len
    }
}

/// Whether `text[..cut]` ends with a line feed.
fn after_newline(text: &str, cut: usize) -> bool {
    text[..cut].ends_with('\n')
}

/// Whether `text[..cut]` ends with whitespace.
fn after_whitespace(text: &str, cut: usize) -> bool {
    text[..cut].chars().next_back().is_some_and(char::is_whitespace)
}

/// Whether `text[..cut]` ends a sentence: a terminator, then any closing
/// quotes or brackets, then whitespace up to `cut` and no more (or, for the
/// CJK terminators, which need no space after them, nothing).
fn after_sentence(text: &str, cut: usize) -> bool {
    let (head, tail) = text.split_at(cut);
    if tail.chars().next().is_some_and(char::is_whitespace) {
        return false;
    }
    let trimmed = head.trim_end();
    let spaced = trimmed.len() < head.len();
    let body = trimmed.trim_end_matches(['"', '\'', ')', ']', '”', '’', '」', '』', '）']);
    match body.chars().next_back() {
        Some('.' | '!' | '?' | '…') => spaced,
        Some('。' | '！' | '？') => true,
        _ => false,
    }
}

/// Whether `text[..cut]` ends with a blank line: a line feed, optional
/// spaces or tabs (or a carriage return), and a line feed.
fn after_blank_line(text: &str, cut: usize) -> bool {
    let head = &text[..cut];
    let Some(rest) = head.strip_suffix('\n') else { return false };
    rest.trim_end_matches([' ', '\t', '\r']).ends_with('\n')
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

/// The largest char boundary of `text` at or before `i` (`i <= text.len()`).
fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Pieces at least this long (and longer than every token) get a prefix
/// table in [`Tokenizer::split_at_tokens`].
const LONG_PIECE: usize = 64;

/// A cut at `p` inside a long piece is *deep* when the characters around it
/// stay in one class for this many characters before `p` (and one after).
const DEEP_CHARS: usize = 4;

/// A long piece `text[x..y]` of the window of
/// [`Tokenizer::split_at_tokens`], with the BPE count of each of its
/// prefixes as far as one can still fit.
struct LongPiece {
    x: usize,
    y: usize,
    /// Tokens of the pieces before `x`.
    before: usize,
    /// The last token of every prefix of the piece, up to `table.len()`.
    table: PrefixTable,
    /// When the table stops short of `y`: a floor on the BPE count of every
    /// longer prefix of the piece, above the budget.
    floor: Option<usize>,
    /// `safe_from(text, x)`.
    safe_x: usize,
    /// The end of the run of whitespace other than `\r` and `\n` that
    /// starts the piece (`x` when it starts otherwise).
    ws_end: usize,
    /// The first character of o200k's "lower" class in the piece (`y` when
    /// none).
    first_lower: usize,
}

/// The table of a long piece grows by this many bytes between checks of
/// whether any longer prefix can still fit.
const TABLE_STEP: usize = 1024;

impl LongPiece {
    /// Builds the table of `text[x..y]` until no longer prefix of the piece
    /// can have at most `budget` tokens.
    ///
    /// The BPE count `d(k)` of the first `k` bytes satisfies
    /// `d(k) = d(k - len(last token)) + 1`, with a last token of at most `L`
    /// bytes, so by induction every `k > K` has `d(k) > min(d(K - L + 1..=K))`:
    /// once that minimum reaches the budget, no longer prefix fits.
    fn new(
        tok: &Tokenizer,
        bt: &crate::backtrack::Backtracker,
        text: &str,
        x: usize,
        y: usize,
        before: usize,
        budget: usize,
    ) -> LongPiece {
        let max_len = tok.max_token_len().max(1);
        let mut table = PrefixTable::new(x);
        let mut floor = None;
        let mut end = x;
        while end < y {
            end = (end + TABLE_STEP).min(y);
            #[cfg(test)]
            work::add(end - x - table.len());
            table.extend(bt, &tok.model, &tok.tokens, text.as_bytes(), end);
            let k = end - x;
            if end < y && k >= max_len {
                let min = (k + 1 - max_len..=k).map(|j| table.count(j)).min().unwrap_or(0);
                if min >= budget {
                    floor = Some(min + 1);
                    break;
                }
            }
        }
        let piece = &text[x..y];
        let ws_end = x + piece
            .char_indices()
            .find(|&(_, c)| !c.is_whitespace() || c == '\r' || c == '\n')
            .map_or(piece.len(), |(i, _)| i);
        let first_lower = x + piece
            .char_indices()
            .find(|&(_, c)| flags(c) & LOWER != 0)
            .map_or(piece.len(), |(i, _)| i);
        LongPiece { x, y, before, table, floor, safe_x: safe_from(text, x), ws_end, first_lower }
    }

    /// BPE's count of the first `k` bytes of the piece, or (past the table)
    /// the floor, which is over the budget.
    fn count_or_floor(&self, k: usize) -> usize {
        match self.floor {
            Some(floor) if k > self.table.len() => floor,
            _ => self.table.count(k),
        }
    }

    /// For a cut `x < p < y` that is deep: the token count of `text[..p]`
    /// (or a floor over the budget), and the lowest cut of the same class
    /// run from which every cut up to `p` is deep with the same kind of
    /// answer (`p` itself inside the table; the run's lowest deep cut past
    /// the table). `None` when the cut is not deep (the caller counts it
    /// the slow way).
    ///
    /// A deep cut keeps the piece whole, so the count is the tokens before
    /// `x` plus BPE of `text[x..p]`. The split patterns are leftmost-first
    /// alternations of class loops, and `text[x..y]` matched some
    /// alternative `j`. On the shorter text an earlier alternative still
    /// fails (a match on a prefix is a match on the text; the only
    /// lookahead, `\s+(?!\S)`, comes before `\s+` alone), and alternative
    /// `j` still takes every character up to `p` when the characters before
    /// and at `p` are in one loop's class: letters (`\p{L}+`; for o200k the
    /// "lower" class, which ends `[A]*[B]+`, or the "upper" one when no
    /// "lower" character precedes `p`, where `[A]*[B]+` fails and `[A]+`
    /// takes all), GPT-2's digits, punctuation (`[^\s\p{L}\p{N}]+`, the
    /// apostrophe excluded) and white space without a newline from `x` on
    /// (`\s+(?!\S)`). The cut is at least `DEEP_CHARS` characters past the
    /// piece start, so `x` is safe for `p` (or, for white space, the piece
    /// before `x` ended where the run starts, which it still sees), and
    /// more than `L` bytes past it, so the whole-piece shortcut cannot
    /// apply. Property-tested against exhaustive search in
    /// `tests/it/chunk.rs`.
    fn deep_count(
        &self,
        pattern: Pattern,
        text: &str,
        p: usize,
        max_len: usize,
    ) -> Option<(usize, usize)> {
        let min_p = self.x + max_len.max(4 * DEEP_CHARS) + 1;
        if p < min_p {
            return None;
        }
        if matches!(pattern, Pattern::SentencePiece | Pattern::Whole) {
            // Any cut keeps the piece one piece (`[^ ]+` and ` +[^ ]*` are
            // closed under prefixes, as is the whole text) and leaves the
            // pieces before it alone.
            let k = p - self.x;
            if k <= self.table.len() {
                return Some((self.before + self.table.count(k), p));
            }
            let floor = self.floor.unwrap_or(usize::MAX - self.before);
            let lowest = (self.x + self.table.len() + 1).max(min_p);
            return Some((self.before + floor, lowest.min(p)));
        }
        let c = text[p..].chars().next()?;
        let class = run_class(pattern, c)?;
        let mut before = text[..p].char_indices().rev();
        let mut run_start = p;
        for _ in 0..DEEP_CHARS {
            let (i, c) = before.next()?;
            if run_class(pattern, c) != Some(class) {
                return None;
            }
            run_start = i;
        }
        let ok = match class {
            RunClass::Space => p <= self.ws_end,
            RunClass::Upper => p <= self.first_lower && self.safe_x <= p,
            _ => self.safe_x <= p,
        };
        if !ok {
            return None;
        }
        let k = p - self.x;
        if k <= self.table.len() {
            return Some((self.before + self.table.count(k), p));
        }
        // Past the table every deep cut is over budget: skip to the lowest
        // deep cut of this class run that is still past the table.
        let mut lowest = run_start;
        for (i, c) in before {
            if run_class(pattern, c) != Some(class) {
                break;
            }
            lowest = i;
        }
        // `lowest` is the run start; the first deep cut is `DEEP_CHARS`
        // characters further.
        let first_deep =
            text[lowest..].char_indices().nth(DEEP_CHARS).map_or(p, |(i, _)| lowest + i);
        let mut lowest = first_deep.max(self.x + self.table.len() + 1).max(min_p);
        if class != RunClass::Space {
            lowest = lowest.max(self.safe_x);
        }
        let floor = self.floor.unwrap_or(usize::MAX - self.before);
        Some((self.before + floor, lowest.min(p)))
    }
}

/// The loop classes of the split patterns that a deep cut may fall in (see
/// [`LongPiece::deep_count`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunClass {
    /// White space other than `\r` and `\n`.
    Space,
    /// `\p{L}` (cl100k, Qwen2, GPT-2).
    Letter,
    /// o200k's "lower" class `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
    Lower,
    /// o200k's "upper" class without the "lower" one (`\p{Lu}`, `\p{Lt}`).
    Upper,
    /// `\p{N}` (GPT-2's ` ?\p{N}+`).
    Number,
    /// `[^\s\p{L}\p{N}]` without the apostrophe (and, for o200k, without
    /// the marks, which its word classes hold).
    Punct,
}

fn run_class(pattern: Pattern, c: char) -> Option<RunClass> {
    let f = flags(c);
    if f & SPACE != 0 {
        return (c != '\r' && c != '\n').then_some(RunClass::Space);
    }
    match pattern {
        Pattern::O200k => {
            if f & LOWER != 0 {
                Some(RunClass::Lower)
            } else if f & UPPER != 0 {
                Some(RunClass::Upper)
            } else if f & (LETTER | NUMBER) == 0 && c != '\'' {
                Some(RunClass::Punct)
            } else {
                None
            }
        }
        Pattern::Cl100k | Pattern::Qwen2 | Pattern::Gpt2 | Pattern::Gpt2Digits => {
            if f & LETTER != 0 {
                Some(RunClass::Letter)
            } else if f & NUMBER != 0 {
                (pattern == Pattern::Gpt2).then_some(RunClass::Number)
            } else if c != '\'' {
                Some(RunClass::Punct)
            } else {
                None
            }
        }
        Pattern::Whole | Pattern::SentencePiece => None,
    }
}

/// Bytes encoded from scratch by the chunker in this thread (tests only):
/// the work that makes a search linear or quadratic, counted instead of
/// timed.
#[cfg(test)]
pub(crate) mod work {
    use std::cell::Cell;

    thread_local! {
        static BYTES: Cell<u64> = const { Cell::new(0) };
    }

    pub(crate) fn add(n: usize) {
        BYTES.with(|b| b.set(b.get() + n as u64));
    }

    /// The bytes counted so far (and the counter reset).
    pub(crate) fn take() -> u64 {
        BYTES.with(|b| b.replace(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SentencePiece-style vocabularies of the shared corpora.
    fn sentencepiece() -> Vec<(&'static str, Tokenizer)> {
        let Some(dir) = testkit::data_dir_or_skip("chunking with SentencePiece vocabularies")
        else {
            return Vec::new();
        };
        ["llama2", "mistral03"]
            .into_iter()
            .map(|name| {
                let file = dir.join(format!("tokenizers/{name}.tokenizer.json.gz"));
                (name, Tokenizer::from_tokenizer_json(&testkit::read(&file)).unwrap())
            })
            .collect()
    }

    /// Runs of one character with a SentencePiece-style vocabulary: the
    /// chunker encodes each byte a bounded number of times (the prefix
    /// table of the run, plus a few short candidates per chunk), where it
    /// used to re-encode the prefix for every candidate cut (`5 MB` of `a`
    /// took over 100 s in a release build).
    #[test]
    fn chunking_sentencepiece_runs_is_linear_work() {
        for (name, tok) in sentencepiece() {
            assert!(!tok.restartable(), "{name}: the prefix space makes it a special case");
            for c in ["a", " ", "\u{2581}", "é"] {
                let text = c.repeat(200_000 / c.len());
                work::take();
                let chunks = tok.chunks(&text, 500, Boundary::Char);
                let work = work::take();
                assert_eq!(chunks.last().map(|c| c.range.end), Some(text.len()));
                for ch in &chunks {
                    assert!(ch.tokens <= 500, "{name} {c:?}: {ch:?}");
                }
                // The first chunk is the longest that fits.
                let first = chunks[0].range.end;
                assert!(tok.count(&text[..first + c.len()]) > 500, "{name} {c:?}");
                assert!(
                    work <= 3 * text.len() as u64,
                    "{name} {c:?}: {work} bytes encoded for {} bytes in {} chunks",
                    text.len(),
                    chunks.len()
                );
            }
        }
    }
}
