//! The lexeme options `max_tokens=` and `stop=` at the token level, over a
//! toy vocabulary: masks against brute-force oracles over token sequences,
//! and rollback restoring the per-lexeme token counts.

use std::sync::Arc;

use proptest::prelude::*;
use structgen::{Backtrack, Grammar, Matcher, Vocabulary};
use toktrie::TokenId;

const VOCAB: &[&str] = &["a", "b", "ab", "ba", "aab", "c", "bc", "abc", "cc"];
const EOS: u32 = 9;

fn vocab() -> Vocabulary {
    Vocabulary::builder()
        .token_list(VOCAB)
        .special(TokenId(EOS), "<eos>")
        .stop_tokens([TokenId(EOS)])
        .build()
        .unwrap()
}

fn lark(src: &str) -> Grammar {
    Grammar::lark(src).unwrap()
}

/// `start: x "c"` with `x[max_tokens=k]` over `body`: whether the token
/// sequence is a complete sentence (the text is a word of `body` and `c`,
/// and at most `k` tokens hold bytes of the word).
fn complete(body: &mut derivre::Regex, k: usize, tokens: &[usize]) -> bool {
    let text: Vec<u8> = tokens.iter().flat_map(|&t| VOCAB[t].bytes()).collect();
    let Some((b'c', word)) = text.split_last() else { return false };
    if word.is_empty() || !body.is_match_bytes(word) {
        return false;
    }
    let mut start = 0;
    let mut spanned = 0;
    for &t in tokens {
        if start < word.len() {
            spanned += 1;
        }
        start += VOCAB[t].len();
    }
    spanned <= k
}

/// Whether some continuation of at most `depth` tokens completes `tokens`.
fn viable(body: &mut derivre::Regex, k: usize, tokens: &mut Vec<usize>, depth: usize) -> bool {
    if complete(body, k, tokens) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    (0..VOCAB.len()).any(|t| {
        tokens.push(t);
        let ok = viable(body, k, tokens, depth - 1);
        tokens.pop();
        ok
    })
}

fn body_regex(pattern: &str) -> derivre::Regex {
    let mut b = derivre::RegexBuilder::new();
    let e = b.mk(&derivre::RegexAst::Regex(pattern.to_string())).unwrap();
    b.to_regex(e)
}

const BODIES: &[&str] = &["[ab]+", "a+b", "(ab)+", "b[ab]*a"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, rng_seed: proptest::test_runner::RngSeed::Fixed(5), ..ProptestConfig::default() })]
    /// At every step of a random walk, the mask is the set of tokens after
    /// which some continuation is a sentence whose word spans at most `k`
    /// tokens; rolling back restores the earlier masks.
    #[test]
    fn max_tokens_masks_equal_the_brute_force_set(
        body in 0..BODIES.len(),
        k in 1usize..4,
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..6),
        back in any::<prop::sample::Index>(),
    ) {
        let src = format!("start: x \"c\"\nx[max_tokens={k}]: /{}/", BODIES[body]);
        let mut m = Matcher::new(&vocab(), &lark(&src)).unwrap();
        let mut rx = body_regex(BODIES[body]);
        let mut tokens = Vec::new();
        let mut masks = Vec::new();
        for pick in &picks {
            let mask: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
            let mut want: Vec<u32> = (0..VOCAB.len())
                .filter(|&t| {
                    tokens.push(t);
                    let ok = viable(&mut rx, k, &mut tokens, 3);
                    tokens.pop();
                    ok
                })
                .map(|t| t as u32)
                .collect();
            if complete(&mut rx, k, &tokens) {
                want.push(EOS);
            }
            prop_assert_eq!(&mask, &want, "{} after {:?}", src, tokens);
            masks.push(mask.clone());
            let ordinary: Vec<u32> = mask.iter().copied().filter(|&t| t != EOS).collect();
            if ordinary.is_empty() {
                break;
            }
            let t = ordinary[pick.index(ordinary.len())];
            m.consume_token(TokenId(t)).unwrap();
            tokens.push(t as usize);
        }
        let n = back.index(masks.len());
        m.rollback(tokens.len() - n);
        let mask: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
        prop_assert_eq!(&mask, &masks[n], "{} after rolling back to {}", src, n);
    }
}

/// `start: x "c"` with `x[stop=S]` over `body`: whether the token
/// sequence is complete. The consumed text is the first prefix that is a
/// body word followed by `S` (the lexeme is lazy), ending at a token
/// boundary (no token goes on past hidden text that what follows does not
/// start with), then `c`.
fn complete_stop(body: &mut derivre::Regex, stop: &[u8], tokens: &[usize]) -> bool {
    let text: Vec<u8> = tokens.iter().flat_map(|&t| VOCAB[t].bytes()).collect();
    let Some(end) = (stop.len()..=text.len()).find(|&i| {
        text[i - stop.len()..i] == *stop && body.is_match_bytes(&text[..i - stop.len()])
    }) else {
        return false;
    };
    let boundary = tokens
        .iter()
        .scan(0, |at, &t| {
            *at += VOCAB[t].len();
            Some(*at)
        })
        .any(|at| at == end);
    boundary && text[end..] == *b"c"
}

fn viable_stop(
    body: &mut derivre::Regex,
    stop: &[u8],
    tokens: &mut Vec<usize>,
    depth: usize,
) -> bool {
    if complete_stop(body, stop, tokens) {
        return true;
    }
    depth > 0
        && (0..VOCAB.len()).any(|t| {
            tokens.push(t);
            let ok = viable_stop(body, stop, tokens, depth - 1);
            tokens.pop();
            ok
        })
}

const STOP_BODIES: &[&str] = &["[ab]*", "a*", "(ab)*b?", "b[ab]*"];
const STOPS: &[&str] = &["ab", "b", "ba", "aa"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, rng_seed: proptest::test_runner::RngSeed::Fixed(6), ..ProptestConfig::default() })]
    /// At every step of a random walk under a hidden stop, the mask is the
    /// brute-force set of tokens with a complete continuation.
    #[test]
    fn stop_masks_equal_the_brute_force_set(
        body in 0..STOP_BODIES.len(),
        stop in 0..STOPS.len(),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..6),
    ) {
        let src = format!("start: x \"c\"\nx[stop=\"{}\"]: /{}/", STOPS[stop], STOP_BODIES[body]);
        let mut m = Matcher::new(&vocab(), &lark(&src)).unwrap();
        let mut rx = body_regex(STOP_BODIES[body]);
        let stop = STOPS[stop].as_bytes();
        let mut tokens = Vec::new();
        for pick in &picks {
            let mask: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
            let mut want: Vec<u32> = (0..VOCAB.len())
                .filter(|&t| {
                    tokens.push(t);
                    let ok = viable_stop(&mut rx, stop, &mut tokens, 3);
                    tokens.pop();
                    ok
                })
                .map(|t| t as u32)
                .collect();
            if complete_stop(&mut rx, stop, &tokens) {
                want.push(EOS);
            }
            prop_assert_eq!(&mask, &want, "{} after {:?}", src, tokens);
            let ordinary: Vec<u32> = mask.iter().copied().filter(|&t| t != EOS).collect();
            if ordinary.is_empty() {
                break;
            }
            let t = ordinary[pick.index(ordinary.len())];
            m.consume_token(TokenId(t)).unwrap();
            tokens.push(t as usize);
        }
    }
}

/// A hidden stop over the toy vocabulary: the token that completes it is
/// taken back, the next mask starts after the rule, and a rollback
/// re-seals nothing.
#[test]
fn stop_reports_backtrack_and_rolls_back() {
    let mut m = Matcher::new(&vocab(), &lark("start: x \"c\"\nx[stop=\"ba\"]: /a*/")).unwrap();
    m.consume_tokens(&[TokenId(0), TokenId(0)]).unwrap(); // a a
    assert_eq!(m.backtrack(), Backtrack::default());
    // `aab` would go past nothing; `ba` completes the stop.
    assert!(m.compute_mask().unwrap().contains(TokenId(3)));
    m.consume_token(TokenId(3)).unwrap();
    assert_eq!(m.backtrack(), Backtrack { tokens: 1, hidden: 2, visible: 0 });
    let after: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
    assert_eq!(after, [5]); // only `c`
    m.rollback(1);
    assert_eq!(m.backtrack(), Backtrack::default());
    // `b` then `a`: the stop spans two tokens; both are taken back.
    m.consume_tokens(&[TokenId(1), TokenId(0)]).unwrap();
    assert_eq!(m.backtrack(), Backtrack { tokens: 2, hidden: 2, visible: 0 });
    m.consume_token(TokenId(5)).unwrap();
    assert!(m.is_accepting());
    // A token going past the stop is not allowed.
    m.rollback(3);
    assert!(!m.compute_mask().unwrap().contains(TokenId(7)));
}

/// Forced tokens through a hidden stop, an EOS-ended lexeme and a token
/// limit: generation with a seeded sampler never errs, the stop text is
/// reported for backtracking, and every forced token is in the mask.
#[test]
fn forced_tokens_through_lexeme_options() {
    use rand::{Rng, SeedableRng};
    let vocab = Vocabulary::from_tokenizer(Arc::new(bpe::Tokenizer::o200k_base())).unwrap();
    let eos = vocab.stop_tokens()[0];
    for (seed, src) in [
        "start: \"<a>\" a \"</a>\" b\na[stop=\"END\"]: /[a-z ]{0,8}/\nb[max_tokens=2]: /[0-9]{1,6}/",
        "start: \"say: \" a \" done\"\na[stop=\"\"]: /[a-z]{1,5}/",
    ]
    .into_iter()
    .enumerate()
    {
        let mut m = Matcher::new(&vocab, &lark(src)).unwrap();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed as u64);
        let mut hidden = 0;
        for _ in 0..60 {
            for t in m.consume_forced().unwrap() {
                hidden += m.backtrack().hidden;
                assert!(!vocab.stop_tokens().contains(&t), "{src}");
            }
            let mask = m.compute_mask().unwrap().clone();
            if mask.count() == 0 || m.is_stopped() {
                break;
            }
            let allowed: Vec<TokenId> = mask.iter().collect();
            // Prefer EOS where it ends a lexeme, to go through `stop=""`.
            let t = if mask.contains(eos) && !m.is_accepting() {
                eos
            } else {
                allowed[rng.random_range(0..allowed.len())]
            };
            if t == eos && m.is_accepting() {
                break;
            }
            m.consume_token(t).unwrap();
            hidden += m.backtrack().hidden;
        }
        assert!(m.is_accepting(), "{src}");
        assert_eq!(hidden > 0, seed == 0, "{src}: hidden bytes {hidden}");
    }
}
