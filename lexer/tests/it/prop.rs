//! Property test: the lexer's cached, byte-class-compressed states agree with
//! one independent `derivre::Regex` per lexeme on which lexemes are alive and
//! which match after every byte of random inputs.

use derivre::{Regex, RegexBuilder};
use lexer::{LexemeId, LexemeSet, LexemeSpec, Lexer, LexerLimits, LexerSpec, RegexAst};
use proptest::prelude::*;

const POOL: &[&str] = &[
    "a",
    "ab",
    "a+",
    "[a-c]+",
    "b*c",
    "(ab|ba)+",
    "[^a]",
    "\\d{2,3}",
    "é+",
    "[α-ω]+",
    "x(yz)?",
    "if",
    "[a-z]+",
    "\"[^\"]*\"",
    "[ \\t]+",
];

fn naive(pattern: &str) -> Regex {
    let mut b = RegexBuilder::new();
    let e = b.mk(&RegexAst::Regex(pattern.to_string())).unwrap();
    b.to_regex(e)
}

fn alphabet() -> Vec<u8> {
    let mut v = b"abcxyz\"019 \tif".to_vec();
    v.extend("éα".as_bytes());
    v.push(0xFF);
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]
    #[test]
    fn states_agree_with_one_regex_per_lexeme(
        picks in proptest::collection::vec(0..POOL.len(), 1..6),
        allowed_bits in any::<u8>(),
        input in proptest::collection::vec(proptest::sample::select(alphabet()), 0..12),
    ) {
        let mut spec = LexerSpec::new();
        for &p in &picks {
            spec.add(LexemeSpec::regex(POOL[p]));
        }
        let mut lx = Lexer::new(&spec, LexerLimits::default()).unwrap();
        let mut allowed = LexemeSet::default();
        for i in 0..picks.len() {
            if allowed_bits & (1 << i) != 0 {
                allowed.insert(LexemeId(i as u32));
            }
        }
        let mut rx: Vec<Regex> = picks.iter().map(|&p| naive(POOL[p])).collect();
        let mut s = lx.start_state(&allowed);
        for n in 1..=input.len() {
            // The fast path answers exactly the cached plain transitions.
            let plain = lx.next_plain(s, input[n - 1]);
            let prev = s;
            s = lx.next(s, input[n - 1]);
            prop_assert_eq!(s.is_plain(), !s.is_dead() && !s.is_lazy_end());
            if let Some(p) = plain {
                prop_assert_eq!(p, s);
            }
            prop_assert_eq!(lx.next_plain(prev, input[n - 1]), s.is_plain().then_some(s));
            let prefix = &input[..n];
            let mut live = Vec::new();
            let mut acc = Vec::new();
            for (i, r) in rx.iter_mut().enumerate() {
                if !allowed.contains(LexemeId(i as u32)) {
                    continue;
                }
                let s0 = r.initial_state();
                if !r.transition_bytes(s0, prefix).is_dead() {
                    live.push(LexemeId(i as u32));
                }
                if r.is_match_bytes(prefix) {
                    acc.push(LexemeId(i as u32));
                }
            }
            let got_live: Vec<LexemeId> = lx.live_lexemes(s).collect();
            prop_assert_eq!(&got_live, &live, "live after {:?}", prefix);
            let got_acc = lx.accepting(s).map(|a| lx.accept_set(a).to_vec()).unwrap_or_default();
            prop_assert_eq!(&got_acc, &acc, "accepting after {:?}", prefix);
            if s.is_dead() {
                break;
            }
        }
        prop_assert!(lx.error().is_none());
    }
}

#[test]
fn nullable_and_empty_lexemes_are_reported() {
    let mut spec = LexerSpec::new();
    let star = spec.add(LexemeSpec::regex("a*"));
    let none = spec.add(LexemeSpec::new("none", RegexAst::NoMatch));
    let eps = spec.add(LexemeSpec::regex(""));
    let lx = Lexer::new(&spec, LexerLimits::default()).unwrap();
    assert!(lx.is_nullable(star) && !lx.matches_nothing(star));
    assert!(!lx.is_nullable(none) && lx.matches_nothing(none));
    assert!(lx.is_nullable(eps) && lx.matches_nothing(eps));
}

#[test]
fn state_budget_is_an_error_not_a_hang() {
    let mut spec = LexerSpec::new();
    // (a|b)*a(a|b){12}: an exponential DFA
    spec.add(LexemeSpec::regex("[ab]*a[ab]{12}"));
    let mut limits = LexerLimits::default();
    limits.max_states = 100;
    let mut lx = Lexer::new(&spec, limits).unwrap();
    let mut all = LexemeSet::default();
    all.insert(LexemeId(0));
    let mut s = lx.start_state(&all);
    let mut x: u32 = 12345;
    for _ in 0..2000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let b = if x >> 16 & 1 == 0 { b'a' } else { b'b' };
        s = lx.next(s, b);
        if lx.error().is_some() {
            break;
        }
    }
    let err = lx.error().expect("the budget must be hit");
    assert!(err.to_string().contains("100"), "{err}");
}

/// A lexer adopted as a start keeps what it learned (its transitions are
/// table hits) and counts its limits from there: a copy may learn as many
/// new states as the first lexer could.
#[test]
fn an_adopted_start_keeps_its_transitions_and_counts_limits_from_there() {
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::regex("[ab]*a[ab]{12}"));
    let limits = LexerLimits::default().with_max_states(60);
    let mut lx = Lexer::new(&spec, limits).unwrap();
    let mut all = LexemeSet::default();
    all.insert(LexemeId(0));
    let start = lx.start_state(&all);
    // A random walk to 40 of the 60 states.
    let mut x: u32 = 7;
    let mut text = Vec::new();
    while lx.num_states() < 40 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        text.push(if x >> 16 & 1 == 0 { b'a' } else { b'b' });
        lx.next_bytes(start, &text);
    }
    let end = lx.next_bytes(start, &text);
    assert!(lx.is_exact());
    let (known, states) = (lx.num_known_transitions(), lx.num_states());

    let mut copy = lx.clone();
    copy.adopt_as_start();
    assert_eq!((copy.num_transitions(), copy.fuel_refusals()), (0, 0));
    assert_eq!(copy.num_known_transitions(), known);
    // What was learned answers without the derivative engine.
    assert_eq!(copy.next_bytes(start, &text), end);
    assert_eq!(copy.num_transitions(), 0);
    // 50 new states fit (the first lexer had room for 60 - 40 = 20 more).
    let mut x: u32 = 99;
    let mut s = start;
    let mut steps = 0;
    while copy.num_states() < states + 50 && steps < 100_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        s = copy.next(s, if x >> 16 & 1 == 0 { b'a' } else { b'b' });
        steps += 1;
    }
    assert!(copy.error().is_none(), "{:?}", copy.error());
    assert_eq!(copy.num_states(), states + 50);
    // The limit still holds past the start: at most 60 new states.
    while copy.error().is_none() && steps < 200_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        s = copy.next(s, if x >> 16 & 1 == 0 { b'a' } else { b'b' });
        steps += 1;
    }
    assert!(copy.error().is_some_and(|e| e.to_string().contains("60")));
    assert!(copy.num_states() <= states + 60);
    assert!(!copy.is_exact());
}

#[test]
fn bad_regex_names_the_lexeme() {
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::regex("(unclosed"));
    let err = Lexer::new(&spec, LexerLimits::default()).unwrap_err();
    assert!(err.to_string().contains("/(unclosed/"), "{err}");
}

#[test]
fn a_known_panic_inside_derivre_is_retried() {
    // derivre 0.3.13's simplifier panics on this regex after "ba" (its trie
    // rewrite of an alternation, `lexer/src/lexer/slow.rs`); the lexer
    // retries the derivative without the rewrite and decides exactly,
    // never unwinding.
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::regex("(b?a){0,2}c|(b?a){2}c"));
    let mut lx = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let mut all = LexemeSet::default();
    all.insert(LexemeId(0));
    let run = |lx: &mut Lexer, text: &[u8]| {
        let s0 = lx.start_state(&all);
        text.iter().try_fold(s0, |s, &b| Some(lx.next(s, b)).filter(|t| !t.is_dead()))
    };
    for text in [&b"babac"[..], b"bac", b"c", b"aac"] {
        let s = run(&mut lx, text).unwrap_or_else(|| panic!("{text:?} dies"));
        let set = lx.accepting(s).map(|a| lx.accept_set(a).to_vec());
        assert_eq!(set, Some(vec![LexemeId(0)]), "{text:?}");
    }
    for text in [&b"babc"[..], b"bbac", b"babababc"] {
        assert!(run(&mut lx, text).is_none_or(|s| lx.accepting(s).is_none()), "{text:?}");
    }
    assert!(lx.error().is_none(), "{:?}", lx.error());
}

/// Runs `input` through a lexer of `hard` (an intersection) and `x+` with
/// `fuel` per emptiness search (and `step_fuel` for the whole input when
/// given): the live lexemes at the end, the fuel refusals and the witness
/// proofs.
fn run_hard(
    hard: &RegexAst,
    fuel: u64,
    step_fuel: Option<u64>,
    input: &[u8],
) -> (Vec<LexemeId>, u64, u64) {
    let mut spec = LexerSpec::new();
    let h = spec.add(LexemeSpec::new("hard", hard.clone()));
    let x = spec.add(LexemeSpec::regex("x+"));
    let mut both = LexemeSet::default();
    both.insert(h);
    both.insert(x);
    let mut limits = LexerLimits::default();
    limits.relevance_fuel = fuel;
    limits.step_fuel = step_fuel.unwrap_or(limits.step_fuel);
    let mut lx = Lexer::new(&spec, limits).unwrap();
    if step_fuel.is_some() {
        lx.begin_step();
    }
    let mut s = lx.start_state(&both);
    for &b in input {
        s = lx.next(s, b);
    }
    assert!(lx.error().is_none(), "fuel {fuel}: {:?}", lx.error());
    (lx.live_lexemes(s).collect(), lx.fuel_refusals(), lx.witness_proofs())
}

#[test]
fn searches_out_of_fuel_find_a_witness_or_drop_the_lexeme_not_the_parse() {
    // A word-count pattern under a length bound: its derivatives are
    // intersections of counted repetitions, whose searches are costly.
    let words_in = |bounds: &str| {
        RegexAst::And(vec![
            RegexAst::Regex(r"(\S+\s+){0,9}\S+".to_string()),
            RegexAst::Regex(format!("(?s:.{{{bounds}}})")),
        ])
    };
    let words = words_in("1,100");
    let hard = LexemeId(0);
    // With the default fuel every search succeeds: `xx xx` continues it.
    assert_eq!(
        run_hard(&words, LexerLimits::default().relevance_fuel, None, b"xx xx"),
        (vec![hard], 0, 0)
    );
    // With little fuel the searches fail, and a short witness (a letter
    // after the space) proves the derivative instead.
    let (live, refusals, proofs) = run_hard(&words, 2_000, None, b"xx xx");
    assert_eq!((live, refusals), (vec![hard], 0));
    assert!(proofs > 0);
    // When no witness of at most four bytes exists (at least 12 characters:
    // only a word of the language is positive, 7 bytes away) and the step's
    // fuel runs out, the derivative is dropped, and the lexer goes on
    // without an error: a stricter mask, never a looser one.
    let long = words_in("12,100");
    let (live, refusals, _) = run_hard(&long, 50_000, Some(3_000), b"xx xx");
    assert!(refusals > 0 && live.is_empty(), "{live:?} {refusals}");
}

#[test]
fn a_step_shares_its_fuel_and_has_none_before_begin_step_limits() {
    let mut spec = LexerSpec::new();
    let words = RegexAst::And(vec![
        RegexAst::Regex(r"(\S+\s+){0,9}\S+".to_string()),
        RegexAst::Regex(r"(?s:.{1,100})".to_string()),
    ]);
    let hard = spec.add(LexemeSpec::new("words", words));
    let mut set = LexemeSet::default();
    set.insert(hard);
    let walk = |step_fuel: u64, steps: bool| {
        let mut limits = LexerLimits::default();
        limits.step_fuel = step_fuel;
        let mut lx = Lexer::new(&spec, limits).unwrap();
        if steps {
            lx.begin_step();
        }
        let mut s = lx.start_state(&set);
        for &b in b"ab cd" {
            s = lx.next(s, b);
        }
        (lx.live_lexemes(s).count(), lx.fuel_refusals())
    };
    // Without a step budget, the checks succeed.
    assert_eq!(walk(0, false), (1, 0));
    // With an empty step budget, the first check is refused at once.
    let (live, refusals) = walk(0, true);
    assert_eq!((live, refusals > 0), (0, true));
    // A generous budget changes nothing.
    assert_eq!(walk(u64::MAX, true), (1, 0));
}

/// Lexemes with intersections and complements: their derivatives need
/// emptiness proofs (learned witnesses first, derivre's search otherwise).
fn hard_pool() -> Vec<RegexAst> {
    let re = |s: &str| RegexAst::Regex(s.to_string());
    let and = |a: &str, b: &str| RegexAst::And(vec![re(a), re(b)]);
    vec![
        and(r"(\S+\s+){0,3}\S+", r"(?s:.{1,9})"),
        and(r"\x22(\\.|[^\x22\\])*\x22", r"(?s:.{0,7})"),
        and("[a-c]+", "(?s:.{0,4})"),
        and("(ab|ba)+", "a*b*a*b*"),
        RegexAst::And(vec![re("[a-z]+"), RegexAst::Not(Box::new(re("if|ab")))]),
        and("(é|a)+x", "(?s:.{2,5})"),
        re("[ab]+"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]
    #[test]
    fn emptiness_proofs_agree_with_one_regex_per_lexeme(
        picks in proptest::collection::vec(0..7usize, 1..4),
        inputs in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(b"ab x\"\\i\xC3\xA9f".to_vec()), 0..10),
            1..6,
        ),
    ) {
        // Several inputs through one lexer: witnesses learned on one input
        // are used on the next, and must never change an answer.
        let pool = hard_pool();
        let mut spec = LexerSpec::new();
        let mut all = LexemeSet::default();
        for &p in &picks {
            all.insert(spec.add(LexemeSpec::new(format!("h{p}"), pool[p].clone())));
        }
        let mut lx = Lexer::new(&spec, LexerLimits::default()).unwrap();
        let mut rx: Vec<Regex> = picks
            .iter()
            .map(|&p| {
                let mut b = RegexBuilder::new();
                let e = b.mk(&pool[p]).unwrap();
                b.to_regex(e)
            })
            .collect();
        for input in &inputs {
            let mut s = lx.start_state(&all);
            for n in 1..=input.len() {
                s = lx.next(s, input[n - 1]);
                let prefix = &input[..n];
                let mut live = Vec::new();
                for (i, r) in rx.iter_mut().enumerate() {
                    let s0 = r.initial_state();
                    if !r.transition_bytes(s0, prefix).is_dead() {
                        live.push(LexemeId(i as u32));
                    }
                }
                let got: Vec<LexemeId> = lx.live_lexemes(s).collect();
                prop_assert_eq!(&got, &live, "live after {:?}", String::from_utf8_lossy(prefix));
                if s.is_dead() {
                    break;
                }
            }
        }
        prop_assert_eq!(lx.fuel_refusals(), 0);
        prop_assert!(lx.error().is_none());
    }
}

#[test]
fn learned_witnesses_replace_searches_and_keep_answers() {
    // A word count under a length bound, as JSON Schema lowers `pattern`
    // with `maxLength`: after a space or inside a UTF-8 character the
    // derivative is an intersection that is not non-empty by structure.
    let words = RegexAst::And(vec![
        RegexAst::Regex(r"(\S+\s+){0,20}\S+".to_string()),
        RegexAst::Regex(r"(?s:.{1,200})".to_string()),
    ]);
    let mut spec = LexerSpec::new();
    let id = spec.add(LexemeSpec::new("words", words.clone()));
    let mut set = LexemeSet::default();
    set.insert(id);
    let mut lx = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let mut b = RegexBuilder::new();
    let e = b.mk(&words).unwrap();
    let mut naive = b.to_regex(e);
    let text = "ab cd é ef  gh ïj kl mn op qr st uv wx yz ab cd ef gh ij kl mn op";
    for start in 0..text.len() {
        let Some(input) = text.get(start..) else { continue };
        let mut s = lx.start_state(&set);
        for (n, &byte) in input.as_bytes().iter().enumerate() {
            s = lx.next(s, byte);
            let s0 = naive.initial_state();
            let live = !naive.transition_bytes(s0, &input.as_bytes()[..=n]).is_dead();
            assert_eq!(
                !s.is_dead(),
                live,
                "after {:?}",
                String::from_utf8_lossy(&input.as_bytes()[..=n])
            );
        }
    }
    assert_eq!(lx.fuel_refusals(), 0);
    assert!(lx.witness_proofs() > 0, "the witnesses were never used");
}

#[test]
fn construction_checks_share_the_build_pool() {
    // The length bound makes the emptiness of the whole lexeme a search
    // (an intersection is not positive by its structure).
    let hard = RegexAst::And(vec![
        RegexAst::Regex(r"(\S+\s+){0,9}\S+".to_string()),
        RegexAst::Regex("(?s:.{12,100})".to_string()),
    ]);
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("hard", hard));
    let build = |relevance: u64, pool: u64| {
        Lexer::new(
            &spec,
            LexerLimits::default().with_relevance_fuel(relevance).with_build_fuel(pool),
        )
    };
    // Too little fuel of its own, none in the pool: an error naming the pool.
    let Err(e) = build(10, 0) else { panic!("built with no fuel") };
    assert!(e.to_string().contains("LexerLimits::build_fuel"), "{e}");
    // The pool lends what the check needs.
    assert!(build(10, 1_000_000).is_ok());
    // As does a large enough fuel of its own.
    assert!(build(1_000_000, 0).is_ok());
}
