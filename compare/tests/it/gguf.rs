//! Our GGUF tokenizer (`bpe::Tokenizer::from_gguf`) against Hugging Face
//! `tokenizers` built from the same file's vocabulary and merges with the
//! model's pre-tokenizer, on the SmolLM2 GGUF (`cargo xtask model`).
//!
//! The reference is HF's BPE with `Sequence[Digits(individual_digits),
//! ByteLevel(use_regex)]`, which is what llama.cpp's `smollm`
//! pre-tokenizer and SmolLM2's own `tokenizer.json` specify; it is
//! assembled here with HF's builder API, not from the JSON document our
//! loader builds, so the two share only the token strings and merges read
//! from the file. (llama.cpp's own tokenizer is checked on a developer
//! machine through llama-cpp-python; see `generate/DESIGN.md`.)

use std::sync::OnceLock;

use bpe::{Allowed, GgufVocab, Tokenizer};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, PreTokenizerWrapper};

struct Pair {
    vocab: GgufVocab,
    ours: Tokenizer,
    hf: tokenizers::Tokenizer,
}

/// The pair, or `None` when the model is absent (a visible skip).
fn pair(what: &str) -> Option<&'static Pair> {
    static P: OnceLock<Option<Pair>> = OnceLock::new();
    let path = testkit::model_or_skip(what)?;
    P.get_or_init(|| {
        let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
        let vocab = GgufVocab::read(file).unwrap();
        let ours = vocab.tokenizer().unwrap();
        let hf = reference(&vocab);
        Some(Pair { vocab, ours, hf })
    })
    .as_ref()
}

fn reference(v: &GgufVocab) -> tokenizers::Tokenizer {
    assert_eq!(v.model, "gpt2");
    assert_eq!(v.pre.as_deref(), Some("smollm"));
    let special = |id: usize| v.token_types[id] == 3;
    // Special tokens too, so that adding them below keeps their ids (as
    // in SmolLM2's own `tokenizer.json`); no merge forms them.
    let vocab: tokenizers::models::bpe::Vocab =
        v.tokens.iter().enumerate().map(|(id, t)| (t.clone(), id as u32)).collect();
    let merges: Vec<(String, String)> = v
        .merges
        .iter()
        .map(|m| {
            let (a, b) = m.split_once(' ').unwrap();
            (a.to_owned(), b.to_owned())
        })
        .collect();
    let model = BPE::builder().vocab_and_merges(vocab, merges).build().unwrap();
    let mut hf = tokenizers::Tokenizer::new(model);
    let pre = Sequence::new(vec![
        PreTokenizerWrapper::Digits(Digits::new(true)),
        PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true)),
    ]);
    hf.with_pre_tokenizer(Some(pre));
    hf.with_decoder(Some(ByteLevelDecoder::default()));
    let specials: Vec<AddedToken> = (0..v.tokens.len())
        .filter(|&id| special(id))
        .map(|id| AddedToken::from(v.tokens[id].clone(), true))
        .collect();
    hf.add_special_tokens(&specials);
    hf
}

fn hf_ids(p: &Pair, text: &str) -> Vec<u32> {
    p.hf.encode(text, false).unwrap().get_ids().to_vec()
}

fn check(p: &Pair, text: &str) {
    let ours = p.ours.encode(text);
    let theirs = hf_ids(p, text);
    if ours != theirs {
        let at = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
        let piece = |ids: &[u32]| p.ours.decode(&ids[at..(at + 4).min(ids.len())]);
        panic!(
            "ids differ at token {at} of {:?}…: ours {:?}, HF {:?}",
            text.chars().take(60).collect::<String>(),
            piece(&ours).map(|b| String::from_utf8_lossy(&b).into_owned()),
            piece(&theirs).map(|b| String::from_utf8_lossy(&b).into_owned()),
        );
    }
    // Bytes without a token are dropped (the file names no unknown token
    // for Hugging Face to put in their place).
    let kept: Vec<u8> = text.bytes().filter(|b| !missing(p).contains(b)).collect();
    assert_eq!(p.ours.decode(&ours).unwrap(), kept, "round trip");
}

/// The bytes SmolLM2's byte-level vocabulary has no token for.
fn missing(p: &Pair) -> &[u8] {
    static M: OnceLock<Vec<u8>> = OnceLock::new();
    M.get_or_init(|| {
        let mut has = [false; 256];
        for id in 0..p.ours.vocab_size() as u32 {
            if let Some(&[b]) = p.ours.token_bytes(id).filter(|_| !p.ours.is_special(id)) {
                has[b as usize] = true;
            }
        }
        (0..=255u8).filter(|&b| !has[b as usize]).collect()
    })
}

fn char_floor(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[test]
fn the_file_metadata_is_read() {
    let Some(p) = pair("gguf metadata of SmolLM2") else { return };
    assert_eq!(p.vocab.tokens.len(), 49_152);
    assert_eq!(p.vocab.merges.len(), 48_900);
    assert_eq!(p.vocab.architecture.as_deref(), Some("llama"));
    assert_eq!((p.vocab.bos, p.vocab.eos, p.vocab.unk), (Some(1), Some(2), Some(0)));
    assert_eq!(p.vocab.stop_tokens(), [2]);
    assert_eq!(p.vocab.add_bos, Some(false));
    assert!(p.vocab.chat_template.as_deref().unwrap().contains("<|im_start|>"));
    assert_eq!(p.ours.vocab_size(), 49_152);
    assert_eq!(p.ours.special_tokens().count(), 17);
    assert_eq!(p.ours.special_id("<|im_end|>"), Some(2));
    assert_eq!(p.hf.get_vocab_size(true), 49_152);
}

#[test]
fn corpora_equal_hf_tokenizers() {
    let Some(p) = pair("gguf tokenizer vs HF on the corpora") else { return };
    for file in [
        "text/ulysses.md.gz",
        "text/code-regex-automata.rs.gz",
        "text/wagahai.txt.gz",
        "text/pride_and_prejudice.txt.gz",
    ] {
        let Some(path) = testkit::data_path_or_skip("gguf tokenizer vs HF on the corpora", file)
        else {
            return;
        };
        let text = String::from_utf8(testkit::read(&path)).unwrap();
        // The first 100 KB whole (HF is the slow side), then random slices.
        check(p, &text[..char_floor(&text, 100_000)]);
        let mut rng = SmallRng::seed_from_u64(file.len() as u64);
        for _ in 0..100 {
            let s = char_floor(&text, rng.random_range(0..text.len()));
            let e = char_floor(&text, (s + rng.random_range(1..2_000)).min(text.len()));
            check(p, &text[s..e]);
        }
    }
}

/// Digits next to whitespace runs, contractions, non-ASCII numbers and
/// letters, emoji, combining marks, control characters and invalid-looking
/// sequences (as valid UTF-8): the places the `smollm` split differs from
/// GPT-2's.
#[test]
fn utf8_stress_text_equals_hf_tokenizers() {
    let Some(p) = pair("gguf tokenizer vs HF on a UTF-8 stress text") else { return };
    let atoms = [
        "1",
        "12",
        "٣",
        "Ⅻ",
        "²",
        " ",
        "  ",
        "   ",
        "\n",
        "\n\n",
        "\t",
        "\r\n",
        " 7",
        "'s",
        "'LL",
        "don't",
        "x",
        "Hello",
        "日本語",
        "😀",
        "👩‍👩‍👧",
        "e\u{301}",
        "\u{200b}",
        "\u{a0}",
        "\u{3000}",
        "\u{85}",
        "{\"a\": 1}",
        "-3.5e10",
        "ſ",
        "ǅ",
        "Ω",
        "\u{feff}",
        "\u{0}",
        "\u{7f}",
        "\u{10ffff}",
        // Bytes without a token, alone and inside pieces.
        "\u{4}",
        "\u{6}",
        "\u{13}\u{14}",
        "\u{16}",
        "\u{1d}",
        "!\u{4}!",
        "(\u{1d})",
        "\u{40000}",
        "\u{80000}",
    ];
    let mut rng = SmallRng::seed_from_u64(24);
    for _ in 0..3_000 {
        let n = rng.random_range(0..24);
        let text: String = (0..n).map(|_| atoms[rng.random_range(0..atoms.len())]).collect();
        check(p, &text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_equals_hf_tokenizers(t in any::<String>()) {
        if let Some(p) = pair("gguf tokenizer vs HF on arbitrary text") {
            prop_assert_eq!(p.ours.encode(&t), hf_ids(p, &t));
        }
    }
}

#[test]
fn chat_turns_with_special_tokens_equal_hf_tokenizers() {
    let Some(p) = pair("gguf tokenizer vs HF with special tokens") else { return };
    let text = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by \
                Hugging Face<|im_end|>\n<|im_start|>user\nGive me 3 numbers: 10, 200 and \
                3000.<|im_end|>\n<|im_start|>assistant\n";
    let ours = p.ours.encode_with_specials(text, Allowed::All).unwrap();
    assert_eq!(ours, hf_ids(p, text));
    assert_eq!(ours[0], 1);
}

/// SmolLM2 has no token for 21 bytes; Hugging Face drops them from a piece
/// (no unknown token is named), and the bytes around them may then merge.
#[test]
fn bytes_without_a_token_are_dropped_as_hf_tokenizers_does() {
    let Some(p) = pair("gguf tokenizer vs HF on bytes without a token") else { return };
    let mut want = vec![0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xC0, 0xC1, 0xF1, 0xF2];
    want.extend(0xF5..=0xFF);
    assert_eq!(missing(p), want);
    for text in [
        "\u{4}",
        "a\u{4}b",
        "!\u{4}!",
        "==\u{13}==",
        "\u{1d}\u{1d}\u{1d}",
        "{\"k\": \"\u{6}\"}",
        "\u{40000}\u{80000}",
        " \u{16}\n",
    ] {
        check(p, text);
    }
    // A merge across a dropped byte: `!` and `!` meet.
    let bang2 = p.ours.encode("!!");
    assert_eq!(bang2.len(), 1);
    assert_eq!(p.ours.encode("!\u{4}!"), bang2);
    assert!(p.ours.encode("\u{4}\u{6}").is_empty());
}
