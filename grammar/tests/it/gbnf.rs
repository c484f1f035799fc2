//! GBNF as llama.cpp defines it: every construct compiled and run, the
//! translation to Lark, and the choice of lexemes.

use grammar::Config;
use grammar::lark::ast::{DefKind, Item};

use crate::data;
use crate::util::{accepts, viable_prefix};

fn check(src: &str, good: &[&str], bad: &[&str]) {
    let g = grammar::gbnf::compile(src, &Config::default())
        .unwrap_or_else(|e| panic!("grammar:\n{src}\n{e}"));
    for s in good {
        assert!(accepts(&g, s), "grammar:\n{src}\nshould accept {s:?}");
    }
    for s in bad {
        assert!(!accepts(&g, s), "grammar:\n{src}\nshould reject {s:?}");
    }
}

#[test]
fn literals_and_escapes() {
    check(r#"root ::= "a\"b\\c\n\t\r\x41\u00e9\U0001F600\[\]""#, &["a\"b\\c\n\t\rAé😀[]"], &["a"]);
    check(r#"root ::= "" "x""#, &["x"], &[""]);
}

#[test]
fn character_classes() {
    check("root ::= [a-c0-9_]+", &["a", "c9_"], &["d", ""]);
    check("root ::= [^a-c]", &["d", "\n", "é"], &["a", ""]);
    check(r#"root ::= [\]\[\\-]"#, &["]", "[", "\\", "-"], &["a"]);
    check("root ::= [-a]", &["-", "a"], &["b"]);
    check("root ::= [ぁ-ゟ]+", &["ひらがな"], &["カ"]);
    check(r#"root ::= [\x00-\x1F]"#, &["\u{1}"], &[" "]);
    check("root ::= [^]", &["x", "\n"], &[""]);
}

#[test]
fn any_character_includes_line_breaks() {
    // llama.cpp's `.` is any code point (llguidance's converter writes `/./`).
    check("root ::= . .", &["ab", "\n\n", "éx"], &["a", "abc"]);
}

#[test]
fn repetitions_groups_and_alternatives() {
    check("root ::= \"a\"*", &["", "aaa"], &["b"]);
    check("root ::= \"a\"+ \"b\"?", &["a", "aab"], &["b"]);
    check("root ::= \"a\"{2}", &["aa"], &["a", "aaa"]);
    check("root ::= \"a\"{2,}", &["aa", "aaaa"], &["a"]);
    check("root ::= \"a\"{0,2}", &["", "aa"], &["aaa"]);
    check("root ::= \"a\"{ 1 , 2 }", &["a", "aa"], &[""]);
    check("root ::= (\"a\" | \"b\")+ \"c\"", &["abac"], &["c"]);
    check("root ::= | \"a\"", &["", "a"], &["b"]);
}

#[test]
fn rules_comments_and_line_breaks() {
    check(
        "# a list\nroot ::= item+ # trailing comment\n\n\nitem ::= \"- \" [a-z]+ \"\\n\"\n",
        &["- a\n- bc\n"],
        &["- a"],
    );
    // A newline after `|` continues the rule; newlines inside groups are spaces.
    check("root ::= \"a\" |\n  \"b\"\nx ::= (\n \"c\"\n \"d\")", &["a", "b"], &["cd"]);
    check("root ::= sub-Rule_2\nsub-Rule_2 ::= \"x\"", &["x"], &["y"]);
    check("root ::= \"a\"\r\nb ::= \"b\"\r\n", &["a"], &["b"]);
}

#[test]
fn token_references_compile() {
    for src in ["root ::= <[5]> \"a\"", "root ::= <think> \"a\" </think>", "root ::= !<[5]>*"] {
        grammar::gbnf::compile(src, &Config::default()).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
}

/// Terminal rules (llguidance's converter's choice): not `root`, built from
/// literals, classes, `.` and terminal rules only.
#[test]
fn lexeme_choice_follows_llguidance() {
    let src = "root ::= expr\nexpr ::= num (\"+\" num)*\nnum ::= digit+ ws\ndigit ::= [0-9]\n\
               ws ::= [ ]*\nlist ::= \"[\" list? \"]\"\n";
    let g = grammar::gbnf::parse(src, &Config::default()).unwrap();
    let lark = grammar::gbnf::to_lark_ast(&g, src).unwrap();
    let kinds: Vec<(String, DefKind)> = lark
        .items
        .iter()
        .map(|i| match i {
            Item::Def(d) => (d.name.name.clone(), d.kind),
            _ => unreachable!("GBNF translates to definitions only"),
        })
        .collect();
    let t = DefKind::Terminal;
    let r = DefKind::Rule;
    let expected = [("root", r), ("expr", t), ("num", t), ("digit", t), ("ws", t), ("list", r)];
    let expected: Vec<(String, DefKind)> =
        expected.iter().map(|(n, k)| (n.to_string(), *k)).collect();
    assert_eq!(kinds, expected);
    let text = grammar::gbnf::to_lark(src, &Config::default()).unwrap();
    assert!(text.contains("start: EXPR\n"), "{text}");
    assert!(text.contains("NUM: DIGIT+ WS\n"), "{text}");
    assert!(text.contains("list: \"[\" list? \"]\"\n"), "{text}");
    // `expr` is one lexeme: spaces after a number are part of it.
    let g = grammar::gbnf::compile(src, &Config::default()).unwrap();
    assert!(accepts(&g, "1 +2  "));
}

#[test]
fn to_lark_renames_to_lark_conventions() {
    let src =
        "root ::= dataType start\ndataType ::= \"int\" ws\nws ::= [ ]\nstart ::= \"s\" root?\n";
    let text = grammar::gbnf::to_lark(src, &Config::default()).unwrap();
    assert_eq!(
        text,
        "%llguidance {}\n\nstart: DATA_TYPE start_2\nDATA_TYPE: \"int\" WS\nWS: /[\\x{20}]/\n\
         start_2: \"s\" start?\n"
    );
    // The printed grammar compiles to the same language.
    let lark = grammar::lark::compile(&text, &Config::default()).unwrap();
    let gbnf = grammar::gbnf::compile(src, &Config::default()).unwrap();
    for s in ["int s", "int sint s", "int", "int s int s"] {
        assert_eq!(accepts(&lark, s), accepts(&gbnf, s), "{s:?}");
    }
}

/// Sample texts for the shared GBNF grammars (llama.cpp's and vLLM's),
/// accepted by llguidance 1.9.1 on the converted grammars.
#[test]
fn shared_gbnf_grammars_accept_samples() {
    let Some(dir) = data::grammars_dir("shared GBNF samples") else { return };
    // arithmetic.gbnf: `ws ::= [ \t\n]*` ends the terminal rules `num` and
    // `ident`, and greedy lexing lets it swallow the `"\n"` that ends each
    // line, so no line can end: the first line is rejected at its newline.
    // llguidance stops at the same byte (8); llama.cpp, which has no lexer,
    // would accept.
    let src = std::fs::read_to_string(dir.join("gbnf/arithmetic.gbnf")).unwrap();
    let g = grammar::gbnf::compile(&src, &Config::default()).unwrap();
    assert_eq!(viable_prefix(&g, b"1+2*x=3\n(4 - y)=z\n"), (8, false));
    let cases: &[(&str, &str)] = &[
        ("c.gbnf", "int main(){while(x<1){x = x+1;}return 0;}"),
        ("chess.gbnf", "1. e4 e5\n2. Nf3 Nc6\n"),
        ("english.gbnf", "Hello, world! This is fine."),
        ("japanese.gbnf", "こんにちは 世界"),
        ("json.gbnf", "{\"a\": [1, 2.5e3, true, null, \"x\\n\"]}"),
        ("json_arr.gbnf", "[\n{\"a\": 1},\n\"b\"]"),
        ("list.gbnf", "- one\n- two\n"),
        ("vllm-sql.gbnf", "SELECTcol_1fromtable_2wherecol_2=1"),
    ];
    for (file, sample) in cases {
        let src = std::fs::read_to_string(dir.join("gbnf").join(file)).unwrap();
        let g = grammar::gbnf::compile(&src, &Config::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(viable_prefix(&g, sample.as_bytes()), (sample.len(), true), "{file}");
    }
}
