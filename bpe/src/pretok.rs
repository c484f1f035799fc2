//! Pre-tokenization: the split patterns of the built-in vocabularies,
//! hand-written.
//!
//! Each pattern is a leftmost-first alternation of simple classes; the
//! functions below follow its alternatives in order, with the backtracking the
//! regex would do written out (for example o200k's `[A]*[B]+`, or `\s+(?!\S)`
//! giving back the last whitespace character before a non-space). They are
//! property-tested equal to `fancy-regex` running [`Pattern::regex`].
//!
//! Every pattern matches at every position (its classes cover all
//! characters), so the pieces tile the text.

use crate::unicode::{LETTER, LOWER, NUMBER, SPACE, UPPER, flags, flags_bmp};

/// A pre-tokenization split pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pattern {
    /// cl100k_base's pattern, also Llama-3's: `\p{N}{1,3}` digit groups.
    Cl100k,
    /// o200k_base's pattern: case-aware words, `[\r\n/]*` after punctuation.
    O200k,
    /// Qwen2's pattern: cl100k's with single digits (`\p{N}`).
    Qwen2,
    /// GPT-2's pattern (r50k_base, p50k_base, Hugging Face `ByteLevel` with
    /// `use_regex`).
    Gpt2,
    /// GPT-2's pattern with every digit (`\p{N}`) a piece of its own:
    /// Hugging Face's `Digits(individual_digits)` before `ByteLevel`, and
    /// llama.cpp's `smollm`, `starcoder`, `refact` and `command-r`
    /// pre-tokenizers (SmolLM2, StarCoder). GPT-2's pattern then runs on the
    /// text between digits, so a whitespace run before a digit is one piece.
    Gpt2Digits,
    /// No splitting: the whole text is one piece (SentencePiece-style).
    Whole,
    /// SentencePiece-style words, `[^ ]+| +[^ ]*`: a piece starts at every
    /// space that follows another character. A `tokenizer.json` without a
    /// split pattern (Llama-2, Mistral) gets it when no token holds a space
    /// after another character: then no merge crosses such a boundary, and
    /// splitting there is exact (and much faster than BPE on the whole text).
    SentencePiece,
}

const CONTRACTIONS_CI: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)";

impl Pattern {
    /// The regular expression this pattern implements (`None` for
    /// [`Pattern::Whole`]), in the spelling of tiktoken and Hugging Face.
    pub fn regex(self) -> Option<String> {
        let cl = |digits: &str| {
            format!(
                r"{CONTRACTIONS_CI}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|{digits}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
            )
        };
        Some(match self {
            Pattern::Cl100k => cl(r"\p{N}{1,3}"),
            Pattern::Qwen2 => cl(r"\p{N}"),
            Pattern::O200k => [
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                r"\s*[\r\n]+",
                r"\s+(?!\S)",
                r"\s+",
            ]
            .join("|"),
            Pattern::Gpt2 => {
                r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+".to_owned()
            }
            Pattern::SentencePiece => r"[^ ]+| +[^ ]*".to_owned(),
            // The two-stage split as one regex: digits first; ` ?\p{N}+`
            // cannot match between digits; a whitespace run ends a stage-one
            // segment where a digit follows, so `(?!\S)` also holds there.
            Pattern::Gpt2Digits => {
                r"\p{N}|'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+(?![^\s\p{N}])|\s+"
                    .to_owned()
            }
            Pattern::Whole => return None,
        })
    }

    /// Recognizes a split regex from a `tokenizer.json` (or elsewhere) as one
    /// of the built-in patterns. Spellings of the same language that the
    /// files use (tiktoken's possessive cl100k spelling among them) are
    /// accepted; anything else is `None`.
    pub fn from_regex(regex: &str) -> Option<Pattern> {
        const CL100K_POSSESSIVE: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
        if regex == CL100K_POSSESSIVE {
            return Some(Pattern::Cl100k);
        }
        [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2, Pattern::Gpt2Digits]
            .into_iter()
            .find(|p| p.regex().as_deref() == Some(regex))
    }

    /// The end (byte offset) of the piece that starts at `start`
    /// (`start < text.len()`, on a char boundary).
    pub(crate) fn piece_end(self, text: &str, start: usize) -> usize {
        match self {
            Pattern::Cl100k => cl100k_end(text, start, 3),
            Pattern::Qwen2 => cl100k_end(text, start, 1),
            Pattern::O200k => o200k_end(text, start),
            Pattern::Gpt2 => gpt2_end(text, start),
            Pattern::SentencePiece => sentencepiece_end(text, start),
            Pattern::Gpt2Digits => gpt2_digits_end(text, start),
            Pattern::Whole => text.len(),
        }
    }

    /// The end of the whitespace piece starting at `start`, resuming a scan
    /// of the whitespace run at `i` (see [`space_end_resume`]; the interval
    /// encoder jumps over long runs of one byte with it).
    pub(crate) fn resume_space(
        self,
        text: &str,
        start: usize,
        i: usize,
        last_newline_end: Option<usize>,
        last_char_start: usize,
    ) -> usize {
        if self == Pattern::Gpt2Digits {
            let e = run(text, i, SPACE);
            if at(text, e).is_none_or(|(_, f, _)| f & NUMBER != 0) {
                return e;
            }
        }
        let nl = self.has_newline_alternative();
        space_end_resume(text, start, nl, i, last_newline_end, last_char_start)
    }

    /// Whether the pattern has cl100k's newline alternative
    /// `\s*[\r\n]+` (all built-in patterns but GPT-2's).
    pub(crate) fn has_newline_alternative(self) -> bool {
        !matches!(self, Pattern::Gpt2 | Pattern::Gpt2Digits)
    }

    /// Whether the piece `text[start..end]`, split from a position `start`
    /// that stays a piece boundary, stays a piece whatever is appended to
    /// `text`: its regex match looked at no character past the end.
    ///
    /// A match is decided by the characters up to the one after it, with
    /// three exceptions handled here: a whitespace run is scanned to its end
    /// (the run must end before the text does); the contractions read up to
    /// three characters (from an apostrophe at the start, and after an o200k
    /// word); o200k's `[A]*[B]+` scans a run of "upper" characters past the
    /// match (some character that is neither "upper" nor "lower" must follow
    /// within the text).
    pub(crate) fn piece_is_final(self, text: &str, start: usize, end: usize) -> bool {
        if end >= text.len() || start >= end || self == Pattern::Whole {
            return false;
        }
        let rest = &text[end..];
        let chars3 = |s: &str| s.chars().take(3).count() == 3;
        if text.as_bytes()[start] == b'\'' && !chars3(&text[start..]) {
            return false;
        }
        if text[start..end].chars().all(|c| flags(c) & SPACE != 0) {
            return rest.chars().any(|c| flags(c) & SPACE == 0);
        }
        match self {
            Pattern::O200k => {
                (!rest.starts_with('\'') || chars3(rest))
                    && rest.chars().any(|c| flags(c) & (UPPER | LOWER) == 0)
            }
            _ => true,
        }
    }

    /// The pieces of `text`, in order; they concatenate to `text`.
    pub fn split(self, text: &str) -> Pieces<'_> {
        Pieces { pattern: self, text, pos: 0 }
    }
}

/// The iterator of [`Pattern::split`].
#[derive(Debug, Clone)]
pub struct Pieces<'a> {
    pattern: Pattern,
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let end = self.pattern.piece_end(self.text, start);
        // Every alternative consumes at least one character; keep the
        // iterator total even if that were ever violated.
        let end = if end > start { end } else { next_boundary(self.text, start) };
        self.pos = end;
        Some(&self.text[start..end])
    }
}

fn next_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j
}

/// The character at byte `i` (a char boundary) and its flags and length, or
/// `None` at the end.
#[inline(always)]
fn at(text: &str, i: usize) -> Option<(char, u8, usize)> {
    let bytes = text.as_bytes();
    let b = *bytes.get(i)?;
    if b < 0x80 {
        return Some((b as char, ASCII[b as usize], 1));
    }
    // Three-byte characters (CJK, most of the BMP) decoded in place: the
    // text is valid UTF-8 and `i` a char boundary, so the two continuation
    // bytes are there and the value is a scalar.
    if (0xE0..0xF0).contains(&b)
        && let [_, b1, b2, ..] = bytes[i..]
    {
        let cp = u32::from(b & 0x0F) << 12 | u32::from(b1 & 0x3F) << 6 | u32::from(b2 & 0x3F);
        if let Some(c) = char::from_u32(cp) {
            return Some((c, flags_bmp(cp as u16), 3));
        }
    }
    let c = text[i..].chars().next()?;
    Some((c, flags(c), c.len_utf8()))
}

/// `[^\r\n\p{L}\p{N}]?[A-Z]*[a-z]*` on ASCII at `s`, when that is the whole
/// piece of o200k's first two alternatives: the letters end the text or
/// meet an ASCII byte that is neither a letter nor an apostrophe (which
/// could start a contraction). `None` when the general path must decide.
#[inline(always)]
fn o200k_ascii_word(b: &[u8], s: usize) -> Option<usize> {
    let c0 = *b.get(s)?;
    let mut i = s;
    if !c0.is_ascii_alphabetic() {
        // The optional prefix: ASCII, not a newline, letter or digit.
        let next = *b.get(s + 1)?;
        if c0 >= 0x80 || c0 == b'\r' || c0 == b'\n' || c0.is_ascii_digit() {
            return None;
        }
        if !next.is_ascii_alphabetic() {
            return None;
        }
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_uppercase() {
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_lowercase() {
        i += 1;
    }
    match b.get(i) {
        None => Some(i),
        Some(&c) if c < 0x80 && c != b'\'' => Some(i),
        _ => None,
    }
}

const fn ascii_flags() -> [u8; 128] {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let c = i as u8;
        t[i] = if c.is_ascii_uppercase() {
            LETTER | UPPER
        } else if c.is_ascii_lowercase() {
            LETTER | LOWER
        } else if c.is_ascii_digit() {
            NUMBER
        } else if matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r') {
            SPACE
        } else {
            0
        };
        i += 1;
    }
    t
}

static ASCII: [u8; 128] = ascii_flags();

/// The end of the maximal run of characters with any of `mask` from `i`.
#[inline]
fn run(text: &str, mut i: usize, mask: u8) -> usize {
    while let Some((_, f, l)) = at(text, i) {
        if f & mask == 0 {
            break;
        }
        i += l;
    }
    i
}

/// Like [`run`] but at most `max` characters.
#[inline]
fn run_max(text: &str, mut i: usize, mask: u8, max: usize) -> usize {
    for _ in 0..max {
        match at(text, i) {
            Some((_, f, l)) if f & mask != 0 => i += l,
            _ => break,
        }
    }
    i
}

/// `[^\s\p{L}\p{N}]`.
#[inline]
fn is_other(f: u8) -> bool {
    f & (LETTER | NUMBER | SPACE) == 0
}

/// The end of the run of `[^\s\p{L}\p{N}]` characters from `i`.
#[inline]
fn run_other(text: &str, mut i: usize) -> usize {
    while let Some((_, f, l)) = at(text, i) {
        if !is_other(f) {
            break;
        }
        i += l;
    }
    i
}

/// The end of a run of bytes from `set` (ASCII only) starting at `i`.
#[inline]
fn run_bytes(text: &str, mut i: usize, set: &[u8]) -> usize {
    while text.as_bytes().get(i).is_some_and(|b| set.contains(b)) {
        i += 1;
    }
    i
}

/// `'s|'t|'re|'ve|'m|'ll|'d` at `i` (which holds `'`), case-insensitive
/// with Unicode simple case folding (`ſ` folds to `s`) when `ci`.
#[inline]
fn contraction(text: &str, i: usize, ci: bool) -> Option<usize> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'\'') {
        return None;
    }
    let fold = |c: char| -> char {
        if !ci {
            c
        } else if c == '\u{17F}' {
            's'
        } else {
            c.to_ascii_lowercase()
        }
    };
    let (c1, _, l1) = at(text, i + 1)?;
    let j = i + 1 + l1;
    match fold(c1) {
        's' | 't' | 'm' | 'd' => Some(j),
        first @ ('r' | 'v' | 'l') => {
            let (c2, _, l2) = at(text, j)?;
            let want = if first == 'l' { 'l' } else { 'e' };
            (fold(c2) == want).then_some(j + l2)
        }
        _ => None,
    }
}

/// The whitespace alternatives `\s*[\r\n]+|\s+(?!\S)|\s+` (with
/// `newlines`) or `\s+(?!\S)|\s+` (without), at a whitespace character.
#[inline]
fn space_end(text: &str, start: usize, newlines: bool) -> usize {
    space_end_resume(text, start, newlines, start, None, start)
}

/// [`space_end`] resumed at `i` with its scan state so far: the end of the
/// last newline seen and the start of the last whitespace character (used to
/// jump over a long run of one whitespace byte in one step).
#[inline]
pub(crate) fn space_end_resume(
    text: &str,
    start: usize,
    newlines: bool,
    mut i: usize,
    mut last_newline_end: Option<usize>,
    mut last_char_start: usize,
) -> usize {
    while let Some((c, f, l)) = at(text, i) {
        if f & SPACE == 0 {
            break;
        }
        if newlines && (c == '\n' || c == '\r') {
            last_newline_end = Some(i + l);
        }
        last_char_start = i;
        i += l;
    }
    if let Some(end) = last_newline_end {
        // `\s*` backs off to the last newline, `[\r\n]+` takes it; what
        // follows it in the run is not a newline.
        return end;
    }
    if i == text.len() || last_char_start == start {
        // `\s+(?!\S)` at the end of the text, or a single space before a
        // non-space (`\s+` takes it).
        return i;
    }
    // `\s+(?!\S)` gives back the last whitespace character.
    last_char_start
}

/// `[^\r\n\p{L}\p{N}]?\p{L}+` (cl100k) or ` ?\p{L}+` (GPT-2, `space_only`)
/// on ASCII at `s`, when the letters end the text or meet an ASCII byte
/// that is not a letter. `None` when the general path must decide (a
/// leading apostrophe may start a contraction).
#[inline(always)]
fn ascii_word(b: &[u8], s: usize, space_only: bool) -> Option<usize> {
    let c0 = *b.get(s)?;
    let mut i = s;
    if !c0.is_ascii_alphabetic() {
        let prefix = if space_only {
            c0 == b' '
        } else {
            c0 < 0x80 && c0 != b'\r' && c0 != b'\n' && c0 != b'\'' && !c0.is_ascii_digit()
        };
        if !prefix || !b.get(s + 1)?.is_ascii_alphabetic() {
            return None;
        }
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_alphabetic() {
        i += 1;
    }
    match b.get(i) {
        Some(&c) if c >= 0x80 => None,
        _ => Some(i),
    }
}

fn cl100k_end(text: &str, s: usize, max_digits: usize) -> usize {
    if let Some(e) = ascii_word(text.as_bytes(), s, false) {
        return e;
    }
    let Some((c0, f0, l0)) = at(text, s) else { return s };
    if c0 == '\''
        && let Some(e) = contraction(text, s, true)
    {
        return e;
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if f0 & LETTER != 0 {
        return run(text, s, LETTER);
    }
    if c0 != '\r'
        && c0 != '\n'
        && f0 & NUMBER == 0
        && let Some((_, f1, _)) = at(text, s + l0)
        && f1 & LETTER != 0
    {
        return run(text, s + l0, LETTER);
    }
    // \p{N}{1,3}
    if f0 & NUMBER != 0 {
        return run_max(text, s, NUMBER, max_digits);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    if c0 == ' '
        && let Some((_, f1, _)) = at(text, s + 1)
        && is_other(f1)
    {
        return run_bytes(text, run_other(text, s + 1), b"\r\n");
    }
    if is_other(f0) {
        return run_bytes(text, run_other(text, s), b"\r\n");
    }
    space_end(text, s, true)
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after a word ending at `e`.
#[inline]
fn optional_contraction(text: &str, e: usize) -> usize {
    contraction(text, e, true).unwrap_or(e)
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` at `p`, with
/// the backtracking of the star written out.
#[inline]
fn o200k_upper_lower(text: &str, p: usize) -> Option<usize> {
    let mut i = p;
    let mut last_lower_end = None;
    while let Some((_, f, l)) = at(text, i) {
        if f & UPPER == 0 {
            break;
        }
        if f & LOWER != 0 {
            last_lower_end = Some(i + l);
        }
        i += l;
    }
    match at(text, i) {
        Some((_, f, _)) if f & LOWER != 0 => Some(run(text, i, LOWER)),
        // The star gives back characters until the plus can take the last
        // "lower" one of the upper run; the plus then ends there.
        _ => last_lower_end,
    }
}

fn o200k_end(text: &str, s: usize) -> usize {
    if let Some(e) = o200k_ascii_word(text.as_bytes(), s) {
        return e;
    }
    let Some((c0, f0, l0)) = at(text, s) else { return s };
    let prefix = c0 != '\r' && c0 != '\n' && f0 & (LETTER | NUMBER) == 0;
    // Alternative 1: [^\r\n\p{L}\p{N}]?[A]*[B]+(contraction)?
    if prefix && let Some(e) = o200k_upper_lower(text, s + l0) {
        return optional_contraction(text, e);
    }
    if let Some(e) = o200k_upper_lower(text, s) {
        return optional_contraction(text, e);
    }
    // Alternative 2: [^\r\n\p{L}\p{N}]?[A]+[B]*(contraction)?
    if prefix {
        let e = run(text, s + l0, UPPER);
        if e > s + l0 {
            return optional_contraction(text, run(text, e, LOWER));
        }
    }
    let e = run(text, s, UPPER);
    if e > s {
        return optional_contraction(text, run(text, e, LOWER));
    }
    if f0 & NUMBER != 0 {
        return run_max(text, s, NUMBER, 3);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    if c0 == ' '
        && let Some((_, f1, _)) = at(text, s + 1)
        && is_other(f1)
    {
        return run_bytes(text, run_other(text, s + 1), b"\r\n/");
    }
    if is_other(f0) {
        return run_bytes(text, run_other(text, s), b"\r\n/");
    }
    space_end(text, s, true)
}

/// `[^ ]+| +[^ ]*`: the end is the first space after a non-space.
#[inline]
fn sentencepiece_end(text: &str, s: usize) -> usize {
    let b = text.as_bytes();
    let mut i = s;
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    match memchr_space(&b[i..]) {
        Some(k) => i + k,
        None => b.len(),
    }
}

/// The offset of the first space in `b`.
#[inline]
fn memchr_space(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b' ')
}

fn gpt2_end(text: &str, s: usize) -> usize {
    if let Some(e) = ascii_word(text.as_bytes(), s, true) {
        return e;
    }
    let Some((c0, f0, _)) = at(text, s) else { return s };
    if c0 == '\''
        && let Some(e) = contraction(text, s, false)
    {
        return e;
    }
    // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`
    let (from, f) = if c0 == ' ' {
        match at(text, s + 1) {
            Some((_, f1, _)) => (s + 1, f1),
            None => (s, f0),
        }
    } else {
        (s, f0)
    };
    if f & LETTER != 0 {
        return run(text, from, LETTER);
    }
    if f & NUMBER != 0 {
        return run(text, from, NUMBER);
    }
    if is_other(f) {
        return run_other(text, from);
    }
    if f0 & SPACE == 0 {
        // Only reachable when `from != s`: a space before a space, handled
        // below; keep the scan total regardless.
        return run_other(text, s).max(s + 1);
    }
    space_end(text, s, false)
}

/// [`Pattern::Gpt2Digits`]: a digit is one piece; a whitespace run that a
/// digit (or the end) follows is one piece, as at the end of GPT-2's
/// stage-two segment; everything else is GPT-2's, whose other alternatives
/// stop at digits anyway.
fn gpt2_digits_end(text: &str, s: usize) -> usize {
    let Some((_, f0, l0)) = at(text, s) else { return s };
    if f0 & NUMBER != 0 {
        return s + l0;
    }
    if f0 & SPACE != 0 {
        let e = run(text, s, SPACE);
        if at(text, e).is_none_or(|(_, f, _)| f & NUMBER != 0) {
            return e;
        }
    }
    gpt2_end(text, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: Pattern, s: &str) -> Vec<&str> {
        p.split(s).collect()
    }

    #[test]
    fn cl100k_examples() {
        let p = Pattern::Cl100k;
        assert_eq!(pieces(p, "Hello world"), ["Hello", " world"]);
        assert_eq!(pieces(p, "I'm 12345!!\n\n"), ["I", "'m", " ", "123", "45", "!!\n\n"]);
        assert_eq!(pieces(p, "a   b"), ["a", "  ", " b"]);
        assert_eq!(pieces(p, "a  \n  b"), ["a", "  \n", " ", " b"]);
        assert_eq!(pieces(p, "x   "), ["x", "   "]);
    }

    #[test]
    fn o200k_examples() {
        let p = Pattern::O200k;
        assert_eq!(pieces(p, "HELLOworld HELLO"), ["HELLOworld", " HELLO"]);
        assert_eq!(pieces(p, "They're"), ["They're"]);
        assert_eq!(pieces(p, "a/b//\n"), ["a", "/b", "//\n"]);
    }

    #[test]
    fn gpt2_digits_examples() {
        let p = Pattern::Gpt2Digits;
        assert_eq!(pieces(p, "I'm 12 years"), ["I", "'m", " ", "1", "2", " years"]);
        assert_eq!(pieces(p, "a  1b   c"), ["a", "  ", "1", "b", "  ", " c"]);
        assert_eq!(pieces(p, "x٣ 7"), ["x", "٣", " ", "7"]);
    }

    use proptest::prelude::*;

    fn lookahead_text() -> impl Strategy<Value = String> {
        let chars = prop::sample::select(vec![
            'a', 's', 't', 'l', 'r', 'e', 'v', 'd', 'm', 'A', 'S', 'L', 'E', 'R', '\'', ' ', ' ',
            '\n', '\r', '\t', '0', '7', '.', '/', '!', '日', 'ʰ', '\u{301}', 'ſ', 'ǅ', 'É', 'é',
        ]);
        prop::collection::vec(chars, 0..40).prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        /// Pieces of a prefix that `piece_is_final` calls final (walking from
        /// the start) are pieces of the whole text.
        #[test]
        fn final_pieces_survive_appending(t in lookahead_text()) {
            for p in [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2, Pattern::SentencePiece, Pattern::Gpt2Digits] {
                let mut full = vec![0];
                full.extend(p.split(&t).scan(0, |e, s| { *e += s.len(); Some(*e) }));
                for end in (0..=t.len()).filter(|&e| t.is_char_boundary(e)) {
                    let prefix = &t[..end];
                    let mut x = 0;
                    for piece in p.split(prefix) {
                        let y = x + piece.len();
                        if !p.piece_is_final(prefix, x, y) {
                            break;
                        }
                        prop_assert!(full.contains(&y), "{:?}: piece {:?} of {:?}", p, piece, prefix);
                        x = y;
                    }
                }
            }
        }
    }

    #[test]
    fn known_regexes_are_recognized() {
        for p in
            [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2, Pattern::Gpt2Digits]
        {
            assert_eq!(Pattern::from_regex(&p.regex().unwrap()), Some(p));
        }
        assert_eq!(Pattern::from_regex(r"\w+"), None);
    }
}
