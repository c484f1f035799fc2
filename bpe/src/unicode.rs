//! Unicode character classes used by the pre-tokenizers.
//!
//! The split patterns of cl100k, o200k, Llama-3, Qwen2 and GPT-2 use a few
//! classes: `\p{L}`, `\p{N}`, `\s` (White_Space), and for o200k the unions
//! `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`. Their
//! ranges come from `regex-syntax` (the same Unicode tables the `regex` crate
//! and `fancy-regex` use), so the hand-written splitters classify every
//! character exactly as the reference regexes do.
//!
//! Layout: one flag byte per character. The Basic Multilingual Plane has a
//! direct 64 KiB table; the other planes use a sorted list of segments
//! (start code point, flags) searched by binary search.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// `\p{L}`: letters.
pub(crate) const LETTER: u8 = 1;
/// `\p{N}`: numbers.
pub(crate) const NUMBER: u8 = 2;
/// `\s`: Unicode White_Space.
pub(crate) const SPACE: u8 = 4;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: o200k's "upper" class.
pub(crate) const UPPER: u8 = 8;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: o200k's "lower" class.
pub(crate) const LOWER: u8 = 16;

struct Tables {
    /// Flags of every code point below 0x10000 (surrogates get 0).
    bmp: Box<[u8]>,
    /// Segments above the BMP: `(first code point, flags)`, sorted; a
    /// segment runs until the next one starts.
    astral: Vec<(u32, u8)>,
}

static TABLES: OnceLock<Tables> = OnceLock::new();

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    // The patterns are fixed and valid; a failure here is a bug in this file
    // (covered by the unit tests), so an empty class is the safe fallback.
    let Ok(hir) = regex_syntax::Parser::new().parse(pattern) else {
        return Vec::new();
    };
    match hir.kind() {
        HirKind::Class(Class::Unicode(cls)) => {
            cls.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect()
        }
        _ => Vec::new(),
    }
}

fn build() -> Tables {
    let classes = [
        (LETTER, r"\p{L}"),
        (NUMBER, r"\p{N}"),
        (SPACE, r"\s"),
        (UPPER, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
        (LOWER, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    ];
    let mut bmp = vec![0u8; 0x10000].into_boxed_slice();
    // Per-class ranges above the BMP, turned into segments below.
    let mut events: Vec<(u32, u8, bool)> = Vec::new();
    for (flag, pattern) in classes {
        for (lo, hi) in class_ranges(pattern) {
            for cp in lo..=hi.min(0xFFFF) {
                bmp[cp as usize] |= flag;
            }
            if hi > 0xFFFF {
                events.push((lo.max(0x10000), flag, true));
                events.push((hi + 1, flag, false));
            }
        }
    }
    events.sort_unstable();
    let mut astral: Vec<(u32, u8)> = vec![(0x10000, 0)];
    let mut counts = [0u32; 8];
    let mut i = 0;
    while i < events.len() {
        let at = events[i].0;
        while i < events.len() && events[i].0 == at {
            let bit = events[i].1.trailing_zeros() as usize;
            if events[i].2 {
                counts[bit] += 1;
            } else {
                counts[bit] -= 1;
            }
            i += 1;
        }
        let flags = (0..8).filter(|&b| counts[b] > 0).fold(0u8, |f, b| f | (1 << b));
        if astral.last().is_some_and(|&(start, _)| start == at) {
            astral.pop();
        }
        if astral.last().is_none_or(|&(_, f)| f != flags) {
            astral.push((at, flags));
        }
    }
    Tables { bmp, astral }
}

/// The class flags of a code point below 0x10000.
#[inline]
pub(crate) fn flags_bmp(cp: u16) -> u8 {
    TABLES.get_or_init(build).bmp[cp as usize]
}

/// The class flags of `c` (a combination of the constants above).
#[inline]
pub(crate) fn flags(c: char) -> u8 {
    let cp = c as u32;
    let t = TABLES.get_or_init(build);
    if cp < 0x10000 {
        t.bmp[cp as usize]
    } else {
        let i = t.astral.partition_point(|&(start, _)| start <= cp);
        // `astral[0]` starts at 0x10000 <= cp, so `i >= 1`.
        t.astral[i.saturating_sub(1)].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_sample_characters() {
        assert_eq!(flags('a'), LETTER | LOWER);
        assert_eq!(flags('A'), LETTER | UPPER);
        assert_eq!(flags('7'), NUMBER);
        assert_eq!(flags(' '), SPACE);
        assert_eq!(flags('\n'), SPACE);
        assert_eq!(flags('\u{3000}'), SPACE);
        assert_eq!(flags('!'), 0);
        assert_eq!(flags('猫'), LETTER | UPPER | LOWER); // Lo
        assert_eq!(flags('\u{0301}'), UPPER | LOWER); // Mn: a mark, not a letter
        assert_eq!(flags('\u{1D400}'), LETTER | UPPER); // MATHEMATICAL BOLD CAPITAL A
        assert_eq!(flags('\u{1D41A}'), LETTER | LOWER); // MATHEMATICAL BOLD SMALL A
        assert_eq!(flags('\u{1F600}'), 0); // an emoji
        assert_eq!(flags('\u{10FFFF}'), 0);
    }
}
