//! Integration tests of the `coalesce` crate: forced tokens are always a
//! prefix of the canonical tokenization of the rest of the text.

// The tests name the crate as the rest of the workspace does (`coalesce::`).
extern crate structgen_coalesce as coalesce;

use std::sync::Arc;

use bpe::Tokenizer;
use coalesce::{Coalescer, Next, Refusal, Tail};
use proptest::prelude::*;

/// JSON-ish fragments: text made of them exercises punctuation runs, keys,
/// numbers, whitespace, contractions and non-ASCII letters.
const FRAGMENTS: &[&str] = &[
    "{", "}", "[", "]", "\"", ":", ",", "name", "age", "Paul", "John", " ", "\n", "  ", "20", "3",
    "-", ".", "true", "it's", "'ll", "é", "中文", "_id", "URL", "/", "\\n", "x", "A",
];

fn text_of(ix: &[usize]) -> String {
    ix.iter().map(|&i| FRAGMENTS[i % FRAGMENTS.len()]).collect()
}

fn next_of(b: Option<u8>) -> Next {
    let mut n = Next::default();
    match b {
        Some(b) => n.bytes[(b >> 6) as usize] |= 1 << (b & 63),
        None => n.end = true,
    }
    n
}

/// Replays the canonical tokens of `text`; after `m` tokens pretends the
/// grammar forces the next `len` bytes, with only the true next byte (or
/// the end) allowed after them, or with anything allowed.
fn check(
    c: &Coalescer,
    text: &str,
    m: usize,
    len: usize,
    know_next: bool,
) -> Result<(), TestCaseError> {
    let tok = c.tokenizer();
    let canon = tok.encode(text);
    let m = m % (canon.len() + 1);
    let mut tail = Tail::new();
    tail.extend(tok, &canon[..m]);
    let done = tok.decode(&canon[..m]).unwrap().len();
    let bytes = text.as_bytes();
    let end = (done + len).min(bytes.len());
    let forced = &bytes[done..end];
    let next = if know_next { next_of(bytes.get(end).copied()) } else { Next::UNKNOWN };
    let f = c.forced_tokens(&tail, forced, &next);
    let k = f.tokens.len();
    prop_assert!(m + k <= canon.len(), "{text:?} m {m}: too many forced tokens");
    prop_assert_eq!(
        &f.tokens[..],
        &canon[m..m + k],
        "{:?} after {} tokens, forced {:?}",
        text,
        m,
        String::from_utf8_lossy(forced)
    );
    prop_assert_eq!(tok.decode(&f.tokens).unwrap(), forced[..f.covered].to_vec());
    prop_assert!(f.refusal != Some(Refusal::NonCanonicalJoin), "replayed tokens are canonical");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]
    #[test]
    fn forced_tokens_are_a_prefix_of_the_canonical_rest(
        ix in proptest::collection::vec(0usize..64, 1..24),
        m in 0usize..64,
        len in 1usize..24,
        know_next: bool,
    ) {
        let text = text_of(&ix);
        for c in coalescers() {
            check(c, &text, m, len, know_next)?;
        }
    }
}

fn coalescers() -> &'static [Coalescer] {
    use std::sync::OnceLock;
    static C: OnceLock<Vec<Coalescer>> = OnceLock::new();
    C.get_or_init(|| {
        let mut v = Vec::new();
        for tok in [Tokenizer::o200k_base(), Tokenizer::cl100k_base()] {
            let tok = Arc::new(tok);
            let mut b = toktrie::TokTrieBuilder::new().vocab_size(tok.vocab_size());
            for id in 0..tok.vocab_size() as u32 {
                if let Some(bytes) = tok.token_bytes(id).filter(|_| !tok.is_special(id)) {
                    b = b.token(toktrie::TokenId(id), bytes);
                }
            }
            let trie = Arc::new(b.build().unwrap());
            v.push(Coalescer::new(tok.clone()));
            v.push(Coalescer::new(tok).with_trie(trie));
        }
        v
    })
}

#[test]
fn the_character_example_needs_two_model_calls() {
    // {"name":"Paul","age":20}: the grammar forces everything but the name
    // and the age (enums), so a replay makes two model calls.
    for c in coalescers() {
        let tok = c.tokenizer();
        let text = r#"{"name":"Paul","age":20}"#;
        let canon = tok.encode(text);
        // (forced bytes, next allowed bytes) at each forced stretch.
        let stretches: &[(&str, &[u8], bool)] =
            &[(r#"{"name":""#, b"JP", false), (r#"","age":"#, b"23", false), ("}", b"", true)];
        let sampled = ["Paul", "20"];
        let mut tail = Tail::new();
        let (mut out, mut calls) = (Vec::new(), 0);
        for (i, &(forced, next_bytes, end)) in stretches.iter().enumerate() {
            let mut next = Next { end, ..Next::default() };
            for &b in next_bytes {
                next.bytes[(b >> 6) as usize] |= 1 << (b & 63);
            }
            let f = c.forced_tokens(&tail, forced.as_bytes(), &next);
            assert_eq!(f.covered, forced.len(), "{forced:?}: {:?}", f.refusal);
            tail.extend(tok, &f.tokens);
            out.extend(f.tokens);
            if let Some(s) = sampled.get(i) {
                let t = tok.encode(s);
                assert_eq!(t.len(), 1);
                calls += 1;
                tail.extend(tok, &t);
                out.extend(t);
            }
        }
        assert_eq!(out, canon);
        assert_eq!(calls, 2);
        assert!(canon.len() >= 8, "{}", canon.len());
    }
}

#[test]
fn a_non_canonical_join_forces_nothing() {
    let c = &coalescers()[0];
    let tok = c.tokenizer();
    // `{` generated as its own token, then `"` forced: o200k writes `{"`.
    let mut tail = Tail::new();
    tail.extend(tok, &tok.encode("{"));
    let f = c.forced_tokens(&tail, br#""name"#, &Next::UNKNOWN);
    assert!(f.tokens.is_empty());
    assert_eq!(f.refusal, Some(Refusal::NonCanonicalJoin));
}

#[test]
fn prompt_healing_retokenizes_the_boundary() {
    let c = &coalescers()[0];
    let tok = c.tokenizer();
    // The prompt ends in a space and the grammar forces `{"a":`; canonical
    // text puts the space with the brace.
    let prompt = tok.encode("Answer in JSON: ");
    let next = {
        let mut n = Next::default();
        n.bytes[0] |= 1 << b'1';
        n
    };
    let p = c.process_prompt(&prompt, br#"{"a":"#, &next);
    let text = tok.decode_to_string(&p.tokens).unwrap();
    let full = format!("{text}{}", String::from_utf8_lossy(&p.healed));
    assert!(full.starts_with("Answer in JSON: "), "{full:?}");
    assert_eq!(p.tokens, tok.encode(&text), "the new prompt is canonical");
    assert_eq!(p.tokens, tok.encode(r#"Answer in JSON: {"a":1"#)[..p.tokens.len()]);
    assert!(p.healed.is_empty() && p.grammar_bytes == 5, "{p:?}");
    // A prompt ending mid-word is healed back to its last final boundary.
    let prompt = tok.encode("The answer is: it'");
    let p = c.process_prompt(&prompt, b"", &Next::UNKNOWN);
    assert_eq!(p.healed, b" it'");
    assert_eq!(tok.decode_to_string(&p.tokens).unwrap(), "The answer is:");
}

#[test]
fn sentencepiece_style_tokenizers_are_refused() {
    if let Some(json) = testkit::read_data_or_skip(
        "sentencepiece_style_tokenizers_are_refused",
        "tokenizers/llama2.tokenizer.json.gz",
    ) {
        let c = Coalescer::new(Arc::new(Tokenizer::from_tokenizer_json(&json).unwrap()));
        assert!(!c.is_supported());
        let f = c.forced_tokens(&Tail::new(), b"abc", &Next::UNKNOWN);
        assert_eq!(f.refusal, Some(Refusal::Unsupported));
    }
}

#[test]
fn open_pieces_are_emitted_only_when_no_token_straddles_the_end() {
    // Words the grammar may continue with one letter: when the coalescer
    // with a trie emits the open word, every continuation keeps its tokens.
    let c = &coalescers()[1]; // o200k with its trie
    let tok = c.tokenizer();
    let mut fired = 0;
    for word in ["\"zxq", "\"qj", "\"vvk", "\"xz", "\"jq", "\"Request", "\"foo", "\"kzv"] {
        for b in b"qjxzkvw" {
            let next = next_of(Some(*b));
            let f = c.forced_tokens(&Tail::new(), word.as_bytes(), &next);
            if f.covered < word.len() {
                continue;
            }
            fired += 1;
            for rest in ["", "q", "jq", "xzkv", "zzz\"", "'ll"] {
                let full = format!("{word}{}{rest}\"", *b as char);
                let canon = tok.encode(&full);
                assert_eq!(&canon[..f.tokens.len()], &f.tokens[..], "{full:?}");
            }
        }
    }
    assert!(fired > 0, "the open-piece rule never applied");
}

/// SmolLM2 has no token for some bytes (`\x04` among them): forced bytes
/// holding one force nothing and leave the prompt alone, since no tokens
/// spell them.
#[test]
fn forced_bytes_without_a_token_are_refused() {
    let Some(path) = testkit::model_or_skip("coalesce with the SmolLM2 tokenizer") else { return };
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let tok = Arc::new(Tokenizer::from_gguf(file).unwrap());
    assert!(!tok.byte_has_token(0x04) && tok.byte_has_token(b'a'));
    let c = Coalescer::new(tok.clone());
    let f = c.forced_tokens(&Tail::new(), b"{\"a\": \"\x04\"}", &Next::UNKNOWN);
    assert_eq!((f.tokens.len(), f.refusal), (0, Some(Refusal::ByteWithoutToken)));
    let f = c.forced_tokens(&Tail::new(), b"{\"a\": 1}", &Next::UNKNOWN);
    assert_eq!(tok.decode(&f.tokens).unwrap(), b"{\"a\": 1}"[..f.covered]);
    let prompt = tok.encode("Answer:");
    let p = c.process_prompt(&prompt, b" \x04", &Next::UNKNOWN);
    assert_eq!(p.tokens, prompt);
}
