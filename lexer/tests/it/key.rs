//! `Lexer::state_key`: a name for a state's content that two lexers (clones
//! of one, or of other grammars) agree on, whatever each learned.

use lexer::{LexemeId, LexemeSet, LexemeSpec, Lexer, LexerLimits, LexerSpec, RegexAst};

/// Free text up to `<tool>` (as the structural tags' free text is built)
/// and numbers.
fn lexer() -> Lexer {
    let re = |p: &str| RegexAst::Regex(p.to_owned());
    let text = RegexAst::And(vec![re("(?s:.+)"), RegexAst::Not(Box::new(re("(?s:.*<tool>.*)")))]);
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("TEXT", text));
    spec.add(LexemeSpec::regex("[0-9]+"));
    Lexer::new(&spec, LexerLimits::default()).unwrap()
}

fn all(n: u32) -> LexemeSet {
    let mut s = LexemeSet::default();
    (0..n).for_each(|i| s.insert(LexemeId(i)));
    s
}

#[test]
fn clones_name_the_same_content_alike() {
    let mut a = lexer();
    let mut b = a.clone();
    let (sa, sb) = (a.start_state(&all(2)), b.start_state(&all(2)));
    // `b` learns other states first, so it numbers the next ones differently.
    b.next(sb, b'7');
    let ta = a.next_bytes(sa, b"hello <to");
    let tb = b.next_bytes(sb, b"hi <to");
    assert_ne!(a.state_index(ta), b.state_index(tb), "the clones number states differently");
    let key = a.state_key(ta, 2048).expect("a small state has a key");
    assert_eq!(b.state_key(tb, 2048).as_deref(), Some(key.as_str()));
    // Other content, another key.
    let ua = a.next_bytes(sa, b"hello <t");
    assert_ne!(a.state_key(ua, 2048).unwrap(), key);
    assert_ne!(a.state_key(sa, 2048).unwrap(), key);
}

#[test]
fn no_key_for_the_dead_state_or_past_the_node_budget() {
    let mut a = lexer();
    let s = a.start_state(&all(2));
    let dead = a.next_bytes(s, b"x<tool>y");
    assert!(dead.is_dead());
    assert_eq!(a.state_key(dead, 2048), None);
    assert!(a.state_key(s, 2048).is_some());
    assert_eq!(a.state_key(s, 1), None);
}

#[test]
fn lexers_of_other_grammars_name_the_same_content_alike() {
    let re = |p: &str| RegexAst::Regex(p.to_owned());
    let text =
        || RegexAst::And(vec![re("(?s:.+)"), RegexAst::Not(Box::new(re("(?s:.*<tool>.*)")))]);
    // The same free text, as lexeme 0 of one grammar and lexeme 2 of another.
    let mut a = lexer();
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::regex("true"));
    spec.add(LexemeSpec::regex("[a-z]+"));
    spec.add(LexemeSpec::new("TEXT", text()));
    let mut b = Lexer::new(&spec, LexerLimits::default()).unwrap();
    let only = |id: u32| {
        let mut s = LexemeSet::default();
        s.insert(LexemeId(id));
        s
    };
    let (sa, sb) = (a.start_state(&only(0)), b.start_state(&only(2)));
    let ta = a.next_bytes(sa, b"so <to");
    let tb = b.next_bytes(sb, b"and <to");
    let key = a.state_key(ta, 2048).unwrap();
    assert_eq!(b.state_key(tb, 2048).as_deref(), Some(key.as_str()));
    // Both lexemes live: the lines are sorted, so the order of ids is moot.
    let mut c_spec = LexerSpec::new();
    c_spec.add(LexemeSpec::regex("[0-9]+"));
    c_spec.add(LexemeSpec::new("TEXT", text()));
    let mut c = Lexer::new(&c_spec, LexerLimits::default()).unwrap();
    let sa = a.start_state(&all(2));
    let sc = c.start_state(&all(2));
    assert_eq!(a.state_key(sa, 2048), c.state_key(sc, 2048));
    // A lazy lexeme of the same language steps differently (it ends at its
    // first match): another key.
    let mut lazy = LexerSpec::new();
    let mut t = LexemeSpec::new("TEXT", text());
    t.lazy = true;
    lazy.add(t);
    let mut d = Lexer::new(&lazy, LexerLimits::default()).unwrap();
    let sd = d.start_state(&only(0));
    let td = d.next_bytes(sd, b"so <to");
    assert_ne!(d.state_key(td, 2048).unwrap(), key);
}
