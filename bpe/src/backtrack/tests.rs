//! Unit tests of the backtracking encoder's tables: lazy against eager
//! facts, and compatibility against BPE of the two tokens' bytes.

use super::{Backtracker, NONE};
use crate::Tokenizer;

/// The embedded vocabularies skip the up-front check (`known_monotone`):
/// it must pass, and the facts filled lazily (queried from the highest
/// id down, so each query recurses into unsettled shorter tokens) must
/// equal those settled in id order.
#[test]
fn embedded_vocabularies_are_monotone_and_lazy_equals_eager() {
    for tok in [Tokenizer::o200k_base(), Tokenizer::cl100k_base()] {
        let (model, tokens) = (&tok.model, &tok.tokens);
        let eager = Backtracker::build(model, tokens, false)
            .expect("the embedded vocabulary passes the monotone check");
        let lazy = Backtracker::build(model, tokens, true).expect("byte symbols");
        let mut valid = 0;
        for t in (0..tokens.len() as u32).rev() {
            if tokens.kind(t) != crate::vocab::Kind::Normal {
                continue;
            }
            let e = eager.is_valid(model, tokens, t);
            assert_eq!(lazy.is_valid(model, tokens, t), e, "token {t}");
            if e {
                valid += 1;
                assert_eq!(lazy.split(model, tokens, t), eager.split(model, tokens, t));
                let p = eager.next_prefix(model, tokens, t);
                assert_eq!(lazy.next_prefix(model, tokens, t), p, "token {t}");
                assert!(p == NONE || tokens.token_len(p) < tokens.token_len(t));
            }
        }
        // Nearly every token of a trained vocabulary is valid.
        assert!(valid * 100 > tokens.len() * 99, "{valid} of {}", tokens.len());
    }
}

/// Compatibility (the spine walk, or the replay of alone-runs for runs that
/// are not sorted) equals BPE of the two tokens' bytes, on random pairs of
/// valid tokens of the Hugging Face vocabularies, half of them drawn from
/// tokens whose runs are not sorted.
#[test]
fn compatibility_equals_bpe_of_the_pair() {
    for (file, pairs) in [
        ("llama3.tokenizer.json.gz", 30_000),
        ("llama2.tokenizer.json.gz", 20_000),
        ("mistral03.tokenizer.json.gz", 10_000),
        ("gpt2.tokenizer.json.gz", 10_000),
    ] {
        let Some(json) =
            testkit::read_data_or_skip("compatibility test", &format!("tokenizers/{file}"))
        else {
            return;
        };
        let tok = Tokenizer::from_tokenizer_json(&json).unwrap();
        let (model, tokens) = (&tok.model, &tok.tokens);
        let bt = model.backtracker(tokens).expect("every Hugging Face vocabulary here has one");
        let valid: Vec<u32> =
            (0..tokens.len() as u32).filter(|&t| bt.is_valid(model, tokens, t)).collect();
        let unsorted: Vec<u32> =
            valid.iter().copied().filter(|&t| !bt.facts[t as usize].sorted).collect();
        assert_eq!(unsorted.is_empty(), bt.steps.is_empty(), "{file}");
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let (mut compatible, mut replayed) = (0, 0);
        for k in 0..pairs {
            let pick = |r: usize, from: &[u32]| from[r % from.len()];
            let a = if k % 2 == 0 && !unsorted.is_empty() {
                pick(next(unsorted.len()), &unsorted)
            } else {
                pick(next(valid.len()), &valid)
            };
            let b = pick(next(valid.len()), &valid);
            let mut bytes = tokens.bytes(a).to_vec();
            bytes.extend_from_slice(tokens.bytes(b));
            let mut want = Vec::new();
            model.merge_reference(tokens, &bytes, &mut want);
            let want = want == [a, b];
            let got = bt.check(model, tokens, &bytes, tokens.token_len(a), a, b);
            assert_eq!(got, want, "{file}: ({a}, {b}) = {:?}", String::from_utf8_lossy(&bytes));
            compatible += usize::from(want);
            replayed += usize::from(!bt.facts[a as usize].sorted || !bt.facts[b as usize].sorted);
        }
        // Both answers occur, and the replay is exercised where it exists.
        assert!(compatible > pairs / 20 && compatible < pairs, "{file}: {compatible}");
        assert!(unsorted.is_empty() || replayed > pairs / 3, "{file}: {replayed}");
    }
}
