//! `count_till_limit`, `split_at_tokens` and the chunker against exhaustive
//! search.

use bpe::{Boundary, Tokenizer};
use proptest::prelude::*;

use crate::common::{cl100k, data_dir_or_skip, o200k, read};

fn exhaustive_split(tok: &Tokenizer, text: &str, n: usize) -> usize {
    (0..=text.len())
        .rev()
        .filter(|&p| text.is_char_boundary(p))
        .find(|&p| tok.count(&text[..p]) <= n)
        .unwrap_or(0)
}

fn text() -> impl Strategy<Value = String> {
    let chars = prop_oneof![
        6 => prop::sample::select(vec!['a', 'b', 'e', 't', ' ', ' ', '\n', 'x', '0', '1', '\'', 's', '.', 'é', '猫', 'L', '!']),
        1 => any::<char>(),
    ];
    prop::collection::vec(chars, 0..60).prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn split_at_tokens_is_the_longest_fitting_prefix(t in text(), n in 0usize..25) {
        for tok in [o200k(), cl100k()] {
            prop_assert_eq!(tok.split_at_tokens(&t, n), exhaustive_split(tok, &t, n), "n = {}", n);
        }
    }

    #[test]
    fn count_till_limit_is_exact(t in text(), n in 0usize..40) {
        let tok = o200k();
        let c = tok.count(&t);
        prop_assert_eq!(tok.count_till_limit(&t, n), (c <= n).then_some(c));
    }

    #[test]
    fn chunks_concatenate_and_fit(t in text(), n in 1usize..12, b in 0usize..5) {
        let prefer = [
            Boundary::Char,
            Boundary::Newline,
            Boundary::Whitespace,
            Boundary::Sentence,
            Boundary::Paragraph,
        ][b];
        let tok = cl100k();
        let chunks = tok.chunks(&t, n, prefer);
        let mut end = 0;
        for c in &chunks {
            prop_assert_eq!(c.range.start, end);
            prop_assert!(c.range.end > c.range.start);
            let piece = &t[c.range.clone()];
            prop_assert_eq!(c.tokens, tok.count(piece));
            prop_assert!(c.tokens <= n || piece.chars().count() == 1);
            end = c.range.end;
        }
        prop_assert_eq!(end, t.len());
        if prefer == Boundary::Char {
            // Each chunk is the longest fitting prefix of the rest.
            for c in &chunks {
                let rest = &t[c.range.start..];
                let want = exhaustive_split(tok, rest, n);
                prop_assert!(want == c.range.len() || (want == 0 && piece_is_one_char(&t[c.range.clone()])));
            }
        }
    }
}

fn piece_is_one_char(s: &str) -> bool {
    s.chars().count() == 1
}

#[test]
fn sentences_and_paragraphs_are_kept_whole_when_they_fit() {
    let tok = o200k();
    let text = "It was late. The rain had stopped! Was it over? \"Yes.\" She left.\n\nA new day began. Then another.";
    let cut = |prefer, n| -> Vec<&str> {
        tok.chunks(text, n, prefer).iter().map(|c| &text[c.range.clone()]).collect()
    };
    let s = cut(Boundary::Sentence, 12);
    assert_eq!(s.concat(), text);
    for c in &s[..s.len() - 1] {
        let end = c.trim_end().trim_end_matches('"');
        assert!(end.ends_with(['.', '!', '?']), "{c:?} in {s:?}");
    }
    let p = cut(Boundary::Paragraph, 22);
    assert_eq!(p[0], "It was late. The rain had stopped! Was it over? \"Yes.\" She left.\n\n");
    // CJK sentence ends need no space.
    let ja = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。";
    let c = tok.chunks(ja, 12, Boundary::Sentence);
    assert!(ja[c[0].range.clone()].ends_with('。'), "{:?}", &ja[c[0].range.clone()]);
}

#[test]
fn split_inside_long_runs() {
    for tok in [o200k(), cl100k()] {
        for t in ["a".repeat(3000), " ".repeat(3000), format!("{}x", " ".repeat(500))] {
            for n in [1, 7, 50] {
                assert_eq!(tok.split_at_tokens(&t, n), exhaustive_split(tok, &t, n), "n = {n}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn appending_equals_one_shot_at_every_prefix(parts in prop::collection::vec(text(), 0..12)) {
        for tok in [o200k(), cl100k()] {
            let mut enc = bpe::AppendingEncoder::new(tok);
            for p in &parts {
                // Append character by character to hit every prefix.
                for (i, c) in p.char_indices() {
                    enc.push(&p[i..i + c.len_utf8()]);
                    let want = tok.encode(enc.text());
                    prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), want.clone());
                    prop_assert_eq!(enc.count(), want.len());
                }
            }
        }
    }
}

/// Texts made of runs of one character each, short and long (past the
/// prefix tables' step), from every class the split patterns loop over:
/// cuts deep inside long pieces and at their edges.
fn runs_text() -> impl Strategy<Value = String> {
    let chars = vec![
        'a', 's', 'A', 'D', '猫', 'ǅ', 'ʰ', '\u{0301}', ' ', ' ', '\t', '\n', '\r', '1', '.', '/',
        '\'', '-', '\u{00A0}', 'é',
    ];
    let len = prop_oneof![3 => 1usize..6, 2 => 60usize..300, 1 => 900usize..1400];
    prop::collection::vec((prop::sample::select(chars), len), 1..5)
        .prop_map(|runs| runs.into_iter().map(|(c, n)| c.to_string().repeat(n)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn split_at_tokens_on_runs_is_the_longest_fitting_prefix(t in runs_text(), n in 0usize..70) {
        for tok in [o200k(), cl100k()] {
            prop_assert_eq!(tok.split_at_tokens(&t, n), exhaustive_split(tok, &t, n), "n = {}", n);
        }
    }
}

/// Hostile inputs: megabytes of one character. Cutting them into chunks
/// used to re-encode the rest of the text for every candidate cut (minutes
/// for 40 kB of `a`); the work is now linear in the text, so each of these
/// finishes in well under a second in an optimized build.
#[test]
fn chunks_of_long_runs() {
    let tok = o200k();
    for c in ['a', '猫', '.', '7', 'Q'] {
        let t = c.to_string().repeat((1 << 20) / c.len_utf8());
        let chunks = tok.chunks(&t, 1000, Boundary::Char);
        let mut end = 0;
        for ch in &chunks {
            assert_eq!(ch.range.start, end);
            assert!(ch.tokens <= 1000);
            end = ch.range.end;
        }
        assert_eq!(end, t.len());
        // Each chunk is the longest that fits: one more character does not.
        let first = chunks[0].range.end;
        let next = first + c.len_utf8();
        assert!(tok.count(&t[..next]) > 1000, "{c:?}: {first}");
    }
}

/// The SentencePiece-style vocabularies (a `▁` normalizer and a prefix
/// space; Llama-2 splits at spaces, both use character symbols).
fn sentencepiece() -> &'static [Tokenizer] {
    static T: std::sync::OnceLock<Vec<Tokenizer>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let Some(dir) = data_dir_or_skip("split_at_tokens with SentencePiece vocabularies") else {
            return Vec::new();
        };
        ["llama2", "mistral03"]
            .map(|n| read(&dir, &format!("tokenizers/{n}.tokenizer.json.gz")))
            .iter()
            .map(|b| Tokenizer::from_tokenizer_json(b).unwrap())
            .collect()
    })
}

/// Runs and words with `▁` (normalized to a space), spaces and characters
/// the vocabularies lack (byte fallback).
fn sentencepiece_text() -> impl Strategy<Value = String> {
    let chars = vec!['a', 'b', ' ', ' ', '\u{2581}', 'é', '猫', '🦀', '\n', '.', 'x'];
    let len = prop_oneof![3 => 1usize..6, 2 => 60usize..200, 1 => 300usize..700];
    prop::collection::vec((prop::sample::select(chars), len), 1..5)
        .prop_map(|runs| runs.into_iter().map(|(c, n)| c.to_string().repeat(n)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn split_at_tokens_with_sentencepiece_is_the_longest_fitting_prefix(
        t in sentencepiece_text(),
        n in 0usize..90,
    ) {
        for tok in sentencepiece() {
            prop_assert_eq!(tok.split_at_tokens(&t, n), exhaustive_split(tok, &t, n), "n = {}", n);
        }
    }
}

#[test]
fn split_inside_sentencepiece_runs() {
    for tok in sentencepiece() {
        for t in [
            "a".repeat(3000),
            " ".repeat(3000),
            "\u{2581}".repeat(900),
            format!("{}x", " ".repeat(500)),
        ] {
            for n in [1, 7, 50, 300] {
                assert_eq!(tok.split_at_tokens(&t, n), exhaustive_split(tok, &t, n), "n = {n}");
            }
        }
    }
}
