//! Property tests: on random small grammars and a small vocabulary, the mask
//! computed by the trie walk over the parser equals the naive oracle's set
//! {t : the oracle accepts every byte of prefix + bytes(t)}, at every step;
//! acceptance (EOS) agrees too.

use earley::{GrammarBuilder, Limits, Parser};
use lexer::LexemeSpec;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::{TokTrie, TokenSet};

use crate::oracle::{OGrammar, OLexeme, Oracle, Sym};

const PATTERNS: &[(&str, bool)] = &[
    ("a", false),
    ("b", false),
    ("ab", false),
    ("ba", false),
    ("abc", false),
    ("a+", false),
    ("[ab]+", false),
    ("b*", false),
    ("c[ab]*c", false),
    ("(ab)+", false),
    ("[abc]", false),
    ("a*c", true),
    ("[ab]*c", true),
    ("c", false),
    ("ca?", false),
];

pub(crate) fn random_grammar(rng: &mut SmallRng) -> OGrammar {
    let num_lexemes = rng.random_range(1..=5);
    let lexemes: Vec<OLexeme> = (0..num_lexemes)
        .map(|_| {
            let (p, lazy) = PATTERNS[rng.random_range(0..PATTERNS.len())];
            OLexeme { pattern: p.to_string(), lazy }
        })
        .collect();
    let num_nonterminals = rng.random_range(1..=3);
    let mut rules = Vec::new();
    for n in 0..num_nonterminals {
        let num_rules = rng.random_range(1..=3);
        for k in 0..num_rules {
            let len = rng.random_range(0..=3);
            let mut rhs = Vec::new();
            for _ in 0..len {
                if rng.random_bool(0.3) {
                    rhs.push(Sym::N(rng.random_range(0..num_nonterminals)));
                } else {
                    rhs.push(Sym::T(rng.random_range(0..num_lexemes)));
                }
            }
            // keep every nonterminal productive: its first rule uses terminals only
            if k == 0 {
                rhs.retain(|s| matches!(s, Sym::T(_)));
            }
            rules.push((n, rhs));
        }
    }
    let ignore = rng.random_bool(0.3).then(|| " +".to_string());
    OGrammar { lexemes, num_nonterminals, rules, ignore }
}

pub(crate) fn build(g: &OGrammar) -> earley::Grammar {
    let mut b = GrammarBuilder::new();
    let lex: Vec<_> = g
        .lexemes
        .iter()
        .map(|l| {
            let spec = LexemeSpec::regex(&l.pattern);
            b.add_lexeme(if l.lazy { spec.lazy() } else { spec })
        })
        .collect();
    let nts: Vec<_> =
        (0..g.num_nonterminals).map(|i| b.add_nonterminal(&format!("n{i}"))).collect();
    for (lhs, rhs) in &g.rules {
        let rhs: Vec<_> = rhs
            .iter()
            .map(|s| match *s {
                Sym::T(t) => lex[t],
                Sym::N(n) => nts[n],
            })
            .collect();
        b.add_rule(nts[*lhs], &rhs);
    }
    if let Some(ig) = &g.ignore {
        b.add_ignore(lexer::RegexAst::Regex(ig.clone()));
    }
    b.build(nts[0], Limits::default()).unwrap()
}

fn vocabulary() -> Vec<Vec<u8>> {
    let alphabet = [b'a', b'b', b'c', b' '];
    let mut v: Vec<Vec<u8>> = Vec::new();
    for &x in &alphabet {
        v.push(vec![x]);
        for &y in &alphabet {
            v.push(vec![x, y]);
            for &z in &alphabet {
                v.push(vec![x, y, z]);
            }
        }
    }
    v.extend([b"abab".to_vec(), b"cabc".to_vec(), b"aaaa".to_vec(), b"  ab".to_vec()]);
    v
}

#[test]
fn masks_equal_the_naive_oracle() {
    run_against_the_oracle(false);
}

/// `Parser::close_final_lexeme` before every mask (as the matcher does):
/// the masks and acceptance are still the oracle's, and literals do get
/// closed.
#[test]
fn closing_final_lexemes_keeps_the_oracles_answers() {
    let closed = run_against_the_oracle(true);
    assert!(closed > 50, "{closed} lexemes closed");
}

/// The oracle comparison; with `close`, final lexemes are closed before
/// each mask. Returns how many were.
fn run_against_the_oracle(close: bool) -> usize {
    let mut closed = 0;
    let vocab = vocabulary();
    let trie = TokTrie::from_token_bytes(&vocab).unwrap();
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let mut checked_masks = 0;
    let mut nonempty = 0;
    for case in 0..150 {
        let og = random_grammar(&mut rng);
        let g = build(&og);
        let mut oracle = Oracle::new(&og);
        let mut parser = Parser::new(&g, &|_| None).unwrap();
        let mut prefix: Vec<u8> = Vec::new();
        for _step in 0..8 {
            if close && parser.close_final_lexeme() {
                closed += 1;
            }
            let mut mask = TokenSet::new(vocab.len());
            trie.compute_mask(&mut parser, &mut mask);
            parser.check().unwrap();
            // The walk that keeps the parser's frames itself: the same mask.
            let mut by_state = TokenSet::new(vocab.len());
            trie.compute_mask_by_state(&mut parser, &mut by_state);
            parser.check().unwrap();
            assert_eq!(by_state, mask, "case {case}: walk by state");
            let mut expected = TokenSet::new(vocab.len());
            for (i, t) in vocab.iter().enumerate() {
                let mut text = prefix.clone();
                text.extend_from_slice(t);
                if oracle.viable(&text) {
                    expected.insert(toktrie::TokenId(i as u32));
                }
            }
            let show = |m: &TokenSet| -> Vec<String> {
                m.iter().map(|t| String::from_utf8_lossy(&vocab[t.index()]).into_owned()).collect()
            };
            assert_eq!(
                show(&mask),
                show(&expected),
                "case {case}, grammar {og:?}, prefix {:?}",
                String::from_utf8_lossy(&prefix)
            );
            assert_eq!(
                parser.is_accepting().unwrap(),
                oracle.accepts(&prefix),
                "accepting: case {case}, grammar {og:?}, prefix {:?}",
                String::from_utf8_lossy(&prefix)
            );
            assert!(mask.is_empty() || parser.can_extend(), "case {case}: can_extend");
            checked_masks += 1;
            let allowed: Vec<_> = mask.iter().collect();
            if allowed.is_empty() {
                break;
            }
            nonempty += 1;
            let t = allowed[rng.random_range(0..allowed.len())];
            for &b in &vocab[t.index()] {
                assert!(parser.try_consume_byte(b).unwrap());
            }
            prefix.extend_from_slice(&vocab[t.index()]);
        }
    }
    assert!(checked_masks > 300, "{checked_masks}");
    assert!(nonempty > 200, "{nonempty}");
    closed
}
