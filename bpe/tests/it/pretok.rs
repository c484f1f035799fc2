//! The hand-written splitters equal `fancy-regex` running the patterns.

use bpe::Pattern;
use proptest::prelude::*;

fn reference(pattern: Pattern, text: &str) -> Vec<String> {
    use std::sync::OnceLock;
    static RES: OnceLock<Vec<(Pattern, fancy_regex::Regex)>> = OnceLock::new();
    let res = RES.get_or_init(|| {
        [
            Pattern::Cl100k,
            Pattern::O200k,
            Pattern::Qwen2,
            Pattern::Gpt2,
            Pattern::SentencePiece,
            Pattern::Gpt2Digits,
        ]
        .into_iter()
        .map(|p| (p, fancy_regex::Regex::new(&p.regex().unwrap()).unwrap()))
        .collect()
    });
    let re = &res.iter().find(|r| r.0 == pattern).unwrap().1;
    re.find_iter(text).map(|m| m.unwrap().as_str().to_owned()).collect()
}

fn ours(pattern: Pattern, text: &str) -> Vec<String> {
    pattern.split(text).map(str::to_owned).collect()
}

/// Characters that exercise every class and alternative.
fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(vec![
            'a',
            'Z',
            'e',
            's',
            'S',
            't',
            'l',
            'L',
            'r',
            'v',
            'E',
            'm',
            'd',
            'D',
            '\'',
            ' ',
            ' ',
            ' ',
            '\n',
            '\r',
            '\t',
            '1',
            '9',
            '/',
            '!',
            '.',
            '-',
            '\u{17F}',
            '\u{212A}',
            '\u{0301}',
            '\u{0308}',
            '\u{00A0}',
            '\u{3000}',
            '\u{2581}',
            'é',
            'É',
            'ǅ',
            'ʰ',
            '猫',
            '٣',
            'Ⅻ',
            '😀',
            '\u{1D400}',
            '\u{1D41A}',
            '\u{000B}',
            '\u{0085}',
        ]),
        any::<char>(),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(interesting_char(), 0..40).prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn splitters_equal_the_regexes(t in text()) {
        for p in [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2, Pattern::SentencePiece, Pattern::Gpt2Digits] {
            prop_assert_eq!(ours(p, &t), reference(p, &t), "pattern {:?}", p);
        }
    }
}

#[test]
fn tiktoken_cl100k_spelling_agrees() {
    // tiktoken-rs spells cl100k with possessive quantifiers and `\s++$`.
    let possessive = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
    assert_eq!(Pattern::from_regex(possessive), Some(Pattern::Cl100k));
    let re = fancy_regex::Regex::new(possessive).unwrap();
    let mut rng = 0x9E37_79B9u64;
    let alphabet = ['a', 'B', ' ', '\n', '\r', '1', '\'', 's', '!', 'é', '\t', 'L'];
    for _ in 0..3000 {
        let mut t = String::new();
        for _ in 0..(rng % 24) {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            t.push(alphabet[(rng >> 33) as usize % alphabet.len()]);
        }
        let want: Vec<String> = re.find_iter(&t).map(|m| m.unwrap().as_str().to_owned()).collect();
        assert_eq!(ours(Pattern::Cl100k, &t), want, "{t:?}");
    }
}

/// Mostly-ASCII words around the fast paths' exits: apostrophes, case
/// changes, digits, newlines, and non-ASCII letters and marks right after
/// ASCII letters.
fn wordy_text() -> impl Strategy<Value = String> {
    let chars = prop_oneof![
        8 => prop::sample::select(vec![
            'a', 'b', 'Z', 'Q', 'e', 's', 't', 'l', 'r', 'v', 'd', 'm', 'S', 'T', 'L', 'D',
        ]),
        3 => prop::sample::select(vec![' ', ' ', '\'', '\n', '\r', '\t', '1', '.', ',', '/', '-', '\u{0B}']),
        1 => prop::sample::select(vec!['é', 'É', '\u{0301}', 'ß', 'ǅ', 'ʰ', '猫', '\u{00A0}', 'ſ']),
    ];
    prop::collection::vec(chars, 0..60).prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn ascii_fast_paths_equal_the_regexes(t in wordy_text()) {
        for p in [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2] {
            prop_assert_eq!(ours(p, &t), reference(p, &t), "pattern {:?}", p);
        }
    }
}
