//! Interval counting and the prependable encoder against one-shot encoding.

use bpe::{IntervalEncoding, PrependableEncoder, Tokenizer};
use proptest::prelude::*;

use crate::common::{cl100k, o200k};

/// Text with words, punctuation, digits, non-ASCII and, now and then, a
/// long run of one whitespace byte (the interval encoder's jump and table).
fn text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        8 => prop::sample::select(vec![
            "a", "b", "e", "t", " ", " ", "\n", "x", "0", "1", "'", "s", ".", "é", "猫", "L",
            "!", "\t", "ll", " the", "HE", "'re",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
        1 => (prop::sample::select(vec![" ", "\n", "\t", "\r"]), 60usize..300)
            .prop_map(|(c, n)| c.repeat(n)),
    ];
    prop::collection::vec(atom, 0..80).prop_map(|v| v.concat())
}

fn char_floor(t: &str, mut i: usize) -> usize {
    i = i.min(t.len());
    while !t.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn check_ranges(tok: &Tokenizer, t: &str, ranges: &[(usize, usize)]) -> Result<(), TestCaseError> {
    let iv = IntervalEncoding::new(tok, t);
    for &(a, b) in ranges {
        let (a, b) = (char_floor(t, a.min(b)), char_floor(t, a.max(b)));
        prop_assert_eq!(iv.count(a..b), tok.count(&t[a..b]), "range {}..{} of {:?}", a, b, t);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn interval_equals_one_shot_on_random_ranges(
        t in text(),
        ranges in prop::collection::vec((0usize..4000, 0usize..4000), 1..25),
    ) {
        for tok in [o200k(), cl100k()] {
            check_ranges(tok, &t, &ranges)?;
        }
    }

    #[test]
    fn prependable_equals_one_shot_at_every_suffix(t in text()) {
        for tok in [o200k(), cl100k()] {
            let mut enc = PrependableEncoder::new(tok);
            // Prepend character by character, from the end.
            for (i, _) in t.char_indices().rev() {
                let c = &t[i..char_floor(&t, i + 4).max(i + 1)];
                let c = &c[..c.chars().next().map_or(0, char::len_utf8)];
                enc.push_front(c);
                prop_assert_eq!(enc.text(), &t[i..]);
                let want = tok.encode(&t[i..]);
                prop_assert_eq!(enc.count(), want.len());
                prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn prependable_takes_whole_strings(parts in prop::collection::vec(text(), 0..6)) {
        let tok = o200k();
        let mut enc = PrependableEncoder::new(tok);
        let mut all = String::new();
        for p in &parts {
            enc.push_front(p);
            all.insert_str(0, p);
            prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(&all));
        }
    }
}

#[test]
fn interval_on_all_ranges_of_small_texts() {
    let texts = [
        "Hello, world! It's 12345 o'clock.\n\n  indented\tline   \n",
        "HELLOworld HELLO they're don't I'LL 日本語ABCdef",
        "  a   b    c",
        "x's 's ' s ''",
    ];
    for tok in [o200k(), cl100k()] {
        for t in texts {
            let iv = IntervalEncoding::new(tok, t);
            for a in (0..=t.len()).filter(|&i| t.is_char_boundary(i)) {
                for b in (a..=t.len()).filter(|&i| t.is_char_boundary(i)) {
                    assert_eq!(iv.count(a..b), tok.count(&t[a..b]), "{:?}", &t[a..b]);
                }
            }
        }
    }
}

#[test]
fn interval_inside_long_whitespace_runs() {
    for tok in [o200k(), cl100k()] {
        for ws in [" ", "\n", "\t"] {
            let t =
                format!("Some prose before.{}and after it, {}\n", ws.repeat(5000), ws.repeat(700));
            let iv = IntervalEncoding::new(tok, &t);
            let mut rng = 17u64;
            for _ in 0..300 {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let a = (rng >> 33) as usize % t.len();
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let b = (rng >> 33) as usize % t.len();
                let (a, b) = (a.min(b), a.max(b));
                assert_eq!(iv.count(a..b), tok.count(&t[a..b]), "{ws:?} {a}..{b}");
            }
            assert_eq!(iv.count(0..t.len()), tok.count(&t));
        }
    }
}

#[test]
fn interval_rejects_bad_ranges() {
    let t = "héllo";
    let iv = IntervalEncoding::new(o200k(), t);
    assert_eq!(iv.try_count(2..4), None);
    assert_eq!(iv.try_count(0..99), None);
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 4..1;
    assert_eq!(iv.try_count(backwards), None);
    assert_eq!(iv.try_count(0..t.len()), Some(o200k().count(t)));
}

/// Characters that stress the split patterns' look-ahead: apostrophes and
/// contraction letters, case runs (o200k's `[A]*[B]+`), letters that are both
/// "upper" and "lower" (CJK, modifier letters), combining marks, digits,
/// whitespace kinds, `ſ` (folds to `s`).
fn lookahead_text() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 's', 't', 'l', 'r', 'e', 'v', 'd', 'm', 'A', 'S', 'L', 'E', 'R', '\'', ' ', ' ', '\n',
        '\r', '\t', '0', '7', '.', '/', '!', '日', 'ʰ', '\u{301}', 'ſ', 'ǅ', 'É', 'é',
    ]);
    prop::collection::vec(chars, 0..60).prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn appending_equals_one_shot_with_lookahead_characters(t in lookahead_text()) {
        for tok in [o200k(), cl100k()] {
            let mut enc = bpe::AppendingEncoder::new(tok);
            for (i, c) in t.char_indices() {
                enc.push(&t[i..i + c.len_utf8()]);
                let want = tok.encode(enc.text());
                prop_assert_eq!(enc.count(), want.len(), "{:?}", enc.text());
                prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn prependable_equals_one_shot_with_lookahead_characters(t in lookahead_text()) {
        for tok in [o200k(), cl100k()] {
            let mut enc = PrependableEncoder::new(tok);
            for (i, _) in t.char_indices().rev() {
                let c = t[i..].chars().next().map_or("", |c| &t[i..i + c.len_utf8()]);
                enc.push_front(c);
                prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(&t[i..]), "{:?}", &t[i..]);
            }
        }
    }

    #[test]
    fn interval_equals_one_shot_with_lookahead_characters(
        t in lookahead_text(),
        ranges in prop::collection::vec((0usize..200, 0usize..200), 1..20),
    ) {
        for tok in [o200k(), cl100k()] {
            check_ranges(tok, &t, &ranges)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// Reads between batches of appends (the encoder settles in batches),
    /// through long runs too.
    #[test]
    fn appending_with_sparse_reads_equals_one_shot(t in text(), every in 1usize..40) {
        let tok = o200k();
        let mut enc = bpe::AppendingEncoder::new(tok);
        for (k, (i, c)) in t.char_indices().enumerate() {
            enc.push(&t[i..i + c.len_utf8()]);
            if k % every == 0 {
                prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(enc.text()));
            }
        }
        prop_assert_eq!(enc.count(), tok.count(&t));
        prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(&t));
    }
}

#[test]
fn appending_a_long_run_byte_by_byte_is_linear_enough_to_finish() {
    // 200 kB of spaces then a word, one byte at a time, read at the end:
    // quadratic re-splitting would not finish within the test budget.
    let tok = o200k();
    let mut enc = bpe::AppendingEncoder::new(tok);
    for _ in 0..200_000 {
        enc.push(" ");
    }
    enc.push("word");
    let t = format!("{}word", " ".repeat(200_000));
    assert_eq!(enc.count(), tok.count(&t));
}

#[test]
fn prepending_a_long_run_byte_by_byte_is_linear_enough_to_finish() {
    // 200 kB of spaces after a word, one byte at a time, read at the end.
    let tok = o200k();
    let mut enc = PrependableEncoder::new(tok);
    enc.push_front("word.");
    for _ in 0..200_000 {
        enc.push_front(" ");
    }
    let t = format!("{}word.", " ".repeat(200_000));
    assert_eq!(enc.count(), tok.count(&t));
    assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(&t));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// Reads between batches of prepends.
    #[test]
    fn prepending_with_sparse_reads_equals_one_shot(t in text(), every in 1usize..40) {
        let tok = cl100k();
        let mut enc = PrependableEncoder::new(tok);
        for (k, (i, c)) in t.char_indices().rev().enumerate() {
            enc.push_front(&t[i..i + c.len_utf8()]);
            if k % every == 0 {
                prop_assert_eq!(enc.tokens().collect::<Vec<_>>(), tok.encode(&t[i..]));
            }
        }
        prop_assert_eq!(enc.count(), tok.count(&t));
    }
}
