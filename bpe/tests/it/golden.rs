//! Ids equal to kitoken's golden encodings (produced by tiktoken, Hugging
//! Face `tokenizers` and sentencepiece) for every vocabulary present.

use bpe::{Allowed, Tokenizer};

use crate::common::{cl100k, data_dir_or_skip, o200k, read};

/// The golden reading rule (see `golden/README.md`).
fn lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.replace("\\n", "\n").replace("\\s", " ").replace("\\x", ""))
        .collect()
}

fn token_lines(bytes: &[u8]) -> Vec<Vec<u32>> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(|t| t.trim().parse().unwrap()).collect())
        .collect()
}

/// Checks one model on both inputs; returns the number of cases checked.
fn check(dir: &std::path::Path, tok: &Tokenizer, folder: &str, model: &str) -> usize {
    let mut checked = 0;
    for input in ["small", "mixed"] {
        let cases = lines(&read(dir, &format!("tokenizers/golden/{input}_input.txt")));
        let want = token_lines(&read(
            dir,
            &format!("tokenizers/golden/{folder}/{input}_tokens_{model}.txt"),
        ));
        assert_eq!(cases.len(), want.len());
        let outputs = std::fs::read(
            dir.join(format!("tokenizers/golden/{folder}/{input}_output_{model}.txt")),
        )
        .ok()
        .map(|b| lines(&b));
        for (k, (case, want)) in cases.iter().zip(&want).enumerate() {
            let got = tok.encode_with_specials(case, Allowed::All).unwrap();
            assert_eq!(&got, want, "{model} {input} case {k}: {case:?}");
            let decoded = tok.decode_to_string(&got).unwrap();
            let decoded = if tok.prepends_space() {
                decoded.strip_prefix(' ').unwrap_or(&decoded).to_owned()
            } else {
                decoded
            };
            let expected = outputs.as_ref().map_or(case, |o| &o[k]);
            assert_eq!(&decoded, expected, "{model} {input} case {k} decode");
            checked += 1;
        }
    }
    checked
}

/// Long pieces (the backtracking encoder) against the brute-force oracle.
fn long_pieces_equal_oracle(tok: &Tokenizer, linear: bool) {
    assert_eq!(tok.has_linear_encoder(), linear);
    let mut rng = 99u64;
    let mut next = || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 33) as usize
    };
    let alphabets: [&[&str]; 3] =
        [&["a", "b", "e", "r", "t", "s"], &["猫", "の", "は", "吾", "輩"], &[" ", " ", "\n", "\t"]];
    for alphabet in alphabets {
        for _ in 0..40 {
            let len = 30 + next() % 300;
            let s: String = (0..len).map(|_| alphabet[next() % alphabet.len()]).collect();
            assert_eq!(tok.encode(&s), tok.encode_reference(&s), "{s:?}");
        }
    }
}

fn hf(dir: &std::path::Path, file: &str) -> Tokenizer {
    Tokenizer::from_tokenizer_json(&read(dir, &format!("tokenizers/{file}"))).unwrap()
}

#[test]
fn tiktoken_golden() {
    let Some(dir) = data_dir_or_skip("tiktoken golden files") else { return };
    assert_eq!(check(&dir, o200k(), "tiktoken", "o200k_base"), 140);
    long_pieces_equal_oracle(o200k(), true);
    long_pieces_equal_oracle(crate::common::cl100k(), true);
    assert_eq!(check(&dir, cl100k(), "tiktoken", "cl100k_base"), 140);
}

#[test]
fn llama3_golden() {
    let Some(dir) = data_dir_or_skip("llama3 golden files") else { return };
    let tok = hf(&dir, "llama3.tokenizer.json.gz");
    assert_eq!(tok.vocab_size(), 128_256);
    assert_eq!(tok.encode("Hello\nmy love!"), [9906, 198, 2465, 3021, 0]);
    assert_eq!(check(&dir, &tok, "tokenizers", "llama33"), 140);
    // Llama-3 has tokens whose merges are not monotone (a part merged
    // after the whole): the backtracking encoder replays alone-runs there.
    long_pieces_equal_oracle(&tok, true);
}

#[test]
fn gpt2_golden() {
    let Some(dir) = data_dir_or_skip("gpt2 golden files") else { return };
    let tok = hf(&dir, "gpt2.tokenizer.json.gz");
    assert_eq!(check(&dir, &tok, "tokenizers", "gpt2"), 140);
    long_pieces_equal_oracle(&tok, true);
}

#[test]
fn llama2_golden() {
    let Some(dir) = data_dir_or_skip("llama2 golden files") else { return };
    let tok = hf(&dir, "llama2.tokenizer.json.gz");
    assert_eq!(tok.token_bytes(1), Some(&b"<s>"[..]));
    assert!(tok.is_special(1));
    assert_eq!(check(&dir, &tok, "tokenizers", "llama2"), 140);
    assert_eq!(tok.pattern(), bpe::Pattern::SentencePiece);
    long_pieces_equal_oracle(&tok, true);
}

#[test]
fn mistral_golden() {
    let Some(dir) = data_dir_or_skip("mistral golden files") else { return };
    let tok = hf(&dir, "mistral03.tokenizer.json.gz");
    assert_eq!(check(&dir, &tok, "tokenizers", "mistral03"), 140);
    assert_eq!(tok.pattern(), bpe::Pattern::SentencePiece);
    long_pieces_equal_oracle(&tok, true);
}

#[test]
fn qwen3_loads_and_matches_its_oracle() {
    let Some(dir) = data_dir_or_skip("qwen3 tokenizer") else { return };
    let tok = hf(&dir, "qwen3.tokenizer.json.gz");
    assert_eq!(tok.vocab_size(), 151_669);
    long_pieces_equal_oracle(&tok, true);
    let cases = lines(&read(&dir, "tokenizers/golden/mixed_input.txt"));
    for case in &cases {
        let ids = tok.encode(case);
        assert_eq!(ids, tok.encode_reference(case));
        // Qwen normalizes to NFC first.
        let nfc: String = unicode_normalization::UnicodeNormalization::nfc(case.as_str()).collect();
        assert_eq!(tok.decode_to_string(&ids).unwrap(), nfc);
    }
}
