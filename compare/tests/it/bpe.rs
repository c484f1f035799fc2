//! Our `bpe` against tiktoken-rs (and bpe-openai where tiktoken-rs is
//! quadratic) on cl100k_base and o200k_base: corpora slices, random
//! char-aligned slices, random-token strings, arbitrary text, the
//! catastrophic inputs, and encoding with allowed special tokens.

use std::collections::HashSet;
use std::sync::OnceLock;

use bpe::{Allowed, Tokenizer};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tiktoken_rs::CoreBPE;

struct Pair {
    name: &'static str,
    ours: Tokenizer,
    peer: CoreBPE,
}

fn pairs() -> &'static [Pair] {
    static P: OnceLock<Vec<Pair>> = OnceLock::new();
    P.get_or_init(|| {
        vec![
            Pair {
                name: "o200k",
                ours: Tokenizer::o200k_base(),
                peer: tiktoken_rs::o200k_base().unwrap(),
            },
            Pair {
                name: "cl100k",
                ours: Tokenizer::cl100k_base(),
                peer: tiktoken_rs::cl100k_base().unwrap(),
            },
        ]
    })
}

fn check(text: &str) {
    for p in pairs() {
        assert_eq!(
            p.ours.encode(text),
            p.peer.encode_ordinary(text),
            "{}: {:?}",
            p.name,
            short(text)
        );
    }
}

fn short(text: &str) -> String {
    text.chars().take(80).collect()
}

fn corpus(file: &str) -> Option<String> {
    compare::shared::data_dir_or_skip(file)?;
    Some(String::from_utf8(compare::shared::read(file).unwrap()).unwrap())
}

fn char_floor(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[test]
fn corpora_prefixes_and_random_slices_equal_tiktoken() {
    for file in [
        "text/ulysses.md.gz",
        "text/code-regex-automata.rs.gz",
        "text/wagahai.txt.gz",
        "text/pride_and_prejudice.txt.gz",
    ] {
        let Some(text) = corpus(file) else { return };
        // The first 150 KB whole, then random slices all over the file.
        check(&text[..char_floor(&text, 150_000)]);
        let mut rng = SmallRng::seed_from_u64(file.len() as u64);
        for _ in 0..150 {
            let s = char_floor(&text, rng.random_range(0..text.len()));
            let e = char_floor(&text, (s + rng.random_range(1..3000)).min(text.len()));
            check(&text[s..e]);
        }
    }
}

#[test]
fn random_token_strings_equal_tiktoken() {
    let mut rng = SmallRng::seed_from_u64(11);
    for p in pairs() {
        let n = p.ours.vocab_size() as u32;
        for _ in 0..300 {
            let mut bytes = Vec::new();
            for _ in 0..rng.random_range(1..40) {
                let id = rng.random_range(0..n);
                if let Some(b) = p.ours.token_bytes(id).filter(|_| !p.ours.is_special(id)) {
                    bytes.extend_from_slice(b);
                }
            }
            // Token bytes need not be UTF-8; tiktoken takes text.
            let text = String::from_utf8_lossy(&bytes);
            check(&text);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_equals_tiktoken(t in any::<String>()) {
        check(&t);
    }

    #[test]
    fn arbitrary_bytes_as_text_equal_tiktoken(b in prop::collection::vec(any::<u8>(), 0..200)) {
        check(&String::from_utf8_lossy(&b));
    }
}

#[test]
fn catastrophic_inputs_equal_the_peers() {
    let mut rng = SmallRng::seed_from_u64(3);
    let az: String = (0..1_000_000).map(|_| (b'a' + rng.random_range(0..26u8)) as char).collect();
    let inputs = [
        ("a", "a".repeat(1_000_000)),
        ("space", " ".repeat(1_000_000)),
        ("x", "x".repeat(1_000_000)),
        ("random a-z", az),
        ("^ 0 a 's \u{2420} \\n", "^ 0 a 's \u{2420} \n".repeat(10_000)),
    ];
    let openai = [("o200k", bpe_openai::o200k_base()), ("cl100k", bpe_openai::cl100k_base())];
    for (name, text) in &inputs {
        for (p, (_, bo)) in pairs().iter().zip(openai) {
            let ours = p.ours.encode(text);
            // bpe-openai is linear and exact: the whole megabyte.
            assert_eq!(ours, bo.encode(text.as_str()), "{} {name} vs bpe-openai", p.name);
            // tiktoken-rs is quadratic on one huge piece: a 20 KB prefix.
            let prefix = &text[..char_floor(text, 20_000)];
            assert_eq!(
                p.ours.encode(prefix),
                p.peer.encode_ordinary(prefix),
                "{} {name} vs tiktoken-rs",
                p.name
            );
        }
    }
    // Small pieces: tiktoken-rs on the whole input.
    check(&inputs[4].1);
}

#[test]
fn allowed_specials_equal_tiktoken() {
    let mut rng = SmallRng::seed_from_u64(5);
    let words = [
        "hello",
        " world",
        "<|endoftext|>",
        "<|endofprompt|>",
        "<|fim_prefix|>",
        "\n",
        "  ",
        "<|",
        "|>",
        "x",
    ];
    for p in pairs() {
        let names: Vec<&str> = p.ours.special_tokens().map(|(_, n)| n).collect();
        let all: HashSet<&str> = names.iter().copied().collect();
        for _ in 0..300 {
            let text: String = (0..rng.random_range(0..12))
                .map(|_| words[rng.random_range(0..words.len())])
                .collect();
            let (want, _) = p.peer.encode(&text, &all).unwrap();
            assert_eq!(
                p.ours.encode_with_specials(&text, Allowed::All).unwrap(),
                want,
                "{} {text:?}",
                p.name
            );
            assert_eq!(p.ours.encode_with_specials(&text, Allowed::Names(&names)).unwrap(), want);
            assert_eq!(p.ours.encode(&text), p.peer.encode_ordinary(&text));
        }
    }
}

#[test]
fn interval_and_incremental_encoders_equal_tiktoken() {
    let Some(prose) = corpus("text/ulysses.md.gz") else { return };
    let head = &prose[..char_floor(&prose, 20_000)];
    // Prose around a long run of spaces and one of newlines.
    let text = format!("{head}{}{head}{}end", " ".repeat(3_000), "\n".repeat(500));
    let mut rng = SmallRng::seed_from_u64(23);
    for p in pairs() {
        let iv = bpe::IntervalEncoding::new(&p.ours, &text);
        for _ in 0..400 {
            let a = char_floor(&text, rng.random_range(0..text.len()));
            let b = char_floor(&text, (a + rng.random_range(0..6_000)).min(text.len()));
            let want = p.peer.encode_ordinary(&text[a..b]).len();
            assert_eq!(iv.count(a..b), want, "{} interval {a}..{b}", p.name);
        }
        // Incremental encoders on a slice, checked against tiktoken-rs every
        // few characters (and at the end).
        let slice = &text[..char_floor(&text, 3_000)];
        let mut app = bpe::AppendingEncoder::new(&p.ours);
        for (k, (i, c)) in slice.char_indices().enumerate() {
            app.push(&slice[i..i + c.len_utf8()]);
            if k % 7 == 0 {
                let want = p.peer.encode_ordinary(app.text());
                assert_eq!(app.tokens().collect::<Vec<_>>(), want, "{} appending", p.name);
            }
        }
        let mut pre = bpe::PrependableEncoder::new(&p.ours);
        for (k, (i, c)) in slice.char_indices().rev().enumerate() {
            pre.push_front(&slice[i..i + c.len_utf8()]);
            if k % 7 == 0 {
                let want = p.peer.encode_ordinary(pre.text());
                assert_eq!(pre.tokens().collect::<Vec<_>>(), want, "{} prepending", p.name);
            }
        }
        assert_eq!(pre.tokens().collect::<Vec<_>>(), p.peer.encode_ordinary(slice));
    }
}
