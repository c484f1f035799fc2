//! The parser's side of the lexeme options: hidden stop text (sealed
//! positions, re-lexing when what follows starts with it), lexemes an EOS
//! token may end, token limits applied by the caller, and `%ignore` once
//! per boundary.

use earley::{GrammarBuilder, Limits, MaxTokensOutcome, Parser};
use lexer::{LexemeSpec, RegexAst};

fn push(p: &mut Parser, text: &[u8]) -> bool {
    text.iter().all(|&b| p.try_consume_byte(b).unwrap())
}

/// `start: a tail` with `a[stop="--"]: /[a-z]*/`.
fn stop_grammar(tail: &str) -> earley::Grammar {
    let mut b = GrammarBuilder::new();
    let a = b.add_lexeme(LexemeSpec::regex("[a-z]*").with_stop(RegexAst::Literal("--".into())));
    let t = b.literal(tail);
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[a, t]);
    b.build(start, Limits::default()).unwrap()
}

#[test]
fn hidden_stop_seals_until_taken() {
    let g = stop_grammar("!");
    let mut p = Parser::new(&g, &|_| None).unwrap();
    assert!(push(&mut p, b"ab--"));
    assert_eq!(p.sealed_hidden(), 2);
    // Sealed: no byte goes on past the stop text.
    assert!(!p.try_consume_byte(b'!').unwrap());
    assert_eq!(p.take_hidden(b"ab--"), 2);
    assert_eq!(p.sealed_hidden(), 0);
    assert!(push(&mut p, b"!"));
    assert!(p.is_accepting().unwrap());
    // Popping the bytes and pushing them again seals again.
    p.pop_bytes(5);
    p.begin_step();
    assert!(push(&mut p, b"ab--"));
    assert_eq!(p.sealed_hidden(), 2);
}

#[test]
fn hidden_stop_that_what_follows_starts_with_is_lexed_again() {
    let g = stop_grammar("--!");
    let mut p = Parser::new(&g, &|_| None).unwrap();
    // `--` ends `a` and is the start of `--!`: nothing hidden, and the
    // text goes on in the same push.
    assert!(push(&mut p, b"ab--!"));
    assert_eq!(p.sealed_hidden(), 0);
    assert_eq!(p.take_hidden(b""), 0);
    assert!(p.is_accepting().unwrap());
}

#[test]
fn eos_ends_a_lexeme_and_the_grammar_goes_on() {
    let mut b = GrammarBuilder::new();
    let a = b.add_lexeme(LexemeSpec::regex("[a-z]+").ending_at_eos());
    let x = b.literal("x");
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[a, x]);
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    assert!(!p.eos_ends_lexeme());
    assert!(!p.try_consume_eos_end().unwrap());
    assert!(push(&mut p, b"ab"));
    assert!(p.eos_ends_lexeme());
    assert!(p.try_consume_eos_end().unwrap());
    // The lexeme ended: `x` must follow, not more letters.
    assert!(!p.try_consume_byte(b'c').unwrap());
    assert!(push(&mut p, b"x"));
    assert!(p.is_accepting().unwrap());
}

#[test]
fn max_tokens_limits_end_or_drop_lexemes() {
    // start: (A | B) "!" with A = [a-z]+ limited to 2 tokens, B = [a-z]+1 free.
    let mut b = GrammarBuilder::new();
    let a = b.add_lexeme(LexemeSpec::regex("[a-z]+").with_max_tokens(2));
    let bb = b.add_lexeme(LexemeSpec::regex("[a-z]+1"));
    let bang = b.literal("!");
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[a, bang]);
    b.add_rule(start, &[bb, bang]);
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    assert!(push(&mut p, b"ab"));
    assert!(p.last_byte_continued_lexeme());
    assert_eq!(p.max_tokens_outcome(1), MaxTokensOutcome::Unchanged);
    // At its limit A is dropped; B goes on.
    assert_eq!(p.apply_max_tokens(2).unwrap(), MaxTokensOutcome::Limited);
    assert!(!p.try_consume_byte(b'!').unwrap());
    assert!(push(&mut p, b"c1!"));
    assert!(p.is_accepting().unwrap());

    // A alone at its limit: it ends where it matches.
    let mut b = GrammarBuilder::new();
    let a = b.add_lexeme(LexemeSpec::regex("[a-z]+").with_max_tokens(2));
    let bang = b.literal("!");
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[a, bang]);
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    assert!(push(&mut p, b"ab"));
    assert_eq!(p.apply_max_tokens(2).unwrap(), MaxTokensOutcome::Ended);
    assert_eq!(p.lexeme_row(), None);
    assert!(!p.try_consume_byte(b'c').unwrap());
    assert!(push(&mut p, b"!"));

    // Not matching at its limit: nothing changes, the caller rejects.
    let mut b = GrammarBuilder::new();
    let a = b.add_lexeme(LexemeSpec::regex("[a-z]+;").with_max_tokens(1));
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[a]);
    let g = b.build(start, Limits::default()).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    assert!(push(&mut p, b"ab"));
    assert_eq!(p.apply_max_tokens(1).unwrap(), MaxTokensOutcome::CannotEnd);
    assert!(push(&mut p, b";"));
}

#[test]
fn ignore_once_bounds_the_skipped_span() {
    for once in [false, true] {
        let mut b = GrammarBuilder::new();
        let w = b.add_lexeme(LexemeSpec::regex("[a-z]+"));
        let ws = b.repeat(w, 1, None).unwrap();
        b.add_ignore(RegexAst::Regex("[ ]{1,2}".into()));
        b.ignore_once(once);
        let g = b.build(ws, Limits::default()).unwrap();
        assert!(g.accepts(b"ab  cd").unwrap());
        assert_eq!(g.accepts(b"ab   cd").unwrap(), !once);
    }
}
