//! Property test: a lexeme with a hidden stop (`stop=` in Lark) ends at
//! the first prefix of the input that is a body word followed by the stop
//! text, and reports the stop's length as hidden; checked against one
//! independent `derivre::Regex` for the body.

use derivre::{Regex, RegexBuilder};
use lexer::{LexemeId, LexemeSet, LexemeSpec, Lexer, LexerLimits, LexerSpec, RegexAst};
use proptest::prelude::*;

const BODIES: &[&str] = &["[a-c]*", "a+", "(ab|c)*", "[^;]*", "b*c?", "[a-c;-]{0,4}"];
const STOPS: &[&str] = &[";", "ab", "--", "c;", "\n\n"];

fn body_regex(pattern: &str) -> Regex {
    let mut b = RegexBuilder::new();
    let e = b.mk(&RegexAst::Regex(pattern.to_string())).unwrap();
    b.to_regex(e)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]
    #[test]
    fn stop_lexeme_ends_at_the_first_body_then_stop(
        body in 0..BODIES.len(),
        stop in 0..STOPS.len(),
        input in proptest::collection::vec(proptest::sample::select(b"abc;-\n".to_vec()), 0..10),
    ) {
        let (body, stop) = (BODIES[body], STOPS[stop].as_bytes());
        let mut spec = LexerSpec::new();
        let text = String::from_utf8(stop.to_vec()).unwrap();
        spec.add(LexemeSpec::regex(body).with_stop(RegexAst::Literal(text)));
        let mut lx = Lexer::new(&spec, LexerLimits::default()).unwrap();
        prop_assert_eq!(lx.stop_bytes(LexemeId(0)), Some(stop));
        let mut allowed = LexemeSet::default();
        allowed.insert(LexemeId(0));
        // Ours: the first lazy end, stopping where the state dies.
        let mut s = lx.start_state(&allowed);
        let mut ours = None;
        for (i, &b) in input.iter().enumerate() {
            s = lx.next(s, b);
            if s.is_dead() {
                break;
            }
            if s.is_lazy_end() {
                ours = Some((i + 1, lx.hidden_len(s)));
                break;
            }
            prop_assert_eq!(lx.hidden_len(s), 0);
        }
        // The oracle: the first prefix that is a body word and the stop.
        let mut rx = body_regex(body);
        let oracle = (1..=input.len())
            .find(|&i| {
                i >= stop.len()
                    && input[i - stop.len()..i] == *stop
                    && rx.is_match_bytes(&input[..i - stop.len()])
            })
            .map(|i| (i, stop.len()));
        prop_assert_eq!(ours, oracle, "{:?}", String::from_utf8_lossy(&input));
    }
}
