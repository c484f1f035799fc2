//! Hostile inputs to the grammar front-ends, the lexer, the parser and the
//! matcher: each case is refused with an error naming the limit (or the
//! construct) and its location, or answered correctly, never a panic, a
//! hang or a silently different grammar. Cases whose cost used to be the
//! algorithm (not the input) run at their full size here, so a regression
//! shows up as a test that takes minutes; the work of the others is bounded
//! by the limits they set.

use serde_json::json;
use structgen::earley::{Limits, ParseError};
use structgen::lexer::LexerLimits;
use structgen::{
    CompileOptions, ErrorKind, Grammar, GrammarSpec, Location, Matcher, MatcherError, Vocabulary,
};
use toktrie::TokenId;

fn ascii_vocab() -> Vocabulary {
    let tokens: Vec<Vec<u8>> = (0..128u8).map(|b| vec![b]).collect();
    Vocabulary::builder()
        .token_list(&tokens)
        .special(TokenId(128), "<|eos|>")
        .stop_tokens([TokenId(128)])
        .build()
        .unwrap()
}

fn options(parser: Limits) -> CompileOptions {
    CompileOptions::default().with_parser_limits(parser)
}

#[test]
fn nested_counted_repetition_is_a_located_limit() {
    // 77 s and 700 MB for one text of 300 bytes before the width check.
    let e = Grammar::regex("((a*){100}){100}b").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    assert!(e.message().contains("LexerLimits::max_repeat_width"), "{e}");
    assert!(e.message().contains("10201"), "{e}");
    assert_eq!((e.line(), e.column()), (Some(1), Some(1)));
    // The same in a Lark terminal is located at the terminal.
    let e = Grammar::lark("start: \"x\" T\nT: /((a*){100}){100}b/").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    assert_eq!(e.line(), Some(2), "{e}");
    // And as a JSON Schema pattern, at the pointer of the schema holding it.
    let e = Grammar::json_schema(&json!({"type": "string", "pattern": "^((a*){100}){100}b$"}))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    assert_eq!((e.pointer(), e.keyword()), (Some(""), Some("pattern")), "{e}");
    let nested = json!({
        "type": "object",
        "properties": {
            "ok": {"type": "string", "pattern": "^(a?){0,50}$"},
            "items": {"type": "array", "items": {"allOf": [
                {"type": "string", "pattern": "^x"},
                {"pattern": "((a*){100}){100}b"}
            ]}}
        }
    });
    let e = Grammar::json_schema(&nested).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    assert_eq!(e.pointer(), Some("/properties/items/items/allOf/1"), "{e}");
    assert_eq!(e.keyword(), Some("pattern"), "{e}");
    assert!(e.message().contains("LexerLimits::max_repeat_width"), "{e}");
    assert!(e.to_string().starts_with("\"/properties/items/items/allOf/1\": "), "{e}");
    // A pattern property's name pattern, and a request's grammar.
    let keys = json!({"type": "object", "patternProperties": {"^((a*){100}){100}$": {}}});
    let e = Grammar::json_schema(&keys).unwrap_err();
    assert_eq!((e.pointer(), e.keyword()), (Some(""), Some("patternProperties")), "{e}");
    // Raising the limit is the user's choice, and small nests stay fine.
    let g = Grammar::regex("((a*){10}){10}b").unwrap();
    let text: Vec<u8> = std::iter::repeat_n(b'a', 300).chain([b'b']).collect();
    assert!(g.accepts(&text));
    let wide = LexerLimits::default().with_max_repeat_width(20_000);
    let opts = options(Limits::default().with_lexer(wide));
    assert!(Grammar::compile(&GrammarSpec::Regex("((a*){100}){100}b".into()), &opts).is_ok());
}

#[test]
fn legitimate_long_repetitions_are_not_refused() {
    for rx in ["\\d{1,100000}", "[a-z ]{0,5000}", "(\\w+\\s){0,500}", "(ab?){0,1000}"] {
        Grammar::regex(rx).unwrap_or_else(|e| panic!("{rx}: {e}"));
    }
}

#[test]
fn gbnf_rule_order_is_linear() {
    // `r{i}` refers to `r{i+1}`, defined after it: every rule becomes a
    // terminal, one per pass of a fixed-point loop (247 s for 50,000
    // rules), to end in the terminal chain's nesting limit. Now the rule
    // order does not matter and the limit comes at once.
    let n = 50_000;
    let mut forward = String::from("root ::= r0\n");
    let mut lines = Vec::new();
    for i in 0..n {
        lines.push(format!("r{i} ::= r{} \"x\" | \"a\"\n", i + 1));
    }
    lines.push(format!("r{n} ::= \"a\"\n"));
    forward.extend(lines.iter().map(String::as_str));
    let mut backward = String::from("root ::= r0\n");
    backward.extend(lines.iter().rev().map(String::as_str));
    for src in [forward, backward] {
        let e = Grammar::gbnf(&src).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
        assert!(e.message().contains("Limits::max_nesting") && e.line().is_some(), "{e}");
    }
    // A chain within the nesting limit compiles to terminals.
    let mut src = String::from("root ::= r0\n");
    for i in 0..150 {
        src.push_str(&format!("r{i} ::= r{} \"x\" | \"a\"\n", i + 1));
    }
    src.push_str("r150 ::= \"a\"\n");
    assert!(Grammar::gbnf(&src).unwrap().accepts(b"axx"));
}

#[test]
fn long_rule_chains_through_the_root_mask_in_linear_time() {
    // Every rule also refers to `root`: rows of 16,000 items, each
    // completing thousands of symbols (10 s for one mask before the
    // completion index).
    let n = 16_000;
    let mut src = String::from("root ::= r0\n");
    for i in 0..n {
        src.push_str(&format!("r{i} ::= r{} \"x\" | \"(\" root \")\" | \"a\"\n", i + 1));
    }
    src.push_str(&format!("r{n} ::= \"a\"\n"));
    let g = Grammar::gbnf(&src).unwrap();
    let vocab = ascii_vocab();
    let mut m = Matcher::new(&vocab, &g).unwrap();
    let mask = m.compute_mask().unwrap();
    assert!(mask.contains(TokenId(u32::from(b'a'))) && mask.contains(TokenId(u32::from(b'('))));
    m.consume_tokens(&[TokenId(u32::from(b'(')), TokenId(u32::from(b'a'))]).unwrap();
    let mask = m.compute_mask().unwrap();
    assert!(mask.contains(TokenId(u32::from(b'x'))) && mask.contains(TokenId(u32::from(b')'))));
}

#[test]
fn bare_ignore_is_a_located_syntax_error() {
    let e = Grammar::lark("start: \"a\"\n%ignore\n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax, "{e}");
    assert_eq!((e.line(), e.column()), (Some(2), Some(1)), "{e}");
    assert!(e.message().contains("%ignore"), "{e}");
    let e = Grammar::lark("start: \"a\"\n%ignore").unwrap_err();
    assert_eq!(e.line(), Some(2), "{e}");
}

#[test]
fn token_ids_outside_the_vocabulary_are_refused() {
    let vocab = ascii_vocab();
    let grammars = [
        Grammar::lark("start: \"a\" <[99999999]>").unwrap(),
        Grammar::lark("start: <[5-200]>").unwrap(),
        Grammar::gbnf("root ::= \"a\" <[99999999]>").unwrap(),
    ];
    for (src, g) in
        ["lark <[99999999]>", "lark <[5-200]>", "gbnf <[99999999]>"].iter().zip(grammars)
    {
        let e = Matcher::new(&vocab, &g).unwrap_err();
        assert!(
            matches!(&e, MatcherError::Parse(ParseError::UnknownSpecialToken { name })
                if name.contains("129 tokens")),
            "{src}: {e}"
        );
    }
    // In-vocabulary ids, the wildcard and negations are fine.
    for src in ["start: <[5]>", "start: <[*]>", "start: <[^5]>"] {
        let g = Grammar::lark(src).unwrap();
        Matcher::new(&vocab, &g).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
}

#[test]
fn lexer_state_limit_names_the_byte_offset() {
    let lexer = LexerLimits::default().with_max_states(1_000);
    let opts = options(Limits::default().with_lexer(lexer));
    let g = Grammar::compile(&GrammarSpec::Regex("[0-9]{1,100000}".into()), &opts).unwrap();
    let text = vec![b'7'; 5_000];
    let e = g.earley().accepts(&text).unwrap_err();
    let offset = e.offset().unwrap();
    assert!((900..=1_100).contains(&offset), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("LexerLimits::max_states") && msg.contains("1000"), "{msg}");
    assert!(msg.starts_with(&format!("at byte {offset}:")), "{msg}");
    // The default limit takes it whole.
    let g = Grammar::regex("[0-9]{1,100000}").unwrap();
    assert!(g.accepts(&text));
}

#[test]
fn earley_row_limit_names_the_byte_offset() {
    // Each `(` opens a nesting whose row holds every rule of the chain.
    let mut src = String::from("start: r0\n");
    for i in 0..50 {
        src.push_str(&format!("r{i}: r{} \"x\" | \"(\" start \")\" | \"a\"\n", i + 1));
    }
    src.push_str("r50: \"a\"\n");
    let opts = options(Limits::default().with_max_items_per_row(120));
    let g = Grammar::compile(&GrammarSpec::Lark(src), &opts).unwrap();
    let e = g.earley().accepts(b"((((a))))").unwrap_err();
    assert!(matches!(e, ParseError::TooManyItems { limit: 120, .. }), "{e}");
    assert!(e.offset().is_some(), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("Limits::max_items_per_row") && msg.contains("at byte"), "{msg}");
}

/// A matcher's lexer teaches the grammar's kept start only when every
/// answer in it is exact: one that refused a derivative for want of fuel
/// would pass the refusal on to requests that never met it.
#[test]
fn a_lexer_that_refused_never_teaches_the_start() {
    // Words learn many transitions cheaply; the intersection after `;`
    // needs searches the small step fuel cannot pay for.
    let terms: Vec<String> = "abcdefg".chars().map(|c| format!("/.*{c}.*/")).collect();
    let src = format!("start: W \";\" T\nW: /[a-z]{{1,40}}/\nT: {}", terms.join(" & "));
    let lexer = LexerLimits::default().with_step_fuel(2_000);
    let g =
        Grammar::compile(&GrammarSpec::Lark(src), &options(Limits::default().with_lexer(lexer)))
            .unwrap();
    let vocab = ascii_vocab();
    let walk = |text: &[u8]| {
        let mut m = Matcher::new(&vocab, &g).unwrap();
        for &b in text {
            m.compute_mask().unwrap();
            m.consume_token(TokenId(u32::from(b))).unwrap();
        }
        let _ = m.compute_mask();
        m
    };
    let kept = g.start_transitions();
    let m = walk(&[b'x'; 30]);
    assert_eq!(m.fuel_refusals(), 0);
    assert!(m.lexer().num_known_transitions() > kept + kept / 4 + 16);
    drop(m);
    let learned = g.start_transitions();
    assert!(learned > kept, "an exact lexer that learned teaches the start");

    let mut text = vec![b'y'; 40];
    text.push(b';');
    let m = walk(&text);
    assert!(m.fuel_refusals() > 0, "the mask after `;` refuses");
    assert!(m.lexer().num_known_transitions() > learned + learned / 4 + 16);
    drop(m);
    assert_eq!(g.start_transitions(), learned, "a lexer that refused teaches nothing");
}

#[test]
fn fuel_refusals_are_counted_and_can_be_errors() {
    // An intersection of seven "contains" patterns: proving a derivative
    // non-empty needs a search that the small fuel below cannot pay for.
    let terms: Vec<String> = "abcdefg".chars().map(|c| format!("/.*{c}.*/")).collect();
    let src = format!("start: T\nT: {}", terms.join(" & "));
    let lexer = LexerLimits::default().with_step_fuel(2_000);
    let opts = options(Limits::default().with_lexer(lexer));
    let g = Grammar::compile(&GrammarSpec::Lark(src), &opts).unwrap();
    let vocab = ascii_vocab();
    let tokens: Vec<TokenId> = b"abcdefg".iter().map(|&b| TokenId(u32::from(b))).collect();

    // By default: a smaller mask, and a count the caller can read.
    let mut m = Matcher::new(&vocab, &g).unwrap();
    let mut refused = false;
    for &t in &tokens {
        let _ = m.compute_mask();
        if m.consume_token(t).is_err() {
            refused = true;
            break;
        }
    }
    assert!(refused, "the small step fuel must refuse part of `abcdefg`");
    assert!(m.fuel_refusals() > 0, "a rejection of valid text must come with refusals");

    // As errors: the step that refused fails, naming the fuel.
    let mut m = Matcher::new(&vocab, &g).unwrap().with_refusals_as_errors(true);
    assert!(m.refusals_as_errors());
    let mut err = None;
    for &t in &tokens {
        if let Err(e) = m.compute_mask().map(|_| ()).and_then(|()| m.consume_token(t)) {
            err = Some(e);
            break;
        }
    }
    let e = err.expect("a refusal");
    assert!(matches!(e, MatcherError::FuelRefused { refusals, .. } if refusals > 0), "{e}");
    assert!(e.to_string().contains("LexerLimits::step_fuel"), "{e}");
    // Sticky, like every matcher error.
    assert!(m.compute_mask().is_err());
}

#[test]
fn regex_source_size_is_limited() {
    let front = structgen::grammar::Limits::default().with_max_source_bytes(1 << 10);
    let opts = CompileOptions::default().with_front_end_limits(front);
    let big = "a".repeat(2_000);
    for spec in [
        GrammarSpec::Regex(big.clone()),
        GrammarSpec::Lark(format!("start: \"{big}\"")),
        GrammarSpec::Gbnf(format!("root ::= \"{big}\"")),
    ] {
        let e = Grammar::compile(&spec, &opts).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Limit, "{spec:?}");
        assert!(e.message().contains("max_source_bytes"), "{e}");
    }
}

#[test]
fn limit_errors_carry_their_location_kind() {
    let e = Grammar::regex("((a?){200}){200}").unwrap_err();
    assert!(matches!(e.location(), Some(Location::Text { offset: 0, .. })), "{e}");
}
