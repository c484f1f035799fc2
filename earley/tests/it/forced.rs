//! Forced bytes: on random small grammars they equal the longest common
//! prefix of every continuation found by enumeration with the naive oracle
//! (the quick, complete and step searches agree);
//! EOS and whitespace loops are never forced; the parser is left unchanged.

use earley::{ForcedStop, GrammarBuilder, Limits, Parser, SpecialToken};
use lexer::{LexemeSpec, RegexAst};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::TokenId;

use crate::oracle::Oracle;
use crate::prop::{build, random_grammar};

/// Every byte the random grammars use, plus one they never allow.
const ALPHABET: &[u8] = b"abc x";

/// The leaves of the tree of viable continuations of `prefix` (depth at
/// most `depth`): continuations that end a sentence, cannot be extended, or
/// reach the depth. The forced bytes must be their longest common prefix.
fn leaves(oracle: &mut Oracle, prefix: &[u8], depth: usize, out: &mut Vec<Vec<u8>>) {
    fn go(o: &mut Oracle, text: &mut Vec<u8>, start: usize, depth: usize, out: &mut Vec<Vec<u8>>) {
        let len = text.len() - start;
        let children: Vec<u8> = ALPHABET
            .iter()
            .copied()
            .filter(|&b| {
                text.push(b);
                let ok = o.viable(text);
                text.pop();
                ok
            })
            .collect();
        if o.accepts(text) || children.is_empty() || len == depth {
            out.push(text[start..].to_vec());
        }
        if len == depth {
            return;
        }
        for b in children {
            text.push(b);
            go(o, text, start, depth, out);
            text.pop();
        }
    }
    let mut text = prefix.to_vec();
    go(oracle, &mut text, prefix.len(), depth, out);
}

fn common_prefix(xs: &[Vec<u8>]) -> Vec<u8> {
    let Some(first) = xs.first() else { return Vec::new() };
    let mut n = first.len();
    for x in &xs[1..] {
        n = n.min(x.iter().zip(first).take_while(|(a, b)| a == b).count());
    }
    first[..n].to_vec()
}

#[test]
fn forced_bytes_are_the_common_prefix_of_all_continuations() {
    const DEPTH: usize = 4;
    let mut rng = SmallRng::seed_from_u64(0xf0ced);
    let (mut checked, mut nonempty) = (0, 0);
    for case in 0..120 {
        let og = random_grammar(&mut rng);
        let g = build(&og);
        let mut oracle = Oracle::new(&og);
        let mut parser = Parser::new(&g, &|_| None).unwrap();
        let mut prefix: Vec<u8> = Vec::new();
        for _step in 0..6 {
            let key = parser.position_key();
            let quick = parser.forced_bytes_quick(DEPTH).unwrap();
            let forced = parser.forced_bytes(DEPTH).unwrap();
            assert!(forced.next_complete);
            assert_eq!((&quick.bytes, quick.stop), (&forced.bytes, forced.stop), "case {case}");
            assert!(quick.next.iter().all(|b| forced.next.contains(b)), "case {case}");
            // The one-search step answer is the complete one when bytes are
            // forced, else the quick one.
            let step = parser.forced_bytes_step(DEPTH).unwrap();
            assert_eq!(
                &step,
                if forced.bytes.is_empty() { &quick } else { &forced },
                "case {case}"
            );
            assert_eq!(parser.position_key(), key, "case {case}: the parser moved");
            assert_eq!(parser.num_bytes(), prefix.len());
            let mut ls = Vec::new();
            leaves(&mut oracle, &prefix, DEPTH, &mut ls);
            let expected = common_prefix(&ls);
            let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            assert_eq!(
                show(&forced.bytes),
                show(&expected),
                "case {case}, grammar {og:?}, prefix {:?}, stop {:?}",
                show(&prefix),
                forced.stop
            );
            // The stop reason and the next bytes agree with the oracle too.
            let mut after = prefix.clone();
            after.extend_from_slice(&forced.bytes);
            assert_eq!(forced.accepting, oracle.accepts(&after), "case {case}");
            for &b in ALPHABET {
                after.push(b);
                assert_eq!(forced.next.contains(b), oracle.viable(&after), "case {case}: next {b}");
                after.pop();
            }
            assert!(forced.stop != ForcedStop::Limit || forced.bytes.len() == DEPTH);
            assert!(forced.bytes.len() <= DEPTH);
            checked += 1;
            nonempty += usize::from(!forced.bytes.is_empty());
            // Advance by one random allowed byte.
            let next: Vec<u8> = forced.next.iter().collect();
            let choice = if forced.bytes.is_empty() {
                if next.is_empty() {
                    break;
                }
                vec![next[rng.random_range(0..next.len())]]
            } else {
                forced.bytes[..1].to_vec()
            };
            for &b in &choice {
                assert!(parser.try_consume_byte(b).unwrap());
            }
            prefix.extend_from_slice(&choice);
        }
    }
    assert!(checked > 300, "{checked}");
    assert!(nonempty > 50, "{nonempty}");
}

fn literal_grammar(alternatives: &[&str]) -> earley::Grammar {
    let mut b = GrammarBuilder::new();
    let lits: Vec<_> = alternatives.iter().map(|a| b.literal(a)).collect();
    let alts: Vec<Vec<_>> = lits.iter().map(|&l| vec![l]).collect();
    let refs: Vec<&[_]> = alts.iter().map(Vec::as_slice).collect();
    let start = b.choice("start", &refs);
    b.build(start, Limits::default()).unwrap()
}

#[test]
fn eos_is_never_forced_before_the_grammar_accepts() {
    // "ab" is a sentence and "abc" too: forcing stops at "ab" (EOS or "c").
    let g = literal_grammar(&["abc", "ab"]);
    let mut p = Parser::new(&g, &|_| None).unwrap();
    let f = p.forced_bytes(64).unwrap();
    assert_eq!(f.bytes, b"ab");
    assert_eq!(f.stop, ForcedStop::Accepting);
    assert!(f.accepting && f.next.contains(b'c') && f.next.len() == 1);
    // A single sentence: forced to its end, then nothing more.
    let g = literal_grammar(&["hello"]);
    let mut p = Parser::new(&g, &|_| None).unwrap();
    let f = p.forced_bytes(64).unwrap();
    assert_eq!((f.bytes.as_slice(), f.stop), (&b"hello"[..], ForcedStop::Accepting));
    assert!(f.next.is_empty());
    // The limit.
    let f = p.forced_bytes(3).unwrap();
    assert_eq!((f.bytes.as_slice(), f.stop), (&b"hel"[..], ForcedStop::Limit));
    assert!(f.next.contains(b'l'));
}

#[test]
fn whitespace_loops_are_never_forced() {
    // "{" ws* "}" with the whitespace as %ignore, then as an explicit loop.
    let mut b = GrammarBuilder::new();
    let (open, close) = (b.literal("{"), b.literal("}"));
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[open, close]);
    b.add_ignore(RegexAst::Regex("[ ]+".into()));
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    assert_eq!(p.forced_bytes(64).unwrap().bytes, b"{");
    assert!(p.try_consume_byte(b'{').unwrap());
    let f = p.forced_bytes(64).unwrap();
    assert_eq!((f.bytes.len(), f.stop), (0, ForcedStop::Branch));
    for _ in 0..3 {
        assert!(p.try_consume_byte(b' ').unwrap());
        assert!(p.forced_bytes(64).unwrap().bytes.is_empty());
    }

    let mut b = GrammarBuilder::new();
    let sp = b.add_lexeme(LexemeSpec::regex(" "));
    let a = b.literal("a");
    let spaces = b.repeat(sp, 0, None).unwrap();
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[spaces, a]);
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    let f = p.forced_bytes(64).unwrap();
    assert!(f.bytes.is_empty() && f.next.contains(b' ') && f.next.contains(b'a'));
}

#[test]
fn forcing_stops_where_a_special_token_may_come() {
    let mut b = GrammarBuilder::new();
    let x = b.literal("xy");
    let sp = b.special_token(SpecialToken::Name("<|sep|>".into()));
    let z = b.literal("z");
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[x, sp, z]);
    b.add_rule(start, &[x, z]);
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|n| (n == "<|sep|>").then_some(TokenId(7))).unwrap();
    let f = p.forced_bytes(64).unwrap();
    assert_eq!((f.bytes.as_slice(), f.stop), (&b"xy"[..], ForcedStop::Special));
    assert!(f.special && !f.accepting && f.next.contains(b'z'));
}

#[test]
fn classes_of_several_bytes_are_a_branch() {
    // "[ab]" is one lexer class of two bytes: a branch, nothing forced.
    let mut b = GrammarBuilder::new();
    let ab = b.add_lexeme(LexemeSpec::regex("[ab]c"));
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[ab]);
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    let f = p.forced_bytes(64).unwrap();
    assert!(f.bytes.is_empty() && f.next.len() == 2);
    assert!(p.try_consume_byte(b'b').unwrap());
    assert_eq!(p.forced_bytes(64).unwrap().bytes, b"c");
}
