//! The slicer against the plain walk: on small random vocabularies, grammars
//! and slice sets, the mask with the slicer equals the mask without it at
//! every step of a random walk through the grammar.

use std::sync::Arc;

use proptest::prelude::*;
use slicer::{SliceSpec, Slicer, SlicerConfig};
use structgen::{Grammar, Matcher, Vocabulary};
use toktrie::TokenId;

const GRAMMARS: &[&str] = &[
    // JSON-ish strings, capped and uncapped.
    "start: \"{\" STR \":\" STR \"}\"\nSTR: /\"[^\"\\\\]*\"/\n",
    "start: \"[\" SHORT (\",\" SHORT)* \"]\"\nSHORT: /\"[^\"\\\\]{0,3}\"/\n",
    "start: \"x\" WORD+\nWORD: /[a-z ]{1,12}/\n%ignore /[ ]+/\n",
    // A lazy lexeme: never answered from a slice.
    "start: x \"!\"\nx[lazy]: /[a-z ]+/\n",
    "start: (A | B)+\nA: /a[ab]*/\nB: /\"[a ]*\"/\n",
    "start: /[^\"]{0,20}/ \"\\\"\"\n",
];

const SLICES: &[&str] = &[
    "[a-z]{1,2}",
    "[^\"\\\\]{1,3}",
    "[^\"\\\\]+",
    "[ ]+",
    "[a-z ]{1,10}",
    "a|b",
    "[\\x20\\x0A\\x0D\\x09]+",
    "[^\"\\\\\\x00-\\x1F\\x7F]{1,10}",
];

/// `tokens` and an end-of-sequence token after them, without a slicer.
fn vocab(tokens: &[Vec<u8>]) -> Vocabulary {
    let eos = TokenId(tokens.len() as u32);
    Vocabulary::builder()
        .token_list(tokens)
        .special(eos, "<eos>")
        .stop_tokens([eos])
        .slicer(None)
        .build()
        .unwrap()
}

fn token_strategy() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: Vec<u8> = b"ab z\"\\{}[]:,!x".iter().copied().chain([0xC3, 0xA9]).collect();
    proptest::collection::vec(proptest::sample::select(alphabet), 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, rng_seed: proptest::test_runner::RngSeed::Fixed(5), ..ProptestConfig::default() })]
    #[test]
    fn masks_with_the_slicer_equal_masks_without(
        mut tokens in proptest::collection::vec(token_strategy(), 10..60),
        grammar in 0..GRAMMARS.len(),
        slices in proptest::collection::vec(0..SLICES.len(), 0..4),
        choices in proptest::collection::vec(any::<u32>(), 12),
    ) {
        // Single bytes so that every grammar can make progress.
        for b in b"ab z\"{}[]:,!x" {
            tokens.push(vec![*b]);
        }
        let vocab = vocab(&tokens);
        let specs: Vec<SliceSpec> = slices.iter().map(|&i| SliceSpec::new(SLICES[i])).collect();
        let slicer =
            Arc::new(Slicer::new(vocab.trie(), &SlicerConfig::with_slices(specs)).unwrap());
        let g = Grammar::lark(GRAMMARS[grammar]).unwrap();
        let mut plain = Matcher::new(&vocab, &g).unwrap();
        let mut sliced = Matcher::new(&vocab, &g).unwrap().with_slicer(Some(slicer));
        for &c in &choices {
            let a = plain.compute_mask().unwrap().clone();
            let b = sliced.compute_mask().unwrap().clone();
            prop_assert_eq!(&a, &b);
            let ordinary: Vec<TokenId> =
                a.iter().filter(|t| !vocab.stop_tokens().contains(t)).collect();
            if ordinary.is_empty() {
                break;
            }
            let t = ordinary[c as usize % ordinary.len()];
            plain.consume_token(t).unwrap();
            sliced.consume_token(t).unwrap();
        }
    }
}

/// The JSON-string case proves its slices: the slicer is not a no-op.
#[test]
fn a_json_string_body_is_answered_by_slices() {
    let vocab = Vocabulary::builder()
        .token_list(&["{", "\"", "ab", " "])
        .slicer(Some(SlicerConfig::json()))
        .build()
        .unwrap();
    let mut m = Matcher::new(&vocab, &Grammar::lark(GRAMMARS[0]).unwrap()).unwrap();
    // A new matcher has its first mask computed already.
    let first = m.slicer_stats().unwrap();
    assert_eq!(first.masks, 1);
    m.consume_tokens(&[TokenId(0), TokenId(1)]).unwrap();
    let allowed: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
    assert_eq!(allowed, [0, 1, 2, 3]); // `{`, the closing quote, `ab`, ` `
    let stats = m.slicer_stats().unwrap();
    assert_eq!(stats.masks - first.masks, 1);
    assert_eq!(stats.masks_sliced - first.masks_sliced, 1);
    // Whitespace and the three string slices are all proven inside `"...`.
    assert_eq!(stats.slices_proven - first.slices_proven, 4);
}

#[test]
fn none_switches_the_slicer_off() {
    let vocab = Vocabulary::builder().token_list(&["a"]).build().unwrap();
    let m = Matcher::new(&vocab, &Grammar::regex("a+").unwrap()).unwrap().with_slicer(None);
    assert_eq!(m.slicer_stats(), None);
}
