//! Every supported Lark construct, compiled and run on accepted and rejected
//! inputs (the expectations were checked against llguidance 1.9.1 with a
//! byte-level tokenizer).

use grammar::Config;

use crate::util::accepts;

fn check(src: &str, good: &[&str], bad: &[&str]) {
    let g = grammar::lark::compile(src, &Config::default())
        .unwrap_or_else(|e| panic!("grammar:\n{src}\n{e}"));
    for s in good {
        assert!(accepts(&g, s), "grammar:\n{src}\nshould accept {s:?}");
    }
    for s in bad {
        assert!(!accepts(&g, s), "grammar:\n{src}\nshould reject {s:?}");
    }
}

#[test]
fn rules_terminals_and_alternatives() {
    check(
        "start: greeting NAME\ngreeting: \"hi \" | \"hello \"\nNAME: /[a-z]+/",
        &["hi bob", "hello x"],
        &["hi ", "hey bob", "hi Bob"],
    );
    // A line starting with `|` continues the alternatives.
    check("start: \"a\"\n  | \"b\"\n\n  | \"c\"", &["a", "b", "c"], &["", "d"]);
    // Empty alternatives and empty rules.
    check("start: \"a\" | \nunused:", &["a", ""], &["b"]);
    // Rule modifiers and aliases do not change the language.
    check("?start: x -> y\n!?x: \"x\"", &["x"], &["", "xx"]);
}

#[test]
fn operators() {
    check("start: \"a\"*", &["", "a", "aaa"], &["b"]);
    check("start: \"a\"+", &["a", "aa"], &[""]);
    check("start: \"a\"? \"b\"", &["b", "ab"], &["aab"]);
    check("start: [\"a\"] \"b\"", &["b", "ab"], &["aab"]);
    check("start: \"a\"{2}", &["aa"], &["a", "aaa"]);
    check("start: \"a\"{2,}", &["aa", "aaaa"], &["a"]);
    check("start: \"a\"{,2}", &["", "a", "aa"], &["aaa"]);
    check("start: \"a\"{ 1 , 3 }", &["a", "aaa"], &["", "aaaa"]);
    check("start: A~3\nA: \"a\"", &["aaa"], &["aa", "aaaa"]);
    check("start: A~2..3\nA: \"a\"", &["aa", "aaa"], &["a", "aaaa"]);
    check("start: (\"a\" | \"b\") \"c\"", &["ac", "bc"], &["c", "abc"]);
    // Lenient: line breaks inside brackets (llguidance rejects them).
    check("start: (\"a\"\n  \"b\")", &["ab"], &["a"]);
}

#[test]
fn strings_and_regexes() {
    check(r#"start: "a\"b\\c\/d\n\t\x41\u00e9""#, &["a\"b\\c/d\n\tAé"], &["a"]);
    check(r#"start: "\ud83d\ude00""#, &["😀"], &[]);
    check(r#"start: "ab"i"#, &["ab", "AB", "aB"], &["ac"]);
    check("start: /a.b/s", &["a\nb", "axb"], &["ab"]);
    check("start: /a.b/", &["axb"], &["a\nb"]);
    check("start: /ab/i", &["AB"], &[]);
    check("start: /a b/x", &["ab"], &["a b"]);
    check(r"start: /a\/b/", &["a/b"], &[]);
    check(r#"start: "a".."c"+"#, &["abc", "cab"], &["ad", ""]);
    check(r#"start: "é".."ë""#, &["ê"], &["e"]);
    check("start: \"\"", &[""], &["a"]);
}

#[test]
fn terminals_inline_terminals() {
    check(
        "start: NUM\nNUM: SIGN? DIGIT+ (\".\" DIGIT+)?\nSIGN: \"-\" | \"+\"\nDIGIT: /[0-9]/",
        &["1", "-12.5", "+0"],
        &["1.", "--1", ""],
    );
    // And (`&`) and Not (`~`) in terminals.
    check("start: X\nX: /[a-z]+/ & ~\"ab\"", &["a", "b", "abc"], &["ab"]);
    check("start: X\nX: ~\"b\"", &["a", "ab", ""], &["b"]);
    // `~` in a rule is a lexeme too, as in llguidance.
    check("start: \"a\" ~\"b\"", &["a", "ac"], &["ab"]);
}

#[test]
fn greedy_lexemes_like_llguidance() {
    // A lexeme that can go on does not end early (maximal munch).
    check("start: /a+/ \"a\"", &[], &["aa", "aaa"]);
    check("start: /a+/ \"b\"", &["aab"], &[]);
    // Nullable lexemes are optional.
    check("start: /a*/ \"b\"", &["b", "ab"], &[]);
    check("start: A \"b\"\nA: \"a\"?", &["b", "ab"], &[]);
}

#[test]
fn ignore() {
    check("start: \"a\" \"b\"\n%ignore \" \"", &["ab", "a b", "a  b"], &["a_b"]);
    check(
        "start: x\nx: \"a\" \"b\"\n%ignore WS\n%ignore COMMENT\nWS: /[ ]+/\nCOMMENT: /#[^\\n]*\\n/",
        &["a b", "a#c\nb", "a # c\n b"],
        &["a#c b"],
    );
    // Inside a terminal nothing is ignored.
    check("start: AB\nAB: \"a\" \"b\"\n%ignore \" \"", &["ab"], &["a b"]);
}

#[test]
fn common_imports() {
    check("start: INT\n%import common.INT", &["0", "123"], &["", "-1", "1.5"]);
    check("start: N\n%import common.SIGNED_NUMBER -> N", &["+1", "-1.5", "1e5", "2.E-3"], &["e5"]);
    check(
        "start: CNAME WS ESCAPED_STRING\n%import common (CNAME, WS, ESCAPED_STRING)",
        &["_a1 \"x\\\"y\"", "a\t\"\""],
        &["1a \"x\"", "a \"x"],
    );
    check("start: NUMBER\n%import common.NUMBER", &["1.", ".5", "1e5", "1.e5", "01"], &[".e5"]);
    check(
        "start: C_COMMENT\n%import common.C_COMMENT",
        &["/**/", "/* * / */", "/***/"],
        &["/*/", "/* */ */"],
    );
    check("start: NEWLINE\n%import common.NEWLINE", &["\n", "\r\n\n"], &["\r"]);
    check("start: WS_INLINE\n%import common.WS_INLINE", &[" \t"], &["\n"]);
    check("start: SH_COMMENT\n%import common.SH_COMMENT", &["#", "# x"], &["# x\ny"]);
    check(
        "start: LETTER WORD HEXDIGIT DECIMAL\n%import common (LETTER, WORD, HEXDIGIT, DECIMAL)",
        &["aBcF1.5"],
        &["é"],
    );
    // The imported terminal's helpers do not leak into the user's names.
    check("start: NUMBER INT\nINT: \"i\"\n%import common.NUMBER", &["12i"], &["121"]);
}

#[test]
fn lexeme_options() {
    // `lazy`: the lexeme ends at its first match.
    check("start: x \"!\"\nx[lazy]: /[a-z]+/", &["a!"], &["ab!"]);
    // A rule made of terminals with `lazy` becomes one lazy lexeme.
    check("start: x\nx[lazy]: TEXT \"<end>\"\nTEXT: /(.|\\n)*/", &["ab<end>"], &["ab<end>c"]);
    // `suffix`: appended to the lexeme, which is lazy.
    check("start: x\nx[suffix=\"</a>\"]: /.*/", &["b</a>"], &["b</a>c"]);
    // `capture` and `temperature` do not change masks.
    check("start: x\nx[capture, temperature=0.5]: \"a\"", &["a"], &["b"]);
    // `stop=` hides its text, `stop=` of a few words is one lexeme per word.
    check("start: x \"Z\"\nx[stop=\";;\"]: /[a-z]*/", &["ab;;Z", ";;Z"], &["abZ", "ab;Z"]);
    check("start: x \"Z\"\nx[stop=/;;|!!/]: /[a-z]*/", &["ab;;Z", "ab!!Z"], &["ab;!Z", "abZ"]);
    check("start: x \"Z\"\nx[stop=/[;!]{2,9}/]: /[a-z]*/", &["ab;!Z"], &["ab;Z"]);
    check("start: x\nx[max_tokens=0]: /[a-z]+/", &[""], &["a"]);
    // A one-word stop regex or terminal that what follows starts with.
    check("start: x \"--Z\"\nx[stop=/--/]: /[a-z]*/", &["ab--Z"], &["ab----Z"]);
    check("start: x \"--Z\"\nx[stop=E]: /[a-z]*/\nE: \"-\" \"-\"", &["ab--Z"], &["abZ"]);
    // `temperature` makes the rule one lexeme: no `%ignore` inside it.
    check(
        "start: x \"b\"\nx[temperature=0.5]: \"a\" \"a\"\n%ignore \" \"",
        &["aab", "aa b"],
        &["a ab"],
    );
}

#[test]
fn special_tokens_compile() {
    for src in [
        "start: <|end|>",
        "start: \"a\" <[5]>",
        "start: <[1-5,9]>",
        "start: <[^100,200-300]>",
        "start: <[*]>",
        "start: \"x\" <think> \"y\"",
    ] {
        grammar::lark::compile(src, &Config::default()).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
    // Text cannot produce a special token.
    let g = grammar::lark::compile("start: \"a\" <|end|>", &Config::default()).unwrap();
    let end = toktrie::TokenId(1000);
    let mut p = earley::Parser::new(&g, &|name| (name == "<|end|>").then_some(end)).unwrap();
    assert!(p.try_consume_byte(b'a').unwrap());
    assert!(!p.try_consume_byte(b'<').unwrap());
    assert!(!p.is_accepting().unwrap());
    assert!(p.try_consume_special(end).unwrap());
    assert!(p.is_accepting().unwrap());
    // `<[NAME]>` names the token `[NAME]` (Mistral's control tokens).
    let g = grammar::lark::compile("start: <[TOOL_CALLS]> \"[\"", &Config::default()).unwrap();
    assert_eq!(g.special_tokens(), [earley::SpecialToken::Name("[TOOL_CALLS]".into())]);
    let calls = toktrie::TokenId(5);
    let mut p = earley::Parser::new(&g, &|name| (name == "[TOOL_CALLS]").then_some(calls)).unwrap();
    assert!(p.try_consume_special(calls).unwrap());
    assert!(p.try_consume_byte(b'[').unwrap());
    assert!(p.is_accepting().unwrap());
}

#[test]
fn options_directive() {
    check("%llguidance {}\nstart: \"a\"", &["a"], &[]);
    check("%llguidance {\"no_forcing\": true}\nstart: \"a\"", &["a"], &[]);
}

#[test]
fn structured_substring_regexes() {
    // Chunks as llguidance 1.9.1 cuts them: runs of word characters, of
    // white space, and of other characters.
    check(
        r#"start: %regex {"substring_words": "foo bar. baz"}"#,
        &["", "foo", "bar. ", " baz", "foo bar. baz"],
        &["o", "fo", "r. b"],
    );
    check(
        r#"start: %regex {"substring_words": "x.. y\t\n z7é!?"}"#,
        &["..", "!?", "y\t\n z7é"],
        &[".", ". ", "\t", "z7", "é", "!"],
    );
    check(r#"start: %regex {"substring_chars": "aéc"}"#, &["", "é", "aé", "éc"], &["ac"]);
    check(r#"start: %regex {"substring_chunks": ["ab", "cd"]}"#, &["", "abcd", "cd"], &["b"]);
    check(r#"start: %regex {"substring_chunks": []}"#, &[""], &["a"]);
    check(
        "start: \"x\" X \"y\"\nX: %regex {\"substring_chunks\": [\"ab\", \"cd\"]}",
        &["xy", "xaby", "xabcdy"],
        &["xay"],
    );
}

#[test]
fn inline_json_schemas() {
    let schema =
        r#"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}"#;
    check(
        &format!("start: \"x\" %json {schema} \"y\""),
        &["x{\"a\":1}y", "x{\"a\": -12}y", "x{ \"a\" : 3 }y"],
        &["x{}y", "x{\"a\":\"b\"}y", "x {\"a\":1}y"],
    );
    // The documented tool-calling pattern: free text, or a JSON call.
    check(
        "start: TEXT | fun_call\nTEXT: /[^{](.|\\n)*/\nfun_call: %json {\"type\": \"object\", \
         \"properties\": {\"name\": {\"const\": \"get_weather\"}}, \"required\": [\"name\"]}",
        &["no call", "{\"name\":\"get_weather\"}"],
        &["{\"name\":\"other\"}"],
    );
}
