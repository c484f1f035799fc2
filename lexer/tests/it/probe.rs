//! Probes: the containment answer against a brute-force check over every
//! short word of the probe, the matcher against `derivre::Regex`, and the
//! known cases of the slicer (JSON string bodies, lazy lexemes).

use derivre::{Regex, RegexBuilder};
use lexer::{LexemeSet, LexemeSpec, Lexer, LexerLimits, LexerSpec, ProbeRegex, RegexAst, StateId};
use proptest::prelude::*;

const LEXEMES: &[&str] = &[
    "[a-c]*x",
    "[a-c]{0,3}x",
    "[a-c]{0,12}x",
    "\"[^\"]*\"",
    "[ab]+",
    "a[a-c]*",
    "(ab|c)*",
    "[a-c]+y|z",
    "[ \\t]+",
    "b{2,5}",
    // Concatenations and alternatives (derivre's check on their parts).
    "[a-c]*x[a-c]*y",
    "(ab)?[a-c]*(xa|y)",
    "(a[a-c]*|bx)z",
    "[a-c]{0,2}(x|[ab]*)c",
];

const PROBES: &[&str] =
    &["[a-c]{1,2}", "[a-c]{1,10}", "[a-c]+", "[ab]{1,4}", "[^\"x]{1,3}", "a|bb", "[ \\t]+"];

/// Every word over `alphabet` of length 1..=max_len.
fn words(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut layer: Vec<Vec<u8>> = vec![Vec::new()];
    for _ in 0..max_len {
        let mut next = Vec::new();
        for w in &layer {
            for &b in alphabet {
                let mut v = w.clone();
                v.push(b);
                next.push(v);
            }
        }
        out.extend(next.iter().cloned());
        layer = next;
    }
    out
}

fn lexer_of(patterns: &[&str], lazy: &[bool]) -> (Lexer, StateId) {
    let mut spec = LexerSpec::new();
    for (p, &l) in patterns.iter().zip(lazy) {
        let s = LexemeSpec::regex(p);
        spec.add(if l { s.lazy() } else { s });
    }
    let mut lexer = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let mut all = LexemeSet::default();
    for i in 0..patterns.len() {
        all.insert(lexer::LexemeId(i as u32));
    }
    let start = lexer.start_state(&all);
    (lexer, start)
}

/// Brute force: every non-empty prefix of every short word of the probe
/// keeps the state alive and is not a lazy end.
fn brute_contains(lexer: &mut Lexer, state: StateId, probe: &ProbeRegex) -> bool {
    let mut m = probe.matcher();
    for w in words(b"abcxyz\" \t", 4) {
        if !m.is_match(&w) {
            continue;
        }
        let mut s = state;
        for &b in &w {
            s = lexer.next(s, b);
            if s.is_dead() || s.is_lazy_end() {
                return false;
            }
        }
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]
    #[test]
    fn proven_containment_holds_on_every_short_word(
        picks in proptest::collection::vec((0..LEXEMES.len(), any::<bool>()), 1..4),
        probe in 0..PROBES.len(),
        prefix in proptest::collection::vec(proptest::sample::select(b"abc\"".to_vec()), 0..3),
    ) {
        let patterns: Vec<&str> = picks.iter().map(|p| LEXEMES[p.0]).collect();
        let lazy: Vec<bool> = picks.iter().map(|p| p.1 && p.0 % 3 == 0).collect();
        let (mut lexer, start) = lexer_of(&patterns, &lazy);
        let state = lexer.next_bytes(start, &prefix);
        prop_assume!(!state.is_dead() && !state.is_lazy_end());
        let probe = ProbeRegex::new(PROBES[probe]).unwrap();
        let id = lexer.add_probe(&probe);
        let answer = lexer.state_contains_prefixes(state, id, 10_000);
        // Cached answers are the same.
        prop_assert_eq!(lexer.state_contains_prefixes(state, id, 10_000), answer);
        if answer == Some(true) {
            prop_assert!(brute_contains(&mut lexer, state, &probe));
        }
    }

    #[test]
    fn matcher_agrees_with_derivre(
        probe in 0..PROBES.len(),
        input in proptest::collection::vec(proptest::sample::select(b"abcx\" \t".to_vec()), 0..6),
    ) {
        let mut b = RegexBuilder::new();
        let e = b.mk(&RegexAst::Regex(PROBES[probe].to_string())).unwrap();
        let mut rx: Regex = b.to_regex(e);
        let mut m = ProbeRegex::new(PROBES[probe]).unwrap().matcher();
        prop_assert_eq!(m.is_match(&input), rx.is_match_bytes(&input));
    }
}

#[test]
fn json_string_bodies() {
    let body = r#""([^"\\\x00-\x1F\x7F]|\\["\\/bfnrt])*""#;
    let capped = r#""([^"\\\x00-\x1F\x7F]|\\["\\/bfnrt]){0,20}""#;
    let probe = ProbeRegex::new(r#"[^"\\\x00-\x1F\x7F]{1,10}"#).unwrap();
    let long = ProbeRegex::new(r#"[^"\\\x00-\x1F\x7F]{1,30}"#).unwrap();
    for (pattern, short_ok, long_ok) in [(body, true, true), (capped, true, false)] {
        let (mut lexer, start) = lexer_of(&[pattern], &[false]);
        let (p, l) = (lexer.add_probe(&probe), lexer.add_probe(&long));
        assert_eq!(lexer.add_probe(&probe), p, "same pattern, same id");
        // Before the opening quote nothing is contained.
        assert_eq!(lexer.state_contains_prefixes(start, p, 100_000), Some(false));
        let inside = lexer.next(start, b'"');
        assert_eq!(lexer.state_contains_prefixes(inside, p, 100_000), Some(short_ok), "{pattern}");
        assert_eq!(lexer.state_contains_prefixes(inside, l, 100_000) == Some(true), long_ok);
    }
}

#[test]
fn lazy_lexemes_are_never_proven() {
    let (mut lexer, start) = lexer_of(&["[a-z]*x", "[a-z]+"], &[true, false]);
    let id = lexer.add_probe(&ProbeRegex::new("[a-z]{1,5}").unwrap());
    assert_ne!(lexer.state_contains_prefixes(start, id, 100_000), Some(true));
}

#[test]
fn bad_probes_are_errors() {
    let e = ProbeRegex::new("[a-").unwrap_err();
    assert_eq!(e.pattern(), "[a-");
    assert!(ProbeRegex::new("^a").unwrap_err().to_string().contains("look-around"));
    assert!(ProbeRegex::new("a\\b").is_err());
}

/// The key lexeme of an object with extra keys: JSON strings other than
/// the known names. derivre's shape-based check does not see through the
/// intersection; the exploration proves it.
#[test]
fn keys_other_than_known_names() {
    use derivre::JsonQuoteOptions;
    let names = RegexAst::Or(vec![
        RegexAst::Literal("revision_id".into()),
        RegexAst::Literal("parent_id".into()),
    ]);
    let any = || RegexAst::Regex("(?s:.*)".into());
    let content = RegexAst::And(vec![any(), RegexAst::Not(Box::new(names))]);
    let key = RegexAst::And(vec![
        RegexAst::JsonQuote(Box::new(content), JsonQuoteOptions::regular()),
        RegexAst::JsonQuote(Box::new(any()), JsonQuoteOptions::regular()),
    ]);
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("key", key));
    let mut lexer = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let mut all = LexemeSet::default();
    all.insert(lexer::LexemeId(0));
    let start = lexer.start_state(&all);
    let inside = lexer.next(start, b'"');
    // (A tenth of the fuel bounds the exploration as a whole.)
    // The unbounded slice is proven (its derivatives are few); the bounded
    // ones may exhaust the exploration budget, but are never wrongly proven
    // (callers infer them from the unbounded one: `slicer::Slice::covers`).
    let plus = ProbeRegex::new(r#"[^"\\\x00-\x1F\x7F]+"#).unwrap();
    let id = lexer.add_probe(&plus);
    assert_eq!(lexer.state_contains_prefixes(inside, id, 1_000_000), Some(true));
    assert!(brute_contains(&mut lexer, inside, &plus));
    for p in [r#"[^"\\\x00-\x1F\x7F]{1,10}"#, r#"[^"\\\x00-\x1F\x7F]{1,30}"#] {
        let probe = ProbeRegex::new(p).unwrap();
        let id = lexer.add_probe(&probe);
        if lexer.state_contains_prefixes(inside, id, 1_000_000) == Some(true) {
            assert!(brute_contains(&mut lexer, inside, &probe));
        }
    }
    // Not proven where a word can kill the lexeme: the known name itself
    // followed by its closing quote is excluded, but a probe that stops
    // inside it is fine; a probe containing the quote is not.
    let id = lexer.add_probe(&ProbeRegex::new(r#"[a-z"]{1,3}"#).unwrap());
    assert_ne!(lexer.state_contains_prefixes(inside, id, 1_000_000), Some(true));
}

/// The key lexeme as the JSON Schema compiler writes it: JSON strings, and
/// not one of the known names, excluded outside the quotes
/// (`"C*" & ¬("n1"|"n2")`). derivre's own check reads this shape: every
/// state along a key is proven cheaply, and brute force agrees.
#[test]
fn keys_with_names_excluded_outside_the_quotes() {
    use derivre::JsonQuoteOptions;
    let quote = |r: RegexAst| RegexAst::JsonQuote(Box::new(r), JsonQuoteOptions::regular());
    let names = ["revision_id", "parent_id", "a\"b", "ab", "x"];
    let names = RegexAst::Or(names.iter().map(|n| RegexAst::Literal(n.to_string())).collect());
    let key = RegexAst::And(vec![
        quote(RegexAst::Regex("(?s:.*)".into())),
        RegexAst::Not(Box::new(quote(names))),
    ]);
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("key", key));
    let mut lexer = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let mut all = LexemeSet::default();
    all.insert(lexer::LexemeId(0));
    let start = lexer.start_state(&all);
    let probes: Vec<ProbeRegex> = [r#"[^"\\\x00-\x1F\x7F]{1,10}"#, r#"[^"\\\x00-\x1F\x7F]+"#]
        .iter()
        .map(|p| ProbeRegex::new(p).unwrap())
        .collect();
    let ids: Vec<_> = probes.iter().map(|p| lexer.add_probe(p)).collect();
    for prefix in ["\"", "\"p", "\"parent_id", "\"a", "\"a\\\"", "\"ab", "\"x", "\"q"] {
        let state = lexer.next_bytes(start, prefix.as_bytes());
        assert!(!state.is_dead(), "{prefix}");
        for (probe, &id) in probes.iter().zip(&ids) {
            // Small fuel: the shape-based check needs little.
            let answer = lexer.state_contains_prefixes(state, id, 1_000);
            assert_eq!(answer, Some(true), "{prefix} {}", probe.pattern());
            assert!(brute_contains(&mut lexer, state, probe), "{prefix}");
        }
    }
    // The quote itself is not a string character: a probe with it is not
    // proven after a known name.
    let quoted = ProbeRegex::new(r#"[a-z"]{1,3}"#).unwrap();
    let id = lexer.add_probe(&quoted);
    let after_name = lexer.next_bytes(start, b"\"ab");
    assert_ne!(lexer.state_contains_prefixes(after_name, id, 100_000), Some(true));
}

/// A JSON string with an unanchored pattern: after the opening quote the
/// lexeme is `C* "lit" [0-9]+ C* "`, a concatenation derivre's check does
/// not read as a whole; its first part `C*` proves the string slices, at
/// every state along the string, and brute force agrees.
#[test]
fn unanchored_patterns_are_proven_by_their_parts() {
    use derivre::JsonQuoteOptions;
    let body = RegexAst::Regex("(?s:.*)/items/[0-9]+(?s:.*)".into());
    let string = RegexAst::JsonQuote(Box::new(body), JsonQuoteOptions::regular());
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("string", string));
    let mut lexer = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let mut all = LexemeSet::default();
    all.insert(lexer::LexemeId(0));
    let start = lexer.start_state(&all);
    let probes: Vec<ProbeRegex> = [r#"[^"\\\x00-\x1F\x7F]{1,10}"#, r#"[^"\\\x00-\x1F\x7F]+"#]
        .iter()
        .map(|p| ProbeRegex::new(p).unwrap())
        .collect();
    let ids: Vec<_> = probes.iter().map(|p| lexer.add_probe(p)).collect();
    for prefix in ["\"", "\"a/", "\"/items/", "\"/items/12", "\"x/items/3y"] {
        let state = lexer.next_bytes(start, prefix.as_bytes());
        assert!(!state.is_dead(), "{prefix}");
        for (probe, &id) in probes.iter().zip(&ids) {
            assert_eq!(lexer.state_contains_prefixes(state, id, 10_000), Some(true), "{prefix}");
            assert!(brute_contains(&mut lexer, state, probe), "{prefix}");
        }
    }
    // The same rule on the property test's lexemes (the test checks
    // soundness; this checks that the rule fires there).
    for pattern in ["[a-c]*x[a-c]*y", "(x|[a-c]*)z"] {
        let (mut lexer, start) = lexer_of(&[pattern], &[false]);
        let probe = ProbeRegex::new("[a-c]{1,10}").unwrap();
        let id = lexer.add_probe(&probe);
        assert_eq!(lexer.state_contains_prefixes(start, id, 10_000), Some(true), "{pattern}");
        assert!(brute_contains(&mut lexer, start, &probe));
    }
    // A pattern with a cap on the string's length is not proven: its
    // words run out.
    let capped = RegexAst::JsonQuote(
        Box::new(RegexAst::Regex("[a-z]{0,3}/[0-9]".into())),
        JsonQuoteOptions::regular(),
    );
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("capped", capped));
    let mut lexer = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let start = lexer.start_state(&all);
    let inside = lexer.next(start, b'"');
    let id = lexer.add_probe(&probes[0]);
    assert_ne!(lexer.state_contains_prefixes(inside, id, 100_000), Some(true));
}
