//! Bitmask rows and batches: `fill_bitmask` equals `compute_mask` bit for
//! bit (padding included) on random vocabularies and on Llama-3; a batch
//! filled on threads equals the rows filled one by one; matchers of one
//! grammar run on two threads (interleaved with other grammars') give the
//! masks they give alone; stop tokens by default and per request.

use std::io::BufRead;
use std::sync::Arc;

use proptest::prelude::*;
use structgen::{
    BatchError, BatchPool, Grammar, GrammarSpec, Matcher, MatcherError, Vocabulary,
    fill_bitmask_batch,
};
use toktrie::{TokenId, TokenSet};

/// The row `fill_bitmask` must write for `mask` over `words` words.
fn expected_row(mask: &TokenSet, words: usize) -> Vec<u32> {
    let mut row = vec![0u32; words];
    for t in mask.iter() {
        row[t.index() / 32] |= 1 << (t.index() % 32);
    }
    row
}

const GRAMMARS: &[&str] = &[
    "start: /[ab]+/ \"!\"",
    "start: \"{\" (/\"[a-z ]*\"/ \":\" /[0-9]+/)? \"}\"",
    "start: (\"x\" | \"xy\" | \"yz\")* \"z\"",
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(16),
        ..ProptestConfig::default()
    })]
    #[test]
    fn fill_bitmask_equals_compute_mask(
        tokens in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(b"ab xyz!{}\":09".to_vec()), 1..4),
            1..90),
        padding in 0usize..70,
        extra_words in 0usize..3,
        grammar in 0..GRAMMARS.len(),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 8),
    ) {
        let n = tokens.len();
        let eos = TokenId(n as u32);
        let vocab = Vocabulary::builder()
            .token_list(&tokens)
            .special(eos, "<eos>")
            .stop_tokens([eos])
            .model_vocab_size(n + 1 + padding)
            .build()
            .unwrap();
        prop_assert_eq!(vocab.bitmask_words(), (n + 1 + padding).div_ceil(32));
        let mut m = Matcher::new(&vocab, &Grammar::lark(GRAMMARS[grammar]).unwrap()).unwrap();
        let words = vocab.bitmask_words() + extra_words;
        for pick in picks {
            let mask = m.compute_mask().unwrap().clone();
            // Garbage in the row first: every word must be written.
            let mut row = vec![0xDEAD_BEEF; words];
            m.fill_bitmask(&mut row).unwrap();
            prop_assert_eq!(&row, &expected_row(&mask, words));
            let allowed: Vec<TokenId> = mask.iter().filter(|&t| t != eos).collect();
            if allowed.is_empty() {
                break;
            }
            m.consume_token(allowed[pick.index(allowed.len())]).unwrap();
        }
        let mut short = vec![0; vocab.bitmask_words() - 1];
        prop_assert_eq!(
            m.fill_bitmask(&mut short),
            Err(MatcherError::BitmaskTooSmall { need: vocab.bitmask_words(), got: short.len() })
        );
    }
}

fn llama3() -> Option<Arc<bpe::Tokenizer>> {
    let json =
        testkit::read_data_or_skip("Llama-3 bitmask rows", "tokenizers/llama3.tokenizer.json.gz")?;
    Some(Arc::new(bpe::Tokenizer::from_tokenizer_json(&json).unwrap()))
}

#[test]
fn llama3_rows_equal_masks_and_padding_is_cleared() {
    let Some(tok) = llama3() else { return };
    // Llama-3's embedding has 128,256 rows, its tokenizer 128,256 ids; pad
    // further, as engines that round vocabularies up do.
    let vocab =
        Vocabulary::builder().tokenizer(tok.clone()).model_vocab_size(128_320).build().unwrap();
    let schema = serde_json::json!({"type": "object", "properties": {
        "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["name"]});
    let mut m = Matcher::new(&vocab, &Grammar::json_schema(&schema).unwrap()).unwrap();
    let text = r#"{"name": "Ada Lovelace", "tags": ["math", "poetry"]}"#;
    let words = vocab.bitmask_words();
    assert_eq!(words, 4010);
    for t in tok.encode(text) {
        let mask = m.compute_mask().unwrap().clone();
        let mut row = vec![u32::MAX; words];
        m.fill_bitmask(&mut row).unwrap();
        assert_eq!(row, expected_row(&mask, words));
        assert_eq!(row[128_256 / 32..], [0, 0]);
        m.consume_token(TokenId(t)).unwrap();
    }
    assert!(m.is_accepting());
}

#[test]
fn a_batch_equals_rows_filled_one_by_one() {
    let vocab = Vocabulary::from_tokenizer(Arc::new(bpe::Tokenizer::o200k_base())).unwrap();
    let tok = vocab.tokenizer().unwrap().clone();
    let specs = [
        GrammarSpec::json_schema(serde_json::json!({"type": "array", "items": {"type": "number"}})),
        GrammarSpec::Regex("[a-z]+( [a-z]+)*".into()),
        GrammarSpec::Lark("start: \"<\" /[a-z]+/ \">\"".into()),
    ];
    let texts = ["[1, 2.5, -3]", "hello there world", "<tag>"];
    let mut matchers = Vec::new();
    for (spec, text) in specs.iter().zip(texts) {
        let g = Grammar::compile(spec, &Default::default()).unwrap();
        // Several positions per grammar.
        let ids = tok.encode(text);
        for k in 0..ids.len() {
            let mut m = Matcher::new(&vocab, &g).unwrap();
            m.consume_tokens(&ids[..k].iter().map(|&t| TokenId(t)).collect::<Vec<_>>()).unwrap();
            matchers.push(m);
        }
    }
    let words = vocab.bitmask_words();
    let rows = matchers.len() + 2;
    let mut want = vec![7u32; rows * words];
    for (i, m) in matchers.clone().iter_mut().enumerate() {
        m.fill_bitmask(&mut want[(i + 1) * words..(i + 2) * words]).unwrap();
    }
    let mut got = vec![7u32; rows * words];
    let mut jobs: Vec<(&mut Matcher, usize)> =
        matchers.iter_mut().enumerate().map(|(i, m)| (m, i + 1)).collect();
    jobs.reverse(); // any order of jobs
    let outcomes = fill_bitmask_batch(&mut jobs, &mut got, words).unwrap();
    assert!(outcomes.iter().all(Result::is_ok));
    assert_eq!(got, want, "rows 0 and {} untouched, the others equal", rows - 1);
    // The same on batch pools: the caller alone, with one helper, with two.
    for threads in [1, 2, 3] {
        let pool = BatchPool::new(threads).unwrap();
        assert_eq!(pool.threads(), threads);
        let mut got = vec![7u32; rows * words];
        let outcomes = pool.fill_batch(&mut jobs, &mut got, words).unwrap();
        assert_eq!(outcomes.len(), jobs.len());
        assert!(outcomes.iter().all(Result::is_ok));
        assert_eq!(got, want, "{threads} threads");
    }
    assert!(BatchPool::new(0).is_err());
    // Caller mistakes are errors, and nothing is written.
    let mut m = Matcher::new(&vocab, &Grammar::regex("a").unwrap()).unwrap();
    let mut m2 = m.clone();
    let mut buf = vec![0u32; 2 * words];
    assert_eq!(
        fill_bitmask_batch(&mut [(&mut m, 2)], &mut buf, words),
        Err(BatchError::RowOutOfRange { row: 2, rows: 2 })
    );
    assert_eq!(
        fill_bitmask_batch(&mut [(&mut m, 1), (&mut m2, 1)], &mut buf, words),
        Err(BatchError::DuplicateRow { row: 1 })
    );
    assert_eq!(
        fill_bitmask_batch(&mut [(&mut m, 0)], &mut buf[1..], words),
        Err(BatchError::Shape { len: 2 * words - 1, row_words: words })
    );
    assert!(buf.iter().all(|&w| w == 0));
}

#[test]
fn a_failed_matcher_fills_its_stop_tokens_and_spares_the_others() {
    let vocab = Vocabulary::builder()
        .token_list(&["a", "b"])
        .special(TokenId(2), "<eos>")
        .stop_tokens([TokenId(2)])
        .build()
        .unwrap();
    let g = Grammar::regex("a+").unwrap();
    let (mut bad, mut good) =
        (Matcher::new(&vocab, &g).unwrap(), Matcher::new(&vocab, &g).unwrap());
    assert!(bad.consume_token(TokenId(1)).is_err());
    let mut buf = vec![0u32; 2];
    let out = fill_bitmask_batch(&mut [(&mut bad, 0), (&mut good, 1)], &mut buf, 1).unwrap();
    assert!(out[0].is_err() && out[1].is_ok());
    assert_eq!(buf, [0b100, 0b001]);
    // On a batch pool, in the order of the jobs.
    let mut buf = vec![0u32; 2];
    let pool = BatchPool::new(2).unwrap();
    let out = pool.fill_batch(&mut [(&mut good, 1), (&mut bad, 0)], &mut buf, 1).unwrap();
    assert!(out[0].is_ok() && out[1].is_err());
    assert_eq!(buf, [0b100, 0b001]);
}

/// Masks along each valid instance of a MaskBench subset, computed by one
/// matcher alone.
fn walk_masks(vocab: &Vocabulary, g: &Grammar, tokens: &[u32]) -> Vec<Vec<u64>> {
    let mut m = Matcher::new(vocab, g).unwrap();
    let mut masks = Vec::new();
    for &t in tokens {
        let Ok(mask) = m.compute_mask() else { break };
        masks.push(mask.as_words().to_vec());
        if m.consume_token(TokenId(t)).is_err() {
            break;
        }
    }
    masks
}

#[test]
fn matchers_on_two_threads_give_the_masks_they_give_alone() {
    let Some(tok) = llama3() else { return };
    let Some(raw) = testkit::read_data_or_skip("concurrent matchers", "maskbench/dev.jsonl.gz")
    else {
        return;
    };
    let vocab = Vocabulary::from_tokenizer(tok.clone()).unwrap();
    let mut jobs = Vec::new();
    for line in raw.lines().step_by(97).take(40) {
        let rec: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let Ok(g) = Grammar::json_schema(&rec["schema"]) else { continue };
        for t in rec["tests"].as_array().into_iter().flatten().filter(|t| t["valid"] == true) {
            let text = serde_json::to_string(&t["data"]).unwrap();
            if text.len() < 2000 {
                jobs.push((g.clone(), tok.encode(&text), rec["schema"].clone()));
            }
        }
    }
    assert!(jobs.len() > 20, "{} jobs", jobs.len());
    // Alone: each job on a grammar of its own, whose start no other
    // matcher taught.
    let alone: Vec<_> = jobs
        .iter()
        .map(|(_, t, schema)| walk_masks(&vocab, &Grammar::json_schema(schema).unwrap(), t))
        .collect();
    // Two threads, each walking every other job; jobs of one grammar on
    // both threads at once (their starts learning from each other's
    // dropped matchers), interleaved with other grammars' jobs.
    let together: Vec<Vec<Vec<Vec<u64>>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|k| {
                let (jobs, vocab) = (&jobs, &vocab);
                s.spawn(move || {
                    jobs.iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == k)
                        .map(|(_, (g, t, _))| walk_masks(vocab, g, t))
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, masks) in alone.iter().enumerate() {
        assert_eq!(&together[i % 2][i / 2], masks, "job {i}");
    }
    // The shared grammars' starts did learn.
    let taught = jobs.iter().filter(|(g, _, schema)| {
        let fresh = Grammar::json_schema(schema).unwrap();
        drop(Matcher::new(&vocab, &fresh).unwrap());
        g.start_transitions() > fresh.start_transitions()
    });
    assert!(taught.count() * 2 > jobs.len());
}

#[test]
fn llama3_json_ends_with_eot_and_a_request_can_override_the_stop_tokens() {
    let Some(tok) = llama3() else { return };
    let vocab = Vocabulary::from_tokenizer(tok.clone()).unwrap();
    let eot = TokenId(tok.special_id("<|eot_id|>").unwrap());
    let eos = TokenId(tok.special_id("<|end_of_text|>").unwrap());
    assert!(vocab.stop_tokens().contains(&eot) && vocab.stop_tokens().contains(&eos));
    let g = Grammar::json_schema(&serde_json::json!({"type": "boolean"})).unwrap();
    let mut m = Matcher::new(&vocab, &g).unwrap();
    m.consume_token(TokenId(tok.encode("true")[0])).unwrap();
    let mask = m.compute_mask().unwrap().clone();
    assert!(mask.contains(eot) && mask.contains(eos));
    m.consume_token(eot).unwrap();
    assert_eq!(m.stop_reason(), Some(structgen::StopReason::StopToken(eot)));
    // Per request: only the end of turn.
    let mut m = Matcher::new(&vocab, &g).unwrap().with_stop_tokens(&[eot]).unwrap();
    m.consume_token(TokenId(tok.encode("false")[0])).unwrap();
    let mask = m.compute_mask().unwrap().clone();
    assert!(mask.contains(eot) && !mask.contains(eos));
    assert!(m.clone().consume_token(eos).is_err());
    assert!(Matcher::new(&vocab, &g).unwrap().with_stop_tokens(&[TokenId(1 << 20)]).is_err());
}

#[test]
fn reset_and_fork() {
    let vocab = Vocabulary::from_tokenizer(Arc::new(bpe::Tokenizer::o200k_base())).unwrap();
    let tok = vocab.tokenizer().unwrap().clone();
    let g = Grammar::regex("(ab|cd)+").unwrap();
    let mut m = Matcher::new(&vocab, &g).unwrap();
    let first = m.compute_mask().unwrap().clone();
    m.consume_token(TokenId(tok.encode("ab")[0])).unwrap();
    let fork = m.clone();
    m.consume_token(TokenId(tok.encode("cd")[0])).unwrap();
    assert_eq!(fork.num_tokens(), 1);
    m.reset().unwrap();
    assert_eq!(m.num_tokens(), 0);
    assert_eq!(m.compute_mask().unwrap(), &first);
    // After an error too.
    assert!(m.consume_token(TokenId(tok.encode("zz")[0])).is_err());
    m.reset().unwrap();
    assert!(m.error().is_none());
    assert_eq!(m.compute_mask().unwrap(), &first);
}
