//! Hostile grammars either compile within the default limits or fail fast
//! with a limit error; none hangs, panics or overflows the stack.

use grammar::{Config, ErrorKind};

use crate::util::accepts;

fn lark(src: &str) -> Result<earley::Grammar, grammar::Error> {
    grammar::lark::compile(src, &Config::default())
}

#[test]
fn deep_nesting_is_a_limit_error() {
    let n = 100_000;
    let src = format!("start: {}\"a\"{}", "(".repeat(n), ")".repeat(n));
    let e = lark(&src).unwrap_err();
    assert_eq!((e.kind(), e.line(), e.column()), (ErrorKind::Limit, Some(1), Some(208)));
    let src = format!("start: {}\"a\"", "~".repeat(n));
    assert_eq!(lark(&src).unwrap_err().kind(), ErrorKind::Limit);
    let src = format!("start: {}\"a\"{}", "[".repeat(n), "]".repeat(n));
    assert_eq!(lark(&src).unwrap_err().kind(), ErrorKind::Limit);
    let src = format!("root ::= {}\"a\"{}", "(".repeat(n), ")".repeat(n));
    let e = grammar::gbnf::compile(&src, &Config::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    // Nesting within the limit compiles.
    let src = format!("start: {}\"a\"{}", "(".repeat(150), ")".repeat(150));
    assert!(accepts(&lark(&src).unwrap(), "a"));
}

#[test]
fn long_terminal_chains_are_limit_errors() {
    // T0: T1, T1: T2, ...: inlining recurses once per link.
    let mut src = String::from("start: T0\n");
    for i in 0..50_000 {
        src.push_str(&format!("T{i}: T{}\n", i + 1));
    }
    src.push_str("T50000: \"a\"\n");
    assert_eq!(lark(&src).unwrap_err().kind(), ErrorKind::Limit);
    // Terminals doubling in size at each level: exponential inlining.
    let mut src = String::from("start: T40\nT0: \"a\"\n");
    for i in 1..=40 {
        src.push_str(&format!("T{i}: T{} T{}\n", i - 1, i - 1));
    }
    let e = lark(&src).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert!(e.message().contains("max_terminal_nodes"), "{e}");
    // Long rule chains are fine: rules are lowered from a work list.
    let mut src = String::from("start: r0\n");
    for i in 0..20_000 {
        src.push_str(&format!("r{i}: r{} \"x\" | \"y\"\n", i + 1));
    }
    src.push_str("r20000: \"z\"\n");
    assert!(accepts(&lark(&src).unwrap(), "yx"));
}

#[test]
fn huge_alternations_compile() {
    let words: Vec<String> = (0..5_000).map(|i| format!("\"w{i}\"")).collect();
    let g = lark(&format!("start: {}", words.join(" | "))).unwrap();
    assert!(accepts(&g, "w4999"));
    assert!(!accepts(&g, "w5000"));
    let g = lark(&format!("start: W\nW: {}", words.join(" | "))).unwrap();
    assert!(accepts(&g, "w17"));
}

#[test]
fn huge_substring_regexes_are_limit_errors() {
    let long = "a".repeat(100_000);
    let e = lark(&format!("start: %regex {{\"substring_chars\": \"{long}\"}}")).unwrap_err();
    assert_eq!((e.kind(), e.column()), (ErrorKind::Limit, Some(8)));
    let words = "w ".repeat(300);
    assert!(lark(&format!("start: %regex {{\"substring_words\": \"{words}\"}}")).is_ok());
}

#[test]
fn large_repetitions_compile_in_log_size() {
    // (Long inputs are the parser's business; here the grammar must compile.)
    let g = lark("start: \"a\"{0,100000} \"b\"").unwrap();
    assert!(accepts(&g, "aaab"));
    let g = lark("start: A \"b\"\nA: \"a\"{0,100000}").unwrap();
    assert!(accepts(&g, "aab"));
    let g = grammar::gbnf::compile("root ::= [a]{0,100000} \"b\"", &Config::default()).unwrap();
    assert!(accepts(&g, "ab"));
    assert_eq!(lark("start: \"a\"{0,100001}").unwrap_err().kind(), ErrorKind::Limit);
}

#[test]
fn left_and_right_recursion_compile() {
    let g = lark("start: a\na: a \"x\" | \"x\"").unwrap();
    assert!(accepts(&g, &"x".repeat(200)));
    let g = lark("start: a\na: \"x\" a | \"x\"").unwrap();
    assert!(accepts(&g, &"x".repeat(50)));
    let g = lark("start: a\na: \"(\" a \")\" | \"\"").unwrap();
    assert!(accepts(&g, &format!("{}{}", "(".repeat(30), ")".repeat(30))));
    let g = grammar::gbnf::compile("root ::= root \"x\" | \"x\"", &Config::default()).unwrap();
    assert!(accepts(&g, "xxx"));
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "",
        "\u{feff}",
        "%",
        "%%json",
        "start:",
        ":",
        "start: <",
        "start: /",
        "start: \"\\",
        "start: \"\\u",
        "start: \"\\ud83d\\u",
        "start: %json",
        "start: %json {",
        "start: a{",
        "start: a{1",
        "start: a~",
        "start: a~1..",
        "start: \"a\"..",
        "x[",
        "x[a=",
        "start: <[",
        "%import",
        "%import .",
        "%ignore",
        "start: (",
        "start: ~",
        "\n\n|\n",
        "start: \"é\"..\"",
    ];
    for src in inputs {
        let _ = lark(src);
        let _ = grammar::gbnf::compile(src, &Config::default());
    }
    let gbnf = [
        "root",
        "root ::=",
        "root ::= \"",
        "root ::= [",
        "root ::= [\\",
        "root ::= (",
        "root ::= \"a\"{",
        "root ::= \"a\"{1,",
        "root ::= <",
        "root ::= <[",
        "root ::= !",
        "::=",
    ];
    for src in gbnf {
        let _ = grammar::gbnf::compile(src, &Config::default());
    }
}
