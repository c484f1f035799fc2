//! The SmolLM2 GGUF tokenizer (`cargo xtask model`; a visible skip without
//! it): its `Gpt2Digits` split through every encoder that restarts at
//! piece boundaries (intervals, appending, prepending, budgets) equals
//! one-shot encoding, with digits next to long whitespace runs, where the
//! split differs from GPT-2's, and bytes the vocabulary has no token for.
//! (Its ids against Hugging Face `tokenizers` are checked in
//! `compare/tests/it/gguf.rs`.)

use std::sync::OnceLock;

use bpe::{AppendingEncoder, IntervalEncoding, Pattern, PrependableEncoder, Tokenizer};
use proptest::prelude::*;

fn smollm2() -> Option<&'static Tokenizer> {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    let path = testkit::model_or_skip("bpe encoders on the SmolLM2 GGUF tokenizer")?;
    Some(T.get_or_init(|| {
        let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
        let tok = Tokenizer::from_gguf(file).unwrap();
        assert_eq!(tok.pattern(), Pattern::Gpt2Digits);
        tok
    }))
}

fn text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        8 => prop::sample::select(vec![
            "a", "e", " ", " ", "\n", "0", "1", "42", "٣", "'", "s", ".", "é", "猫", "L", "!",
            "\t", " the", "'re", " 7",
            // Bytes SmolLM2 has no token for (dropped by encoding).
            "\u{4}", "!\u{4}!", "\u{1d}", "\u{40000}",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
        1 => (prop::sample::select(vec![" ", "\n", "\t"]), 40usize..200)
            .prop_map(|(c, n)| c.repeat(n)),
    ];
    prop::collection::vec(atom, 0..60).prop_map(|v| v.concat())
}

fn char_floor(t: &str, mut i: usize) -> usize {
    i = i.min(t.len());
    while !t.is_char_boundary(i) {
        i -= 1;
    }
    i
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn interval_counts_equal_one_shot(
        t in text(),
        ranges in prop::collection::vec((0usize..3000, 0usize..3000), 1..20),
    ) {
        let Some(tok) = smollm2() else { return Ok(()) };
        let iv = IntervalEncoding::new(tok, &t);
        for (a, b) in ranges {
            let (a, b) = (char_floor(&t, a.min(b)), char_floor(&t, a.max(b)));
            prop_assert_eq!(iv.count(a..b), tok.count(&t[a..b]), "{}..{} of {:?}", a, b, t);
        }
    }

    #[test]
    fn appending_and_prepending_equal_one_shot(parts in prop::collection::vec(text(), 0..8)) {
        let Some(tok) = smollm2() else { return Ok(()) };
        let mut app = AppendingEncoder::new(tok);
        let mut pre = PrependableEncoder::new(tok);
        let (mut forward, mut backward) = (String::new(), String::new());
        for p in &parts {
            app.push(p);
            forward.push_str(p);
            prop_assert_eq!(app.count(), tok.count(&forward));
            pre.push_front(p);
            backward.insert_str(0, p);
            prop_assert_eq!(pre.tokens().collect::<Vec<_>>(), tok.encode(&backward));
        }
    }

    #[test]
    fn split_at_tokens_is_the_longest_fitting_prefix(t in text(), n in 0usize..30) {
        let Some(tok) = smollm2() else { return Ok(()) };
        let cut = tok.split_at_tokens(&t, n);
        prop_assert!(tok.count(&t[..cut]) <= n);
        let longest = (0..=t.len())
            .rev()
            .filter(|&i| t.is_char_boundary(i))
            .find(|&i| tok.count(&t[..i]) <= n)
            .unwrap_or(0);
        prop_assert_eq!(cut, longest);
    }
}

#[test]
fn digits_are_single_tokens_and_text_round_trips() {
    let Some(tok) = smollm2() else { return };
    let text = "In 2024, 1234567 people   7 times\n\n 42!";
    let ids = tok.encode(text);
    assert_eq!(tok.decode_to_string(&ids).unwrap(), text);
    for piece in tok.pieces_of(text) {
        if piece.chars().any(|c| c.is_numeric()) {
            assert_eq!(piece.chars().count(), 1, "{piece:?}");
        }
    }
}
