//! Permutation phrases against their context-free expansion: a phrase over
//! `p` names is the same language as the grammar with one nonterminal per
//! (set of names used, count) — exponential, but a faithful oracle for
//! small `p`. On random phrases (shared names, repeatable members, nested
//! phrases, separators or none, count bounds) the masks of both grammars
//! are equal at every step of random walks, and so are acceptance and the
//! forced bytes (with and without ignored spaces).

use std::collections::HashMap;

use earley::{GrammarBuilder, GrammarError, Limits, Parser, Permutation, SymbolId};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::{TokTrie, TokenSet};

const WORDS: [&str; 5] = ["a", "b", "c", "d", "x"];

#[derive(Clone, Debug)]
enum Member {
    /// One of `WORDS`.
    Word(usize),
    /// A word and, optionally, a second one (`ab` or `a`).
    Maybe(usize, usize),
    /// `( phrase )`.
    Nested(Box<Phrase>),
}

#[derive(Clone, Debug)]
struct Phrase {
    members: Vec<(Member, Option<u32>)>,
    required: Vec<u32>,
    comma: bool,
    min: u32,
    max: Option<u32>,
}

fn random_phrase(rng: &mut SmallRng, depth: usize) -> Phrase {
    let n = rng.random_range(1..=5);
    let members: Vec<(Member, Option<u32>)> = (0..n)
        .map(|_| {
            let m = match rng.random_range(0..10) {
                0..6 => Member::Word(rng.random_range(0..WORDS.len())),
                6..9 => Member::Maybe(rng.random_range(0..4), rng.random_range(0..4)),
                _ if depth == 0 => Member::Nested(Box::new(random_phrase(rng, depth + 1))),
                _ => Member::Word(rng.random_range(0..WORDS.len())),
            };
            let name = (!rng.random_bool(0.2)).then(|| rng.random_range(0..4));
            (m, name)
        })
        .collect();
    // Mostly names some member uses; sometimes one none does (the phrase
    // then derives nothing).
    let mut required: Vec<u32> = members
        .iter()
        .filter_map(|(_, name): &(Member, Option<u32>)| *name)
        .filter(|_| rng.random_bool(0.4))
        .collect();
    if rng.random_bool(0.05) {
        required.push(rng.random_range(0..4));
    }
    let min = rng.random_range(0..=3);
    let max = rng.random_bool(0.5).then(|| min + rng.random_range(0..=3));
    Phrase { members, required, comma: rng.random_bool(0.7), min, max }
}

struct Builder {
    b: GrammarBuilder,
    words: Vec<SymbolId>,
    comma: SymbolId,
    open: SymbolId,
    close: SymbolId,
    expand: bool,
}

impl Builder {
    fn new(expand: bool) -> Builder {
        let mut b = GrammarBuilder::new();
        let words = WORDS.iter().map(|w| b.literal(w)).collect();
        let (comma, open, close) = (b.literal(","), b.literal("("), b.literal(")"));
        Builder { b, words, comma, open, close, expand }
    }

    fn member(&mut self, m: &Member) -> SymbolId {
        match m {
            Member::Word(w) => self.words[*w],
            Member::Maybe(w, v) => {
                let n = self.b.add_nonterminal("maybe");
                self.b.add_rule(n, &[self.words[*w], self.words[*v]]);
                self.b.add_rule(n, &[self.words[*w]]);
                n
            }
            Member::Nested(p) => {
                let inner = self.phrase(p);
                let n = self.b.add_nonterminal("nested");
                self.b.add_rule(n, &[self.open, inner, self.close]);
                n
            }
        }
    }

    fn phrase(&mut self, p: &Phrase) -> SymbolId {
        let members: Vec<(SymbolId, Option<u32>)> =
            p.members.iter().map(|(m, name)| (self.member(m), *name)).collect();
        if !self.expand {
            let lhs = self.b.add_nonterminal("phrase");
            let separator = p.comma.then_some(self.comma);
            let (required, min, max) = (p.required.clone(), p.min, p.max);
            self.b.add_permutation(
                lhs,
                Permutation {
                    members,
                    required,
                    separator,
                    min,
                    max,
                    distinct: false,
                    search: false,
                    ordered: false,
                },
            );
            return lhs;
        }
        // One nonterminal per (names used, count), built on demand.
        let cap = p.max.unwrap_or(p.min.max(1));
        let mut ids: HashMap<(u32, u32), SymbolId> = HashMap::new();
        let mut todo = vec![(0u32, 0u32)];
        let first = self.b.add_nonterminal("state");
        ids.insert((0, 0), first);
        while let Some((used, count)) = todo.pop() {
            let lhs = ids[&(used, count)];
            // A state with no way out derives nothing (and is pruned); the
            // unit rule keeps it defined.
            self.b.add_rule(lhs, &[lhs]);
            if p.required.iter().all(|&r| used & (1 << r) != 0) && count >= p.min {
                self.b.add_rule(lhs, &[]);
            }
            if p.max.is_some_and(|m| count >= m) {
                continue;
            }
            for &(sym, name) in &members {
                let bit = name.map_or(0, |x| 1 << x);
                if used & bit != 0 {
                    continue;
                }
                let next_count = if p.max.is_some() { count + 1 } else { (count + 1).min(cap) };
                let key = (used | bit, next_count);
                let next = *ids.entry(key).or_insert_with(|| {
                    todo.push(key);
                    self.b.add_nonterminal("state")
                });
                let mut rhs = Vec::new();
                if count > 0 && p.comma {
                    rhs.push(self.comma);
                }
                rhs.extend([sym, next]);
                self.b.add_rule(lhs, &rhs);
            }
        }
        first
    }
}

/// The grammar `start: phrase "."`, as a phrase or expanded, with `%ignore
/// / +/` when `spaces`.
fn build(p: &Phrase, expand: bool, spaces: bool) -> Result<earley::Grammar, GrammarError> {
    let mut b = Builder::new(expand);
    if spaces {
        b.b.add_ignore(lexer::RegexAst::Regex(" +".to_string()));
    }
    let phrase = b.phrase(p);
    let dot = b.b.literal(".");
    let start = b.b.add_nonterminal("start");
    b.b.add_rule(start, &[phrase, dot]);
    b.b.build(start, Limits::default())
}

fn vocabulary() -> Vec<Vec<u8>> {
    let alphabet = b"abcdx,(). ";
    let mut v: Vec<Vec<u8>> = Vec::new();
    for &x in alphabet {
        v.push(vec![x]);
        for &y in alphabet {
            v.push(vec![x, y]);
        }
    }
    v.extend([b"a,b".to_vec(), b",c,".to_vec(), b"x,x".to_vec(), b"(a)".to_vec()]);
    v
}

#[test]
fn masks_equal_the_expanded_grammar() {
    let vocab = vocabulary();
    let trie = TokTrie::from_token_bytes(&vocab).unwrap();
    let mut rng = SmallRng::seed_from_u64(0xb1e5);
    let (mut compared, mut nonempty, mut accepted, mut empty_languages) = (0, 0, 0, 0);
    for case in 0..2000 {
        let p = random_phrase(&mut rng, 0);
        let spaces = case % 3 == 0;
        let (gp, ge) = match (build(&p, false, spaces), build(&p, true, spaces)) {
            (Ok(gp), Ok(ge)) => (gp, ge),
            (Err(GrammarError::EmptyLanguage { .. }), Err(GrammarError::EmptyLanguage { .. })) => {
                empty_languages += 1;
                continue;
            }
            (a, b) => panic!("case {case}: {p:?}: phrase {:?}, expanded {:?}", a.err(), b.err()),
        };
        let mut pp = Parser::new(&gp, &|_| None).unwrap();
        let mut pe = Parser::new(&ge, &|_| None).unwrap();
        let mut text = String::new();
        for _ in 0..12 {
            let mut mp = TokenSet::new(vocab.len());
            let mut me = TokenSet::new(vocab.len());
            trie.compute_mask_by_state(&mut pp, &mut mp);
            trie.compute_mask_by_state(&mut pe, &mut me);
            pp.check().unwrap();
            pe.check().unwrap();
            let show = |m: &TokenSet| -> Vec<String> {
                m.iter().map(|t| String::from_utf8_lossy(&vocab[t.index()]).into_owned()).collect()
            };
            assert_eq!(show(&mp), show(&me), "case {case}: {p:?} after {text:?}");
            let acc = pp.is_accepting().unwrap();
            assert_eq!(acc, pe.is_accepting().unwrap(), "case {case}: {p:?} after {text:?}");
            // The bytes every continuation agrees on, too.
            let (fp, fe) = (pp.forced_bytes(16).unwrap(), pe.forced_bytes(16).unwrap());
            assert_eq!(
                (&fp.bytes, fp.accepting),
                (&fe.bytes, fe.accepting),
                "forced: case {case}: {p:?} after {text:?}"
            );
            accepted += usize::from(acc);
            compared += 1;
            let allowed: Vec<_> = mp.iter().collect();
            if allowed.is_empty() {
                break;
            }
            nonempty += 1;
            let t = allowed[rng.random_range(0..allowed.len())];
            for &byte in &vocab[t.index()] {
                assert!(pp.try_consume_byte(byte).unwrap());
                assert!(pe.try_consume_byte(byte).unwrap());
            }
            text.push_str(&String::from_utf8_lossy(&vocab[t.index()]));
        }
    }
    // The walks are long enough to matter, and most phrases derive something.
    assert!(compared > 6000, "{compared}");
    assert!(nonempty > 5000, "{nonempty}");
    assert!(accepted > 1000, "{accepted}");
    assert!(empty_languages < 700, "{empty_languages}");
}

#[test]
fn names_are_used_once_and_required_ones_always() {
    let mut b = GrammarBuilder::new();
    let (a, bb, x, comma) = (b.literal("a"), b.literal("b"), b.literal("x"), b.literal(","));
    let any = b.add_nonterminal("any");
    // a and b once each (a required), x any number of times, 2 to 4 members
    b.add_permutation(
        any,
        Permutation {
            members: vec![(a, Some(7)), (bb, Some(9)), (x, None)],
            required: vec![7],
            separator: Some(comma),
            min: 2,
            max: Some(4),
            distinct: false,
            search: false,
            ordered: false,
        },
    );
    let g = b.build(any, Limits::default()).unwrap();
    for text in ["a,b", "b,a", "x,a", "a,x,x,x", "x,b,x,a"] {
        assert!(g.accepts(text.as_bytes()).unwrap(), "{text}");
    }
    for text in ["a", "b,x", "a,a", "a,b,b", "a,x,x,x,x", "x,x,b,x,a", "a,,b", ",a,b"] {
        assert!(!g.accepts(text.as_bytes()).unwrap(), "{text}");
    }
    // After `x,x,x` only `a` may come (the phrase must end within 4 members).
    let mut p = Parser::new(&g, &|_| None).unwrap();
    for &byte in b"x,x,x," {
        assert!(p.try_consume_byte(byte).unwrap());
    }
    assert!(!p.try_consume_byte(b'x').unwrap());
    assert!(!p.try_consume_byte(b'b').unwrap());
    assert!(p.try_consume_byte(b'a').unwrap());
    assert!(p.is_accepting().unwrap());
}

#[test]
fn ordered_phrases_take_names_in_order_then_the_unnamed() {
    let mut b = GrammarBuilder::new();
    let (a, bb, x, comma) = (b.literal("a"), b.literal("b"), b.literal("x"), b.literal(","));
    let seq = b.add_nonterminal("seq");
    // a then b (each optional, in that order), then any number of x;
    // `b` is also a member name 0 could take: alternatives for one slot.
    let phrase = |members, separator| Permutation {
        members,
        required: vec![],
        separator,
        min: 0,
        max: None,
        distinct: false,
        search: false,
        ordered: true,
    };
    let members = vec![(a, Some(0)), (x, Some(0)), (bb, Some(1)), (x, None)];
    b.add_permutation(seq, phrase(members, Some(comma)));
    let g = b.build(seq, Limits::default()).unwrap();
    for text in ["", "a", "x", "a,b", "x,b", "a,b,x", "a,b,x,x", "x,b,x"] {
        assert!(g.accepts(text.as_bytes()).unwrap(), "{text:?}");
    }
    for text in ["b", "b,a", "a,x", "a,a", "a,b,a", "a,b,b", "x,x"] {
        assert!(!g.accepts(text.as_bytes()).unwrap(), "{text:?}");
    }
    // After `a,` only `b` may come.
    let mut p = Parser::new(&g, &|_| None).unwrap();
    for &byte in b"a," {
        assert!(p.try_consume_byte(byte).unwrap());
    }
    assert!(!p.try_consume_byte(b'x').unwrap());
    assert!(p.try_consume_byte(b'b').unwrap());
    // Names must first appear as 0, 1, 2, ….
    let mut b = GrammarBuilder::new();
    let (a, bb) = (b.literal("a"), b.literal("b"));
    let seq = b.add_nonterminal("seq");
    b.add_permutation(seq, phrase(vec![(a, Some(1)), (bb, Some(0))], None));
    let e = b.build(seq, Limits::default()).unwrap_err();
    assert!(matches!(e, earley::GrammarError::UnorderedNames { .. }), "{e}");
}

#[test]
fn many_names_cost_what_the_text_costs() {
    // 300 optional names in any order: the expansion would need 2^300
    // nonterminals; the phrase keeps one state per prefix of the text.
    let mut b = GrammarBuilder::new();
    let comma = b.literal(",");
    let members: Vec<_> = (0..300u32).map(|i| (b.literal(&format!("k{i};")), Some(i))).collect();
    let any = b.add_nonterminal("any");
    let required = vec![0, 150, 299];
    b.add_permutation(
        any,
        Permutation {
            members,
            required,
            separator: Some(comma),
            min: 0,
            max: None,
            distinct: false,
            search: false,
            ordered: false,
        },
    );
    let g = b.build(any, Limits::default()).unwrap();
    let mut order: Vec<u32> = (0..300).collect();
    order.reverse();
    let text = order.iter().map(|i| format!("k{i};")).collect::<Vec<_>>().join(",");
    assert!(g.accepts(text.as_bytes()).unwrap());
    let without_150: Vec<String> =
        order.iter().filter(|&&i| i != 150).map(|i| format!("k{i};")).collect();
    assert!(!g.accepts(without_150.join(",").as_bytes()).unwrap());
    let repeated = format!("{text},k17;");
    assert!(!g.accepts(repeated.as_bytes()).unwrap());
}

#[test]
fn bad_phrases_are_errors() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let n = b.add_nonterminal("n");
    b.add_rule(n, &[a]);
    b.add_permutation(
        n,
        Permutation {
            members: vec![(a, None)],
            required: vec![],
            separator: None,
            min: 0,
            max: None,
            distinct: false,
            search: false,
            ordered: false,
        },
    );
    assert!(matches!(b.build(n, Limits::default()), Err(GrammarError::Redefined { .. })));

    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let n = b.add_nonterminal("n");
    let p = Permutation {
        members: vec![(a, None)],
        required: vec![],
        separator: None,
        min: 3,
        max: Some(2),
        distinct: false,
        search: false,
        ordered: false,
    };
    b.add_permutation(n, p);
    assert!(matches!(b.build(n, Limits::default()), Err(GrammarError::BadRepeat { .. })));

    // A required name no member uses: the phrase derives nothing.
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let n = b.add_nonterminal("n");
    let p = Permutation {
        members: vec![(a, Some(0))],
        required: vec![1],
        separator: None,
        min: 0,
        max: None,
        distinct: false,
        search: false,
        ordered: false,
    };
    b.add_permutation(n, p);
    assert!(matches!(b.build(n, Limits::default()), Err(GrammarError::EmptyLanguage { .. })));
}

#[test]
fn phrase_states_are_limited() {
    let mut b = GrammarBuilder::new();
    let members: Vec<_> = (0..20u32).map(|i| (b.literal(&format!("<{i}>")), Some(i))).collect();
    let any = b.add_nonterminal("any");
    b.add_permutation(
        any,
        Permutation {
            members,
            required: vec![],
            separator: None,
            min: 0,
            max: None,
            distinct: false,
            search: false,
            ordered: false,
        },
    );
    let mut limits = Limits::default();
    limits.max_phrase_states = 10;
    let g = b.build(any, limits).unwrap();
    let text: String = (0..20).map(|i| format!("<{i}>")).collect();
    let err = g.accepts(text.as_bytes()).unwrap_err();
    assert!(matches!(err, earley::ParseError::TooManyPhraseStates { limit: 10, .. }), "{err}");
}
