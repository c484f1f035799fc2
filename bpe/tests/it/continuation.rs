//! `encode_continuation`: the tokens of a text that continues a sequence
//! (no SentencePiece prefix space), and `encode_batch`.

use bpe::Tokenizer;

use crate::common::{data_dir_or_skip, o200k, read};

fn hf(dir: &std::path::Path, file: &str) -> Tokenizer {
    Tokenizer::from_tokenizer_json(&read(dir, &format!("tokenizers/{file}"))).unwrap()
}

/// The golden inputs, each with `\n` and `\s` escapes resolved.
fn golden_inputs(dir: &std::path::Path) -> Vec<String> {
    let text = String::from_utf8(read(dir, "tokenizers/golden/mixed_input.txt")).unwrap();
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.replace("\\n", "\n").replace("\\s", " ").replace("\\x", ""))
        .collect()
}

/// SentencePiece-style vocabularies: a continuation decodes to exactly its
/// text, and a text cut before a space run (where no merge crosses) encodes
/// as its head followed by the continuation of its tail.
#[test]
fn continuations_of_sentencepiece_texts() {
    let Some(dir) = data_dir_or_skip("continuation tests") else { return };
    for file in ["llama2.tokenizer.json.gz", "mistral03.tokenizer.json.gz"] {
        let tok = hf(&dir, file);
        assert!(tok.prepends_space(), "{file}");
        let a = tok.encode_continuation("a");
        assert_eq!(tok.decode_to_string(&a).unwrap(), "a", "{file}");
        assert_eq!(a.len(), 1, "{file}");
        assert_ne!(tok.encode("a"), a, "{file}: encode adds the prefix space");
        assert_eq!(tok.decode_to_string(&tok.encode_continuation(" a")).unwrap(), " a");
        let mut cuts = 0;
        for case in golden_inputs(&dir).iter().filter(|c| !c.contains('\u{2581}')) {
            let ids = tok.encode_continuation(case);
            assert_eq!(tok.decode_to_string(&ids).unwrap(), *case, "{file}: {case:?}");
            let full = tok.encode(case);
            let b = case.as_bytes();
            for i in (1..b.len()).filter(|&i| b[i] == b' ' && b[i - 1] != b' ') {
                let mut joined = tok.encode(&case[..i]);
                joined.extend(tok.encode_continuation(&case[i..]));
                assert_eq!(joined, full, "{file}: {case:?} cut at {i}");
                cuts += 1;
            }
        }
        assert!(cuts > 100, "{file}: {cuts} cuts");
    }
}

/// Without a prefix rule a continuation is the plain encoding.
#[test]
fn continuation_equals_encode_without_prefix_space() {
    let text = "Hello, world! 猫 is 'here'.";
    assert_eq!(o200k().encode_continuation(text), o200k().encode(text));
    let Some(dir) = data_dir_or_skip("continuation tests") else { return };
    let tok = hf(&dir, "llama3.tokenizer.json.gz");
    for case in golden_inputs(&dir) {
        assert_eq!(tok.encode_continuation(&case), tok.encode(&case));
    }
}

#[test]
fn batches_equal_one_by_one() {
    let texts: Vec<String> =
        (0..64).map(|i| format!("{} {i} 吾輩は猫である。", "word ".repeat(i % 9))).collect();
    let tok = o200k();
    let want: Vec<Vec<u32>> = texts.iter().map(|t| tok.encode(t)).collect();
    assert_eq!(tok.encode_batch(&texts), want);
    let counts: Vec<usize> = want.iter().map(Vec::len).collect();
    assert_eq!(tok.count_batch(&texts), counts);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert_eq!(pool.install(|| tok.encode_batch(&texts)), want);
}
