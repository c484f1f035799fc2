//! The grammar-construction API: validation errors, desugaring, limits.

use earley::{GrammarBuilder, GrammarError, Limits, SpecialToken};
use lexer::{LexemeSpec, RegexAst};

#[test]
fn undefined_nonterminal_is_named() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let value = b.add_nonterminal("value");
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[a, value]);
    let err = b.build(start, Limits::default()).unwrap_err();
    assert_eq!(err, GrammarError::Undefined { name: "value".into() });
    assert!(err.to_string().contains("value"));
}

#[test]
fn rule_for_a_terminal_is_an_error() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    b.add_rule(a, &[a]);
    let err = b.build(a, Limits::default()).unwrap_err();
    assert!(matches!(err, GrammarError::NotANonterminal { ref name } if name == "\"a\""));
}

#[test]
fn empty_language_is_an_error() {
    let mut b = GrammarBuilder::new();
    let s = b.add_nonterminal("s");
    let a = b.literal("a");
    b.add_rule(s, &[a, s]); // no base case
    let err = b.build(s, Limits::default()).unwrap_err();
    assert_eq!(err, GrammarError::EmptyLanguage { start: "s".into() });

    let mut b = GrammarBuilder::new();
    let never = b.add_lexeme(LexemeSpec::new("NEVER", RegexAst::NoMatch));
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[never]);
    assert!(matches!(b.build(s, Limits::default()), Err(GrammarError::EmptyLanguage { .. })));
}

#[test]
fn unknown_symbol_and_bad_regex_are_errors() {
    let mut other = GrammarBuilder::new();
    for i in 0..5 {
        other.add_nonterminal(&format!("n{i}"));
    }
    let foreign = other.add_nonterminal("foreign");
    let mut b = GrammarBuilder::new();
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[foreign]);
    assert!(matches!(b.build(s, Limits::default()), Err(GrammarError::UnknownSymbol { .. })));

    let mut b = GrammarBuilder::new();
    let bad = b.add_lexeme(LexemeSpec::regex("[a-"));
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[bad]);
    let err = b.build(s, Limits::default()).unwrap_err();
    assert!(matches!(err, GrammarError::Lexer(_)));
    assert!(err.to_string().contains("/[a-/"), "{err}");
}

#[test]
fn unproductive_and_unreachable_rules_are_pruned() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let loop_ = b.add_nonterminal("loop");
    b.add_rule(loop_, &[a, loop_]);
    let unused = b.add_nonterminal("unused");
    b.add_rule(unused, &[a]);
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[a]);
    b.add_rule(s, &[loop_]);
    let g = b.build(s, Limits::default()).unwrap();
    assert_eq!(g.num_rules(), 2); // s → a, and the synthetic start
    assert!(g.accepts(b"a").unwrap());
    assert!(!g.accepts(b"aa").unwrap());
}

#[test]
fn huge_repeat_is_logarithmic_and_exact() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let sep = b.literal(",");
    let item = b.add_nonterminal("item");
    b.add_rule(item, &[a, sep]);
    let r = b.repeat(item, 0, Some(100_000)).unwrap();
    let g = b.build(r, Limits::default()).unwrap();
    assert!(g.num_rules() < 200, "{} rules", g.num_rules());
    assert!(g.accepts(b"").unwrap());
    assert!(g.accepts(b"a,a,a,").unwrap());
    assert!(!g.accepts(b"a,a").unwrap());

    let mut pairs = vec![(0, 0), (0, 1), (2, 2), (1, 5), (3, 6), (0, 7), (5, 13)];
    // Every bound up to 40 (all bit patterns of the at-most part).
    pairs.extend((0..=40).map(|max| (0, max)));
    pairs.extend((0..=20).map(|max| (3, 3 + max)));
    for (min, max) in pairs {
        let mut b = GrammarBuilder::new();
        let a = b.literal("a");
        let sep = b.literal(",");
        let item = b.add_nonterminal("item");
        b.add_rule(item, &[a, sep]);
        let r = b.repeat(item, min, Some(max)).unwrap();
        let g = b.build(r, Limits::default()).unwrap();
        for k in 0..=max + 3 {
            let text = "a,".repeat(k as usize);
            assert_eq!(
                g.accepts(text.as_bytes()).unwrap(),
                (min..=max).contains(&k),
                "{{{min},{max}}} on {k}"
            );
        }
    }
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    assert!(matches!(b.repeat(a, 3, Some(2)), Err(GrammarError::BadRepeat { .. })));
}

/// A bounded repetition of a lexeme has one parse per count, with the large
/// chunks first, so an Earley row stays small however many copies came
/// before (the balanced split it replaced had rows growing with the count:
/// seconds per mask after a few hundred copies of `"a"{0,100000}`).
#[test]
fn bounded_repeat_rows_stay_small() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let r = b.repeat(a, 0, Some(100_000)).unwrap();
    let end = b.literal("b");
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[r, end]);
    let g = b.build(s, Limits::default()).unwrap();
    let mut p = earley::Parser::new(&g, &|_| None).unwrap();
    let mut most = 0;
    for i in 0..5_000 {
        let before = p.stats().items_computed;
        assert!(p.try_consume_byte(b'a').unwrap(), "a #{i}");
        most = most.max(p.stats().items_computed - before);
    }
    // log2(100000) is 17: rows of O(17²) items, not O(5000).
    assert!(most < 400, "{most} items in one row");
    assert!(p.try_consume_byte(b'b').unwrap());
    assert!(p.is_accepting().unwrap());
}

#[test]
fn unbounded_repeat_and_optional() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let sp = b.literal(" ");
    let item = b.add_nonterminal("item");
    b.add_rule(item, &[a, sp]);
    let r = b.repeat(item, 2, None).unwrap();
    let opt = b.optional(a);
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[r, opt]);
    let g = b.build(s, Limits::default()).unwrap();
    assert!(!g.accepts(b"a ").unwrap());
    assert!(g.accepts(b"a a ").unwrap());
    assert!(g.accepts(b"a a a a a").unwrap());
}

#[test]
fn nullable_lexeme_becomes_optional() {
    let mut b = GrammarBuilder::new();
    let x = b.literal("x");
    let digits = b.add_lexeme(LexemeSpec::regex("[0-9]*"));
    let y = b.literal("y");
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[x, digits, y]);
    let g = b.build(s, Limits::default()).unwrap();
    assert!(g.accepts(b"xy").unwrap());
    assert!(g.accepts(b"x123y").unwrap());
    assert!(!g.accepts(b"x12a").unwrap());
}

#[test]
fn too_many_rules_is_an_error() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let s = b.add_nonterminal("s");
    for _ in 0..100 {
        b.add_rule(s, &[a]);
    }
    let mut limits = Limits::default();
    limits.max_rules = 50;
    assert_eq!(
        b.build(s, limits).unwrap_err(),
        GrammarError::TooLarge { what: "rules", limit: 50 }
    );
}

#[test]
fn special_tokens_are_terminals() {
    let mut b = GrammarBuilder::new();
    let tag = b.special_token(SpecialToken::Name("<|tag|>".into()));
    let ids = b.special_token(SpecialToken::Ids(vec![(10, 12)]));
    let word = b.add_lexeme(LexemeSpec::regex("[a-z]+"));
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[word, tag, ids]);
    let g = b.build(s, Limits::default()).unwrap();
    assert_eq!(g.special_tokens().len(), 2);
    let unknown = earley::Parser::new(&g, &|_| None).unwrap_err();
    assert!(unknown.to_string().contains("<|tag|>"));
    let mut p =
        earley::Parser::new(&g, &|n| (n == "<|tag|>").then_some(toktrie::TokenId(7))).unwrap();
    for &c in b"abc" {
        assert!(p.try_consume_byte(c).unwrap());
    }
    assert!(!p.special_token_allowed(toktrie::TokenId(11)));
    assert!(p.special_token_allowed(toktrie::TokenId(7)));
    assert!(p.try_consume_special(toktrie::TokenId(7)).unwrap());
    assert!(!p.try_consume_byte(b'a').unwrap());
    assert!(!p.is_accepting().unwrap());
    assert!(p.try_consume_special(toktrie::TokenId(12)).unwrap());
    assert!(p.is_accepting().unwrap());
}

#[test]
fn right_recursion_hits_the_row_limit_with_an_error() {
    let mut b = GrammarBuilder::new();
    let a = b.literal("a");
    let sp = b.literal(" ");
    let s = b.add_nonterminal("s");
    b.add_rule(s, &[a, sp, s]);
    b.add_rule(s, &[a]);
    let mut limits = Limits::default();
    limits.max_items_per_row = 200;
    let g = b.build(s, limits).unwrap();
    let mut p = earley::Parser::new(&g, &|_| None).unwrap();
    let mut err = None;
    for &c in "a ".repeat(1000).as_bytes() {
        match p.try_consume_byte(c) {
            Ok(true) => {}
            Ok(false) => panic!("rejected"),
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let err = err.expect("the item limit must be hit");
    assert!(matches!(err, earley::ParseError::TooManyItems { limit: 200, .. }), "{err}");
    // sticky
    assert!(p.try_consume_byte(b'a').is_err());
    assert!(p.is_accepting().is_err());
}

#[test]
fn huge_alternation_and_deep_nesting_compile() {
    let mut b = GrammarBuilder::new();
    let words: Vec<_> = (0..5000).map(|i| b.literal(&format!("w{i}"))).collect();
    let alts: Vec<Vec<_>> = words.iter().map(|&w| vec![w]).collect();
    let refs: Vec<&[_]> = alts.iter().map(Vec::as_slice).collect();
    let word = b.choice("word", &refs);
    // 2000 nested nonterminals
    let mut inner = word;
    for i in 0..2000 {
        let n = b.add_nonterminal(&format!("n{i}"));
        b.add_rule(n, &[inner]);
        inner = n;
    }
    let g = b.build(inner, Limits::default()).unwrap();
    assert!(g.accepts(b"w4321").unwrap());
    assert!(!g.accepts(b"w5000").unwrap());
}
