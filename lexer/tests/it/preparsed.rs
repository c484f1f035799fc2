//! `Preparsed`: a lexer (or a one-off regex) that starts from a larger set
//! of parsed pattern strings matches exactly what one parsing them afresh
//! matches.

use std::sync::Arc;

use lexer::{
    LexemeId, LexemeSet, LexemeSpec, Lexer, LexerErrorKind, LexerLimits, LexerSpec, PREPARSED,
    Preparsed, RegexAst,
};

const DATE: &str = "[0-9]{4}-(0[1-9]|1[0-2])";
const WORD: &str = "[a-c]+x";

fn spec(set: Option<&Arc<Preparsed>>) -> LexerSpec {
    let re = |p: &str| RegexAst::Regex(p.to_owned());
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("DATE", RegexAst::Concat(vec![re(DATE), re("(?s:.)")])));
    spec.add(LexemeSpec::new("WORD", RegexAst::Or(vec![re(WORD), re("true|false")])));
    if let Some(set) = set {
        spec.set_preparsed(set.clone());
    }
    spec
}

fn both() -> LexemeSet {
    let mut s = LexemeSet::default();
    s.insert(LexemeId(0));
    s.insert(LexemeId(1));
    s
}

#[test]
fn a_set_holds_the_common_patterns_and_its_own() {
    let set = Preparsed::new(&[DATE, WORD, "(?s:.*)"]);
    assert_eq!(set.len(), PREPARSED.len() + 2, "a pattern already common counts once");
    assert!(set.contains(DATE) && set.contains(WORD) && set.contains("true|false"));
    assert!(!Preparsed::common().contains(DATE));
    // A pattern that does not parse is left out; the lexeme that uses it
    // fails in its own lexer, with its name.
    let broken = Arc::new(Preparsed::new(&["(unclosed"]));
    assert!(!broken.contains("(unclosed"));
    let mut spec = LexerSpec::new();
    spec.add(LexemeSpec::new("BROKEN", RegexAst::Regex("(unclosed".to_owned())));
    spec.set_preparsed(broken);
    let err = Lexer::new(&spec, LexerLimits::default()).unwrap_err();
    assert!(matches!(err.kind(), LexerErrorKind::Regex { name, .. } if name == "BROKEN"), "{err}");
}

#[test]
fn a_lexer_from_a_larger_set_lexes_as_a_fresh_one() {
    let set = Arc::new(Preparsed::new(&[DATE, WORD]));
    let mut fresh = Lexer::new(&spec(None), LexerLimits::default()).unwrap();
    let mut from_set = Lexer::new(&spec(Some(&set)), LexerLimits::default()).unwrap();
    let words: [&[u8]; 9] =
        [b"", b"2024-0", b"2024-12", b"2024-12Z", b"2024-13", b"abcx", b"abc", b"tru", b"false"];
    for w in words {
        let (a, b) = (fresh.start_state(&both()), from_set.start_state(&both()));
        let (a, b) = (fresh.next_bytes(a, w), from_set.next_bytes(b, w));
        let text = String::from_utf8_lossy(w);
        assert_eq!(a.is_dead(), b.is_dead(), "{text}");
        let accepted = |lx: &Lexer, s| lx.accepting(s).map(|id| lx.accept_set(id).to_vec());
        assert_eq!(accepted(&fresh, a), accepted(&from_set, b), "{text}");
        assert_eq!(fresh.state_key(a, 4096), from_set.state_key(b, 4096), "{text}");
    }
}

#[test]
fn a_one_off_regex_from_a_larger_set_matches_as_a_fresh_one() {
    let set = Arc::new(Preparsed::new(&[DATE]));
    let ast = RegexAst::And(vec![
        RegexAst::Regex(DATE.to_owned()),
        RegexAst::Not(Box::new(RegexAst::Regex("2024-.*".to_owned()))),
    ]);
    let (b, e) = set.build_regex(&ast).unwrap();
    let mut from_set = b.into_regex(e);
    let (b, e) = lexer::build_regex(&ast).unwrap();
    let mut fresh = b.into_regex(e);
    for w in ["2023-01", "2024-01", "2023-13", "", "1999-12"] {
        assert_eq!(from_set.is_match(w), fresh.is_match(w), "{w}");
    }
    assert!(from_set.is_match("2023-01") && !from_set.is_match("2024-01"));
}
