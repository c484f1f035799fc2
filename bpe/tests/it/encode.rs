//! Encoders against the brute-force oracle; decode round trips; loading
//! errors.

use bpe::{Allowed, EncodeError, LoadError, Pattern, Tokenizer};
use proptest::prelude::*;

use crate::common::{cl100k, o200k};

#[test]
fn known_ids() {
    assert_eq!(o200k().encode("Hello, world!"), [13225, 11, 2375, 0]);
    assert_eq!(cl100k().encode("Hello, world!"), [9906, 11, 1917, 0]);
    assert_eq!(o200k().vocab_size(), 200_019);
    assert_eq!(cl100k().vocab_size(), 100_277);
    assert_eq!(o200k().token_bytes(13225), Some(&b"Hello"[..]));
    assert_eq!(o200k().token_bytes(199_998), None);
    assert_eq!(
        o200k().special_tokens().collect::<Vec<_>>(),
        [(199_999, "<|endoftext|>"), (200_018, "<|endofprompt|>")]
    );
}

#[test]
fn specials_follow_tiktoken_semantics() {
    let t = cl100k();
    let text = "a<|endoftext|>b";
    assert_eq!(t.encode_with_specials(text, Allowed::All).unwrap(), [64, 100_257, 65]);
    assert_eq!(
        t.encode_with_specials(text, Allowed::Names(&["<|endoftext|>"])).unwrap(),
        [64, 100_257, 65]
    );
    let ordinary = t.encode(text);
    assert!(!ordinary.contains(&100_257));
    assert_eq!(t.decode_to_string(&ordinary).unwrap(), text);
    assert_eq!(
        t.encode_with_specials(text, Allowed::None),
        Err(EncodeError::DisallowedSpecial { name: "<|endoftext|>".into(), offset: 1 })
    );
}

fn unicode_text() -> impl Strategy<Value = String> {
    let chars = prop_oneof![
        4 => prop::sample::select(vec!['a', 'b', 'e', 't', ' ', ' ', '\n', 'x', '0', '\'', 's', '.', 'é', '猫', '😀']),
        1 => any::<char>(),
    ];
    prop::collection::vec(chars, 0..200).prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn encode_equals_oracle_and_round_trips(t in unicode_text()) {
        for tok in [o200k(), cl100k()] {
            let ids = tok.encode(&t);
            prop_assert_eq!(&ids, &tok.encode_reference(&t));
            prop_assert_eq!(tok.count(&t), ids.len());
            prop_assert_eq!(tok.decode_to_string(&ids).unwrap(), t.clone());
        }
    }

    #[test]
    fn long_pieces_equal_oracle(s in "[a-c ]{0,3}[a-d]{40,300}", sp in 0usize..200) {
        // One long letter run (the backtracking encoder) and a long space run.
        let t = format!("{s} {}x", " ".repeat(sp));
        for tok in [o200k(), cl100k()] {
            prop_assert_eq!(tok.encode(&t), tok.encode_reference(&t));
        }
    }

    #[test]
    fn wide_pieces_equal_oracle(
        v in prop::collection::vec(
            prop::sample::select(vec!['の', 'は', 'て', '猫', '吾', '輩', '한', '국', 'é', 'ß', 'a', ' ']),
            1..60,
        )
    ) {
        // Pieces of 3-byte characters go to the backtracking encoder past
        // 8 bytes, ASCII ones past 16: both sides of both thresholds.
        let t: String = v.into_iter().collect();
        for tok in [o200k(), cl100k()] {
            prop_assert_eq!(tok.encode(&t), tok.encode_reference(&t));
        }
    }

    #[test]
    fn arbitrary_bytes_round_trip(b in prop::collection::vec(any::<u8>(), 0..300)) {
        let ids = o200k().encode_bytes(&b);
        prop_assert_eq!(o200k().decode(&ids).unwrap(), b);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    /// The embedded vocabularies fill their per-token facts on first use:
    /// a fresh tokenizer, whose facts fill in this text's order, encodes
    /// like the shared one (filled by every other test) and the oracle.
    #[test]
    fn lazy_facts_do_not_depend_on_query_order(t in unicode_text(), s in "[a-z]{100,400}") {
        let fresh = Tokenizer::o200k_base();
        let t = format!("{s}{t}{s}");
        let ids = fresh.encode(&t);
        prop_assert_eq!(&ids, &o200k().encode(&t));
        prop_assert_eq!(&ids, &o200k().encode_reference(&t));
    }
}

/// A rank file that is not embedded settles every token when the encoder
/// is built and checks the vocabulary first: same ids as the embedded one.
#[test]
fn loaded_rank_file_equals_embedded() {
    let loaded = Tokenizer::from_tiktoken(
        bpe::data::O200K_BASE_TIKTOKEN,
        Pattern::O200k,
        bpe::O200K_SPECIALS,
    )
    .unwrap();
    assert!(loaded.has_linear_encoder());
    let text = format!("{}吾輩は猫である。{}", "qzxv".repeat(300), "the cat sat ".repeat(50));
    assert_eq!(loaded.encode(&text), o200k().encode(&text));
}

#[test]
fn catastrophic_inputs_equal_oracle_piecewise() {
    // The oracle is quadratic, so compare on 5 KB; linearity is the
    // benchmark's business.
    let mut rng = 7u64;
    let mut random_az = String::new();
    for _ in 0..5_000 {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        random_az.push((b'a' + ((rng >> 33) % 26) as u8) as char);
    }
    let inputs = [
        "a".repeat(5_000),
        " ".repeat(5_000),
        "x".repeat(5_000),
        random_az,
        "^ 0 a 's \u{2420} \n".repeat(500),
    ];
    for tok in [o200k(), cl100k()] {
        for t in &inputs {
            let ids = tok.encode(t);
            assert_eq!(ids, tok.encode_reference(t), "input starting {:?}", &t[..10]);
            assert_eq!(tok.decode_to_string(&ids).unwrap(), *t);
        }
    }
}

#[test]
fn megabyte_runs_are_fast_enough_to_finish() {
    // Linear time: a quadratic encoder would not finish these in the test
    // budget. Checked against a piecewise property: decoding gives the input.
    for tok in [o200k(), cl100k()] {
        for t in ["a".repeat(1_000_000), " ".repeat(1_000_000)] {
            let ids = tok.encode(&t);
            assert_eq!(tok.decode(&ids).unwrap(), t.as_bytes());
        }
    }
}

#[test]
fn bad_tiktoken_files_are_errors_naming_the_line() {
    let mut file = String::new();
    for b in 0..=255u8 {
        use base64::Engine;
        file.push_str(&format!("{} {b}\n", base64::engine::general_purpose::STANDARD.encode([b])));
    }
    assert!(Tokenizer::from_tiktoken(file.as_bytes(), Pattern::Gpt2, &[]).is_ok());
    let bad = format!("{file}YWI= x\n");
    assert_eq!(
        Tokenizer::from_tiktoken(bad.as_bytes(), Pattern::Gpt2, &[]).unwrap_err(),
        LoadError::Tiktoken { line: 257, message: "bad rank \"x\"".into() }
    );
    let dup = format!("{file}YWI= 3\n");
    assert!(matches!(
        Tokenizer::from_tiktoken(dup.as_bytes(), Pattern::Gpt2, &[]),
        Err(LoadError::Tiktoken { line: 257, .. })
    ));
    let missing: String = file.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert!(matches!(
        Tokenizer::from_tiktoken(missing.as_bytes(), Pattern::Gpt2, &[]),
        Err(LoadError::Token { .. })
    ));
    let clash =
        Tokenizer::from_tiktoken(file.as_bytes(), Pattern::Gpt2, &[("<|x|>", 5)]).unwrap_err();
    assert!(clash.to_string().contains("<|x|>"), "{clash}");
    for garbage in [&b"\xff\xfe"[..], b"!!!! 1", b"only", b"YQ== 4000000000"] {
        assert!(Tokenizer::from_tiktoken(garbage, Pattern::Gpt2, &[]).is_err());
    }
}

#[test]
fn bad_tokenizer_json_is_an_error() {
    for bad in [
        &b"{"[..],
        b"{}",
        br#"{"model":{"type":"Unigram"}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a c"]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0,"b":0},"merges":[]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":4000000000},"merges":[]}}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"added_tokens":[{"id":4000000000,"content":"x"}]}"#,
        br#"{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated","invert":false}}"#,
    ] {
        let err = Tokenizer::from_tokenizer_json(bad).unwrap_err();
        assert!(!err.to_string().is_empty());
    }
    let err = Tokenizer::from_tokenizer_json(
        br#"{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a c"]}}"#,
    )
    .unwrap_err();
    assert_eq!(
        err,
        LoadError::Merge { index: 0, message: "token \"c\" is not in the vocabulary".into() }
    );
}

/// Line numbers count the file's lines, blank ones included, and a
/// duplicate is reported where it occurs (naming the first occurrence).
#[test]
fn duplicates_in_tiktoken_files_name_their_lines() {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let mut file = String::new();
    for b in 0..=255u8 {
        file.push_str(&format!("{} {b}\n", b64(&[b])));
        if b % 64 == 0 {
            file.push('\n');
        }
    }
    // 256 rank lines and 4 blank lines: the next line is 261.
    let dup_rank = format!("{file}{} 7\n", b64(b"ab"));
    assert_eq!(
        Tokenizer::from_tiktoken(dup_rank.as_bytes(), Pattern::Gpt2, &[]).unwrap_err(),
        LoadError::Tiktoken { line: 261, message: "rank 7 appears twice (first on line 9)".into() }
    );
    let dup_bytes = format!("{file}{} 300\n{} 301\n", b64(b"ab"), b64(b"ab"));
    assert_eq!(
        Tokenizer::from_tiktoken(dup_bytes.as_bytes(), Pattern::Gpt2, &[]).unwrap_err(),
        LoadError::Tiktoken {
            line: 262,
            message: "token \"ab\" appears twice (first on line 261)".into()
        }
    );
    assert!(matches!(
        Tokenizer::from_tiktoken(b"\n\n", Pattern::Gpt2, &[]),
        Err(LoadError::Tiktoken { line: 1, .. })
    ));
}

/// A vocabulary with no ordinary token would count every text as 0 tokens:
/// an error naming the field.
#[test]
fn empty_vocabulary_is_an_error() {
    for (json, want) in [
        (&br#"{"model":{"type":"BPE","vocab":{},"merges":[]}}"#[..], "`model.vocab` is empty"),
        (
            br#"{"model":{"type":"BPE","vocab":{"<s>":0},"merges":[]},"added_tokens":[{"id":0,"content":"<s>"}]}"#,
            "`model.vocab` has only added tokens (1 of them)",
        ),
    ] {
        let err = Tokenizer::from_tokenizer_json(json).unwrap_err();
        assert_eq!(err, LoadError::Json { message: want.into() });
        assert!(err.to_string().contains("model.vocab"), "{err}");
    }
}

/// Ids index dense tables, so a lone rank near the id cap (16,777,215)
/// beside 257 tokens used to cost 3.9 s and 610 MB: the ids may span at
/// most twice the tokens plus 65,536, checked before any table is built,
/// and the error names the line (or the token) of the largest id.
#[test]
fn sparse_ids_are_refused_before_any_table() {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let mut file = String::new();
    for b in 0..=255u8 {
        file.push_str(&format!("{} {b}\n", b64(&[b])));
    }
    let far = format!("{file}{} 16777215\n", b64(b"ab"));
    match Tokenizer::from_tiktoken(far.as_bytes(), Pattern::Gpt2, &[]).unwrap_err() {
        LoadError::Tiktoken { line, message } => {
            assert_eq!(line, 257);
            assert!(message.contains("16777216 ids for 257 tokens"), "{message}");
            assert!(message.contains("limit of 66050"), "{message}");
        }
        e => panic!("{e}"),
    }
    // Within the allowance: loads (a reserved range like o200k's).
    let near = format!("{file}{} 66049\n", b64(b"ab"));
    let tok = Tokenizer::from_tiktoken(near.as_bytes(), Pattern::Gpt2, &[]).unwrap();
    assert_eq!(tok.vocab_size(), 66_050);
    assert_eq!(tok.encode("ab"), [66_049]);
    // A special token far out is named.
    let e = Tokenizer::from_tiktoken(file.as_bytes(), Pattern::Gpt2, &[("<|x|>", 9_000_000)])
        .unwrap_err();
    assert!(matches!(&e, LoadError::Token { token, .. } if token == "<|x|>"), "{e}");
    // The same for tokenizer.json: an added token far out.
    let json = br#"{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[]},"added_tokens":[{"id":16000000,"content":"<x>"}]}"#;
    let e = Tokenizer::from_tokenizer_json(json).unwrap_err();
    assert!(
        matches!(&e, LoadError::Token { token, message } if token == "<x>" && message.contains("limit of 65542")),
        "{e}"
    );
}
