//! Every error path of the Lark and GBNF front-ends: kind, line and column
//! (1-based, in characters), and a word of the message.

use grammar::{Config, ErrorKind};

use ErrorKind::{Duplicate, Invalid, Limit, Syntax, UnknownName, Unsupported};

/// (grammar, kind, line, column, a piece of the message)
type Case = (&'static str, ErrorKind, u32, u32, &'static str);

const LARK: &[Case] = &[
    // The tokenizer.
    ("start: \"abc", Syntax, 1, 8, "unterminated string"),
    ("start: \"ab\nc\"", Syntax, 1, 8, "unterminated string"),
    ("start: \"a\\qb\"", Syntax, 1, 10, "invalid escape"),
    ("start: \"\\xZZ\"", Syntax, 1, 9, "hex digits"),
    ("start: \"\\ud800\"", Syntax, 1, 9, "surrogate"),
    ("start: /abc", Syntax, 1, 8, "unterminated regex"),
    ("start: 'a'", Syntax, 1, 8, "double quotes"),
    ("start: \"a\" $", Syntax, 1, 12, "unexpected character"),
    ("start: <foo bar>", Syntax, 1, 8, "special token"),
    ("start: <>", Syntax, 1, 8, "empty special token"),
    ("start: % x", Syntax, 1, 8, "directive name"),
    ("start: @", Syntax, 1, 8, "grammar name"),
    ("start: %json {\"a\": }", Syntax, 1, 20, "invalid JSON"),
    ("start: %json {\n  \"a\": 1,\n  ]", Syntax, 3, 3, "invalid JSON"),
    // The parser.
    ("start: x\nFoo: \"a\"", Syntax, 2, 1, "mixes upper and lower case"),
    ("start \"a\"", Syntax, 1, 7, "expected `:`"),
    ("start: foo\nfoo::_: \"a\"", Unsupported, 2, 4, "parametric"),
    ("start: \"a\"?+", Syntax, 1, 12, "two repetition operators"),
    ("start: \"a\"{-1,}", Invalid, 1, 12, ">= 0"),
    ("start: \"a\"{3,2}", Invalid, 1, 8, "smaller than its start"),
    ("start: \"a\"~3..2", Invalid, 1, 8, "smaller than its start"),
    ("start: \"a\"{0,100001}", Limit, 1, 14, "max_repeat"),
    ("start: \"ab\"..\"c\"", Invalid, 1, 8, "single character"),
    ("start: \"a\"..\"cd\"", Invalid, 1, 13, "single character"),
    ("start: \"d\"..\"a\"", Invalid, 1, 8, "range order"),
    ("start: <[100-200-300]>", Invalid, 1, 8, "invalid token range"),
    ("start: <[,]>", Invalid, 1, 8, "empty token range"),
    ("start: <[200-100]>", Invalid, 1, 8, "invalid token range"),
    ("start: <[^*]>", Invalid, 1, 8, "negated wildcard"),
    ("start: <[*,100]>", Invalid, 1, 8, "wildcard"),
    ("start: <[5x]>", Invalid, 1, 8, "invalid token id"),
    ("start: <[-1]>", Invalid, 1, 8, "invalid token id"),
    ("start: \"a\"\n%foo", Unsupported, 2, 1, "unknown directive"),
    ("%json {}\nstart: \"a\"", Syntax, 1, 1, "is an expression"),
    ("start: \"a\" )", Syntax, 1, 12, "end of the line"),
    ("start: \"a\"\n: \"b\"", Syntax, 2, 1, "a rule, a terminal"),
    ("%import common\nstart: \"a\"", Syntax, 1, 1, "module.NAME"),
    ("start: (\"a\"", Syntax, 1, 12, "`)`"),
    ("start: [\"a\"", Syntax, 1, 12, "`]`"),
    ("start: x\nx[lazy: \"a\"", Syntax, 2, 7, "`]`"),
    ("start: x\nx.a: \"a\"", Syntax, 2, 3, "priority number"),
    // Lowering.
    ("foo: \"a\"", UnknownName, 0, 0, "no `start` rule"),
    ("start: foo", UnknownName, 1, 8, "unknown name `foo`"),
    ("start: A\nA: B", UnknownName, 2, 4, "unknown name `B`"),
    ("start: A\nA: b\nb: \"x\"", Invalid, 2, 4, "cannot be used inside a terminal"),
    ("start: A\nA: \"a\" B\nB: A", Invalid, 3, 4, "circular reference"),
    ("start: x\nx: \"a\"\nx: \"b\"", Duplicate, 3, 1, "first defined on line 2"),
    ("start: X\nX: \"a\"\nX: \"b\"", Duplicate, 3, 1, "duplicate terminal"),
    ("start: WS\n%import common.WS\n%import common.WS", Duplicate, 3, 16, "duplicate"),
    ("start: X\n%import common.BLAH -> X", UnknownName, 2, 16, "unknown common terminal"),
    ("start: X\n%import foo.X", Unsupported, 2, 1, "only `%import common"),
    ("start: \"a\"\n%declare FOO", Unsupported, 2, 1, "%declare"),
    ("start: \"a\"\n%override start: \"b\"", Unsupported, 2, 1, "%override"),
    ("%llguidance {\"no_forcing\": 1}\nstart: \"a\"", Invalid, 1, 1, "true or false"),
    (
        "%llguidance {\"allow_initial_skip\": true}\nstart: \"a\"",
        Unsupported,
        1,
        1,
        "not supported",
    ),
    (
        "%llguidance {\"foo\": true}\nstart: \"a\"",
        Unsupported,
        1,
        1,
        "unknown `%llguidance` option",
    ),
    ("%llguidance []\nstart: \"a\"", Invalid, 1, 1, "JSON object"),
    ("start: x\nx{p}: p", Unsupported, 2, 3, "templates"),
    ("start: t{\"a\"}", Unsupported, 1, 8, "templates"),
    ("start: x\nx.2: \"a\"", Unsupported, 2, 3, "priorities"),
    ("start: X\nX.2: \"a\"", Unsupported, 2, 3, "priorities"),
    ("start: \"a\" & \"b\"", Invalid, 1, 14, "only supported in terminals"),
    ("start: /[abc/", Invalid, 1, 8, "invalid regex"),
    ("start: /(?<=a)b/", Invalid, 1, 8, "look-around"),
    ("start: /a/l", Unsupported, 1, 8, "`l` flag"),
    ("start: /a/q", Invalid, 1, 8, "unknown regex flag"),
    ("start: A\nA: \"a\" <|x|>", Invalid, 2, 8, "cannot be used in terminals"),
    ("start: A\nA: %json {}", Invalid, 2, 4, "cannot be used in terminals"),
    ("start: \"a\"\n%ignore <[1]>", Invalid, 2, 9, "cannot be used in terminals"),
    ("start: %json []", Invalid, 1, 8, "failed to compile JSON schema"),
    ("start: %json {\"type\": \"integer\"}\n%ignore \" \"", Unsupported, 1, 8, "`%ignore`"),
    ("start: %regex {\"substring_words\": true}", Invalid, 1, 8, "failed to parse %regex"),
    ("start: %regex {\"foobar\": true}", Invalid, 1, 8, "unknown field"),
    (
        "start: %regex {\"substring_words\": \"a\", \"substring_chars\": \"b\"}",
        Invalid,
        1,
        8,
        "only one field",
    ),
    ("start: %regex {}", Invalid, 1, 8, "no fields set"),
    ("start: %regex [1]", Invalid, 1, 8, "failed to parse %regex"),
    ("start: X\nX: \"a\" %regex {\"substring_chunks\": [1]}", Invalid, 2, 8, "list of strings"),
    ("start: @sub", Unsupported, 1, 8, "other grammars"),
    ("start: x\nx[bar]: \"a\"", Invalid, 2, 3, "unknown option `bar`"),
    ("start: x\nx[stop=\"a\", suffix=\"b\"]: /.*/", Invalid, 2, 13, "one of `stop=` and `suffix=`"),
    ("start: x\nx[lazy, stop=\"a\"]: /.*/", Invalid, 2, 9, "a `lazy` before `stop=`"),
    ("start: x\nx[stop=\"\", lazy]: /.*/", Invalid, 2, 12, "`lazy` cannot be combined"),
    ("start: x\nx[max_tokens=1.5]: /.*/", Invalid, 2, 3, "whole number of tokens"),
    ("%llguidance {\"skip_repetition\": \"once\"}\nstart: \"a\"", Unsupported, 1, 1, "ignore_once"),
    ("start: x\nx[lazy=1]: /.*/", Invalid, 2, 3, "wrong value"),
    ("start: X\nX[lazy]: /.*/", Unsupported, 2, 3, "options on terminals"),
    ("start: x\nx[lazy]: y\ny: \"a\"", Invalid, 2, 10, "cannot be used inside a terminal"),
];

const GBNF: &[Case] = &[
    ("root = \"a\"", Syntax, 1, 6, "expected `::=`"),
    ("root ::= foo", UnknownName, 1, 10, "undefined rule `foo`"),
    ("root ::= \"a\"\nroot ::= \"b\"", Duplicate, 2, 1, "already defined on line 1"),
    ("item ::= \"a\"", UnknownName, 0, 0, "no `root` rule"),
    ("root ::= \"abc", Syntax, 1, 10, "unterminated string"),
    ("root ::= [abc", Syntax, 1, 10, "unterminated character class"),
    ("root ::= \"a\\qb\"", Syntax, 1, 12, "unknown escape"),
    ("root ::= \"\\xZ1\"", Syntax, 1, 11, "hex digits"),
    ("root ::= \"\\uD800\"", Invalid, 1, 11, "not a Unicode scalar"),
    ("root ::= * \"a\"", Syntax, 1, 10, "must follow an expression"),
    ("root ::= \"a\"{3,2}", Invalid, 1, 13, "smaller than its start"),
    ("root ::= \"a\"{1000000}", Limit, 1, 14, "max_repeat"),
    ("root ::= \"a\"{x}", Syntax, 1, 14, "expected a number"),
    ("root ::= (\"a\" \"b\"", Syntax, 1, 18, "expected `)`"),
    ("root ::= \"a\" )", Syntax, 1, 14, "end of the line"),
    ("root ::= [z-a]", Invalid, 1, 11, "range order"),
    ("root ::= !\"a\"", Syntax, 1, 11, "`<` after `!`"),
    ("root ::= <think", Syntax, 1, 10, "unterminated token"),
    ("root ::= <[12x]>", Syntax, 1, 14, "token id"),
    ("root ::= !<think>", Unsupported, 1, 10, "negated named token"),
];

fn check(cases: &[Case], compile: impl Fn(&str) -> Result<earley::Grammar, grammar::Error>) {
    let mut wrong = Vec::new();
    for &(src, kind, line, col, msg) in cases {
        let e = match compile(src) {
            Ok(_) => {
                wrong.push(format!("{src:?} should fail"));
                continue;
            }
            Err(e) => e,
        };
        let at = (e.line().unwrap_or(0), e.column().unwrap_or(0));
        if (e.kind(), at) != (kind, (line, col)) || !e.message().contains(msg) {
            wrong.push(format!("{src:?}: expected {kind:?} at {line}:{col} ({msg}), got {e}"));
            continue;
        }
        if line > 0 {
            let snippet = e.snippet().expect("located errors show the source line");
            assert!(snippet.contains('^'), "{snippet}");
            assert!(e.to_string().starts_with(&format!("{line}:{col}: ")), "{e}");
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn lark_errors_have_kind_line_and_column() {
    check(LARK, |s| grammar::lark::compile(s, &Config::default()));
}

#[test]
fn gbnf_errors_have_kind_line_and_column() {
    check(GBNF, |s| grammar::gbnf::compile(s, &Config::default()));
}

#[test]
fn snippet_shows_the_line_and_a_caret() {
    let e = grammar::lark::compile("start: x\nx: \"a\" |  oops", &Config::default()).unwrap_err();
    assert_eq!(e.snippet(), Some("    2 | x: \"a\" |  oops\n      |           ^"));
}

#[test]
fn limits_are_configurable() {
    let mut cfg = Config::default();
    cfg.limits.max_source_bytes = 10;
    let e = grammar::lark::compile("start: \"aaaaaaaa\"", &cfg).unwrap_err();
    assert_eq!(e.kind(), Limit);
    let e = grammar::gbnf::compile("root ::= \"aaaaaaaa\"", &cfg).unwrap_err();
    assert_eq!(e.kind(), Limit);
    let mut cfg = Config::default();
    cfg.limits.max_nodes = 3;
    let e = grammar::lark::compile("start: \"a\" \"b\" \"c\" \"d\"", &cfg).unwrap_err();
    assert_eq!((e.kind(), e.column()), (Limit, Some(20)));
    let e = grammar::gbnf::compile("root ::= \"a\" \"b\" \"c\" \"d\"", &cfg).unwrap_err();
    assert_eq!((e.kind(), e.column()), (Limit, Some(22)));
}
