//! Final piece boundaries: where the pre-tokenizer's cut cannot move,
//! whatever text is appended.
//!
//! The split patterns of the built-in vocabularies (cl100k/Llama-3, o200k,
//! Qwen2, GPT-2, and GPT-2 with single digits as in SmolLM2) are
//! leftmost-first alternations of greedy character classes (a single digit
//! reads nothing past itself). The piece that starts at a true boundary
//! `s` and ends at `e` is chosen by looking at characters from `s` on; it
//! reads past `e` only in four ways:
//!
//! 1. every greedy class reads one character past its run to see it end
//!    (so `e` needs a character after it);
//! 2. the whitespace alternatives (`\s+(?!\S)`, `\s*[\r\n]+`, `\s+`), reached
//!    only when the piece starts with whitespace, read that whole run and
//!    the character after it (so the run must end inside the text);
//! 3. the contractions (`'s|'t|'re|'ve|'m|'ll|'d`, at a piece start or as
//!    o200k's suffix after letters) read up to three characters from the
//!    apostrophe (so three characters must exist from the last apostrophe in
//!    `s..=e`);
//! 4. the word alternatives backtrack between letter classes (o200k's
//!    `[\p{Lu}…\p{M}]*[\p{Ll}…\p{M}]+`, with an optional first character
//!    that may be a mark): over a run with non-ASCII characters (classes
//!    that overlap) they read the whole letter-or-mark run that starts at
//!    `s` or one character later, and the character after it.
//!
//! When the text has all of that, appending anything leaves the piece, and
//! by induction every piece before it, unchanged. A property test checks the
//! rule against splitting the extended text.

use bpe::Pattern;

/// Whether the rule below knows `pattern` (other patterns have no final
/// boundary before the end of the text).
pub(crate) fn supported(pattern: Pattern) -> bool {
    matches!(
        pattern,
        Pattern::Cl100k | Pattern::O200k | Pattern::Qwen2 | Pattern::Gpt2 | Pattern::Gpt2Digits
    )
}

/// The piece boundaries of `text` (split from a true boundary at 0) that no
/// appended text can move, in increasing order, into `out` (cleared first).
/// They are a prefix of the boundaries: the first boundary that could move
/// makes every later one uncertain too.
pub(crate) fn final_boundaries(pattern: Pattern, text: &str, out: &mut Vec<usize>) {
    out.clear();
    if !supported(pattern) {
        return;
    }
    let mut s = 0;
    for piece in pattern.split(text) {
        let e = s + piece.len();
        if e >= text.len() {
            break; // rule 1: a character must follow
        }
        // Rule 2: a piece starting with whitespace was chosen after the
        // whitespace alternatives scanned the run: it must end inside.
        let first = text[s..].chars().next().unwrap_or(' ');
        if first.is_whitespace() && !text[s..].chars().any(|c| !c.is_whitespace()) {
            break;
        }
        // Rule 4: the letter run the word alternatives may backtrack over,
        // from `s` or after an optional first character, must end inside.
        // ASCII letters are upper or lower case, never both, so over them
        // the match ends one character past `e` without backtracking.
        let r = word_run_end(text, s).max(word_run_end(text, s + first.len_utf8()));
        let ascii_run = text[s..r].is_ascii();
        if r >= text.len() && !ascii_run {
            break;
        }
        let upto = if ascii_run { e } else { e.max(r) };
        let next_len = text[upto..].chars().next().map_or(0, char::len_utf8);
        if let Some(a) = text[s..upto + next_len].rfind('\'')
            && text[s + a..].chars().nth(2).is_none()
        {
            break; // rule 3: a contraction could still match
        }
        out.push(e);
        s = e;
    }
}

/// Whether `c` may belong to a letter run of a split pattern (`\p{L}` or
/// `\p{M}`): over-approximated by every non-ASCII character that is not
/// whitespace, which only makes the rules stricter.
fn is_word(c: char) -> bool {
    c.is_ascii_alphabetic() || (!c.is_ascii() && !c.is_whitespace())
}

/// The end of the run of word characters starting at `i`.
fn word_run_end(text: &str, i: usize) -> usize {
    match text[i..].char_indices().find(|&(_, c)| !is_word(c)) {
        Some((j, _)) => i + j,
        None => text.len(),
    }
}

/// The piece boundaries of `text`, all of them (the end included).
pub(crate) fn boundaries(pattern: Pattern, text: &str, out: &mut Vec<usize>) {
    out.clear();
    let mut pos = 0;
    for piece in pattern.split(text) {
        pos += piece.len();
        out.push(pos);
    }
}

/// An equivalence of ASCII bytes for the split patterns: two bytes with the
/// same key are treated alike by every supported pattern (letters of the
/// contractions, `'`, `/`, the space, `\r` and `\n` stand alone; the other
/// whitespace bytes `\t`, VT and FF are `\s` and nothing else; the other
/// control bytes are, like punctuation, none of `\s`, `\p{L}`, `\p{N}`).
/// 27 keys, so a check over every ASCII byte splits 27 texts.
pub(crate) fn ascii_key(b: u8) -> u16 {
    match b {
        b's' | b't' | b'r' | b'e' | b'v' | b'm' | b'l' | b'd' => b as u16,
        b'S' | b'T' | b'R' | b'E' | b'V' | b'M' | b'L' | b'D' => b as u16,
        b'a'..=b'z' => 256,
        b'A'..=b'Z' => 257,
        b'0'..=b'9' => 258,
        b'\'' | b'/' | b' ' | b'\r' | b'\n' => b as u16,
        b'\t' | 0x0b | 0x0c => 260,
        _ => 259, // punctuation and the other control bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALPHABET: &[&str] = &[
        "a", "s", "l", "e", "d", "t", "A", "S", "L", "0", "1", "7", " ", " ", "\n", "\r", "\t",
        "'", "\"", ":", "/", ",", "{", "é", "\u{301}", "中", "É", "\u{a0}",
    ];

    fn text_from(ix: &[usize]) -> String {
        ix.iter().map(|&i| ALPHABET[i % ALPHABET.len()]).collect()
    }

    fn check(pattern: Pattern, k: &str, x: &str) -> Result<(), TestCaseError> {
        let mut fin = Vec::new();
        final_boundaries(pattern, k, &mut fin);
        let mut kb = Vec::new();
        boundaries(pattern, k, &mut kb);
        let full = format!("{k}{x}");
        let mut fb = Vec::new();
        boundaries(pattern, &full, &mut fb);
        if let Some(&last) = fin.last() {
            let before_k: Vec<usize> = kb.iter().copied().filter(|&b| b <= last).collect();
            let before_full: Vec<usize> = fb.iter().copied().filter(|&b| b <= last).collect();
            prop_assert_eq!(&before_k, &fin);
            prop_assert_eq!(before_full, before_k, "{:?}: {:?} + {:?}", pattern, k, x);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn final_boundaries_survive_any_continuation(
            k in proptest::collection::vec(0usize..64, 0..12),
            x in proptest::collection::vec(0usize..64, 0..6),
        ) {
            let (k, x) = (text_from(&k), text_from(&x));
            for p in [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2, Pattern::Gpt2Digits] {
                check(p, &k, &x)?;
            }
        }
    }

    #[test]
    fn json_keys_are_final_before_their_quote() {
        let mut fin = Vec::new();
        final_boundaries(Pattern::O200k, r#"{"name":"#, &mut fin);
        assert_eq!(fin, [2, 6]); // `{"` and `name`; `":` may still grow
        final_boundaries(Pattern::Cl100k, "we'l", &mut fin);
        assert_eq!(fin, [] as [usize; 0]); // `'ll` may still come
    }

    #[test]
    fn ascii_keys_group_only_equivalent_bytes() {
        // Bytes with one key must split alike after every context.
        let contexts = [
            "", "a", "A", "1", " ", "'", "\"", "ab'", " \n", "x/", "Ab", "\t", "\x01", " \t", "\r",
            "é", "a\u{301}", "中", "\u{a0}", "  ", "'l",
        ];
        for p in
            [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2, Pattern::Gpt2Digits]
        {
            for a in 0u8..128 {
                for b in 0u8..128 {
                    if ascii_key(a) != ascii_key(b) || a == b {
                        continue;
                    }
                    for c in contexts {
                        for d in ["", "a", " ", "1", "\"", "s", "\t", "\n", "\x01", "é", "'", "A"]
                        {
                            let (ta, tb) =
                                (format!("{c}{}{d}", a as char), format!("{c}{}{d}", b as char));
                            let (mut ba, mut bb) = (Vec::new(), Vec::new());
                            boundaries(p, &ta, &mut ba);
                            boundaries(p, &tb, &mut bb);
                            assert_eq!(ba, bb, "{p:?}: {ta:?} vs {tb:?}");
                        }
                    }
                }
            }
        }
    }
}
