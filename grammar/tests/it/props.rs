//! Property tests: random token soup never panics the parsers, every error
//! has a location inside the text, and printing a parsed grammar gives text
//! that parses back to the same grammar.

use grammar::Config;
use proptest::prelude::*;

/// Pieces of Lark syntax, valid and not.
const LARK_PIECES: &[&str] = &[
    "start",
    ": ",
    "x",
    "X",
    "_y",
    "?",
    "!",
    "\"a\"",
    "\"\\n\"",
    "\"b\"i",
    "/[a-z]+/",
    "/a/s",
    "|",
    "(",
    ")",
    "[",
    "]",
    "*",
    "+",
    "{2}",
    "{1,3}",
    "{,2}",
    "~",
    "~ 2",
    "..",
    "&",
    "-> z",
    "<|end|>",
    "<[1-3]>",
    "%ignore ",
    "%import common.WS",
    "%json {}",
    "\n",
    "\n  | ",
    " ",
    "// c\n",
    "# c\n",
    ".2",
    "[lazy]",
    "{p}",
    "@g",
    ",",
    "\"",
    "/",
    "%",
    "é",
    "\t",
];

const GBNF_PIECES: &[&str] = &[
    "root", " ::= ", "x", "a-b", "\"a\"", "\"\\n\"", "[a-z]", "[^\\]]", ".", "|", "(", ")", "*",
    "+", "?", "{2}", "{1,}", "{0,3}", "<[5]>", "<t>", "!", "\n", " ", "# c\n", "\"", "[", "\\",
    "::=", "é",
];

fn soup(pieces: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(pieces), 0..40).prop_map(|v| v.concat())
}

/// Alternatives of sequences of `atoms` with repetition operators.
fn body(atoms: &'static [&'static str]) -> impl Strategy<Value = String> {
    let op = prop::sample::select(&["", "", "*", "+", "?", "{2}", "{1,3}", "~ 2..3"][..]);
    let item = (prop::sample::select(atoms), op).prop_map(|(a, o)| format!("{a}{o}"));
    let seq = prop::collection::vec(item, 0..4).prop_map(|v| v.join(" "));
    prop::collection::vec(seq, 1..4).prop_map(|v| v.join(" | "))
}

/// A plausible Lark grammar: a start rule, a terminal and a rule.
fn lark_grammar() -> impl Strategy<Value = String> {
    const RULE_ATOMS: &[&str] = &[
        "\"a\"",
        "\"b\"i",
        "/[a-c]+/",
        "X",
        "y",
        "(\"a\" | \"b\")",
        "[\"c\"]",
        "\"a\"..\"c\"",
        "~\"d\"",
        "<|end|>",
        "<[^1,5-9]>",
        "%json {\"type\": \"string\"}",
    ];
    const TERMINAL_ATOMS: &[&str] =
        &["\"a\"", "\"b\"i", "/[a-c]+/", "(\"a\" | \"b\")", "[\"c\"]", "\"a\"..\"c\"", "~\"d\""];
    (body(RULE_ATOMS), body(TERMINAL_ATOMS), body(RULE_ATOMS))
        .prop_map(|(s, x, y)| format!("start: {s}\nX: \"x\" {x}\ny: {y}\n%ignore \" \"\n"))
}

fn check_located(src: &str, e: &grammar::Error) {
    if let Some(loc) = e.location() {
        assert!(loc.offset <= src.len(), "{e}");
        assert!(loc.line as usize <= src.lines().count().max(1) + 1, "{e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn lark_soup_never_panics(src in soup(LARK_PIECES)) {
        let cfg = Config::default();
        match grammar::lark::parse(&src, &cfg) {
            Ok(g) => {
                let printed = grammar::lark::print(&g);
                let again = grammar::lark::parse(&printed, &cfg).expect("printed text parses");
                prop_assert_eq!(grammar::lark::print(&again), printed);
                if let Err(e) = grammar::lark::compile(&src, &cfg) {
                    check_located(&src, &e);
                }
            }
            Err(e) => check_located(&src, &e),
        }
    }

    #[test]
    fn gbnf_soup_never_panics(src in soup(GBNF_PIECES)) {
        let cfg = Config::default();
        match grammar::gbnf::compile(&src, &cfg) {
            Ok(_) => {
                // Whatever compiles translates to Lark that parses.
                let lark = grammar::gbnf::to_lark(&src, &cfg);
                if let Ok(text) = lark {
                    prop_assert!(grammar::lark::parse(&text, &cfg).is_ok(), "{}", text);
                }
            }
            Err(e) => check_located(&src, &e),
        }
    }

    #[test]
    fn generated_lark_round_trips(src in lark_grammar()) {
        let cfg = Config::default();
        let g = grammar::lark::parse(&src, &cfg).expect("generated grammars parse");
        let printed = grammar::lark::print(&g);
        let again = grammar::lark::parse(&printed, &cfg).expect("printed text parses");
        prop_assert_eq!(grammar::lark::print(&again), printed.clone());
        // Compiling the original and the printed text agrees.
        let a = grammar::lark::compile(&src, &cfg).map(|_| ()).map_err(|e| e.kind());
        let b = grammar::lark::compile(&printed, &cfg).map(|_| ()).map_err(|e| e.kind());
        prop_assert_eq!(a, b);
    }
}
