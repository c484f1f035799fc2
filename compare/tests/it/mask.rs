//! Differential tests of token masks against llguidance 1.9.1 (its slicer
//! off): at every step of a tokenized input, our mask must equal llguidance's
//! token for token, on o200k and (when `../shared/data` is present) Llama-3.
//!
//! llguidance builds its side from Lark text; ours comes from the regex
//! front-end or from `earley::GrammarBuilder` code written to mean the same
//! grammar (until the Lark front-end lands).

use std::sync::Arc;

use earley::{GrammarBuilder, Limits, SpecialToken, SymbolId};
use lexer::{LexemeSpec, RegexAst};
use structgen::Matcher;
use toktrie::{TokTrie, TokenId};

/// A vocabulary on both sides.
struct Vocab {
    name: &'static str,
    tokenizer: bpe::Tokenizer,
    trie: Arc<TokTrie>,
    peer: peer_toktrie::TokEnv,
}

fn vocab(name: &'static str, tokenizer: bpe::Tokenizer) -> Vocab {
    let trie = Matcher::trie_of(&tokenizer).unwrap();
    let eos = trie.eos_tokens().first().map_or(0, |t| t.0);
    let peer = compare::peer::llg_tok_env(&tokenizer, eos);
    Vocab { name, tokenizer, trie: Arc::new(trie), peer }
}

fn vocabularies() -> Vec<Vocab> {
    let mut v = vec![vocab("o200k", bpe::Tokenizer::o200k_base())];
    if compare::shared::data_dir_or_skip("mask differential on Llama-3").is_some() {
        let json = compare::shared::read("tokenizers/llama3.tokenizer.json.gz").unwrap();
        v.push(vocab("llama3", bpe::Tokenizer::from_tokenizer_json(&json).unwrap()));
    }
    v
}

fn peer_matcher(v: &Vocab, grammar: llguidance::api::TopLevelGrammar) -> llguidance::Matcher {
    let mut factory = llguidance::ParserFactory::new(
        &v.peer,
        peer_toktrie::InferenceCapabilities::default(),
        &[],
    )
    .unwrap();
    factory.quiet();
    let parser = factory.create_parser(grammar);
    llguidance::Matcher::new(parser)
}

/// Walks `tokens` through both matchers, comparing every mask.
fn check(
    v: &Vocab,
    case: &str,
    peer: llguidance::api::TopLevelGrammar,
    ours: &earley::Grammar,
    tokens: &[TokenId],
) {
    let mut theirs = peer_matcher(v, peer);
    assert!(theirs.get_error().is_none(), "{case}: llguidance: {:?}", theirs.get_error());
    let mut mine = Matcher::new(v.trie.clone(), ours).unwrap();
    for step in 0..=tokens.len() {
        let their_mask = theirs.compute_mask_or_eos().unwrap();
        let my_mask = mine.compute_mask().unwrap().clone();
        let mut missing = Vec::new(); // theirs only
        let mut extra = Vec::new(); // ours only
        for id in 0..v.tokenizer.vocab_size() as u32 {
            let t = their_mask.is_allowed(id);
            let m = my_mask.contains(TokenId(id));
            if t != m {
                let text = match v.tokenizer.token_bytes(id) {
                    Some(b) => format!("{id}:{:?}", String::from_utf8_lossy(b)),
                    None => format!("{id}:special"),
                };
                if t { missing.push(text) } else { extra.push(text) }
            }
        }
        let prefix = v.tokenizer.decode(&tokens[..step].iter().map(|t| t.0).collect::<Vec<_>>());
        let prefix = prefix.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{case} on {}: step {step} after {prefix:?}: llguidance only {:?} ({}), ours only {:?} ({})",
            v.name,
            &missing[..missing.len().min(12)],
            missing.len(),
            &extra[..extra.len().min(12)],
            extra.len()
        );
        assert!(my_mask.count() > 0 || step == tokens.len(), "{case}: empty mask at {step}");
        if step == tokens.len() {
            break;
        }
        let t = tokens[step];
        theirs.consume_token(t.0).unwrap();
        mine.consume_token(t).unwrap();
    }
    let eos = v.trie.eos_tokens()[0];
    assert!(mine.compute_mask().unwrap().contains(eos), "{case}: the input must be accepted");
}

fn encode(v: &Vocab, text: &str) -> Vec<TokenId> {
    v.tokenizer.encode(text).into_iter().map(TokenId).collect()
}

const REGEX_CASES: &[(&str, &str)] = &[
    ("[0-9]+", "1234567"),
    ("(foo|bar|baz)+", "foobazbarfoo"),
    ("[a-z]+( [a-z]+)*\\.", "the quick brown fox jumps."),
    (r#"\{"name": "[a-zA-Z ]{1,20}", "age": [0-9]{1,3}\}"#, r#"{"name": "John Smith", "age": 42}"#),
    ("[αβγ]+ [^\\n]{0,10}", "αβγα hello wor"),
    ("(a|ab)(c|bcd)(d*)", "abcdddd"),
    ("[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,4}", "john.doe@example.com"),
    ("\\d{4}-\\d{2}-\\d{2}", "2024-01-15"),
    ("(true|false|null|-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?)", "-12.5e+10"),
    ("[^\"]{0,30}\"", "Hello, it is a fine day\""),
    ("(\\w+\\s?){1,5}", "one two three four five"),
];

#[test]
fn regex_masks_equal_llguidance() {
    for v in vocabularies() {
        for &(rx, input) in REGEX_CASES {
            let ours = grammar::regex::compile(rx).unwrap();
            let peer = llguidance::api::TopLevelGrammar::from_regex(rx);
            check(&v, rx, peer, &ours, &encode(&v, input));
        }
    }
}

/// `x (sep x)*` as a left-recursive list.
fn sep_list(b: &mut GrammarBuilder, name: &str, x: SymbolId, sep: &[SymbolId]) -> SymbolId {
    let more = b.add_nonterminal(&format!("{name}_more"));
    let mut rhs = sep.to_vec();
    rhs.push(x);
    b.add_rule(more, &rhs);
    let star = b.repeat(more, 0, None).unwrap();
    let list = b.add_nonterminal(name);
    b.add_rule(list, &[x, star]);
    list
}

fn arithmetic() -> (String, earley::Grammar) {
    let lark = r#"
start: expr
expr: term (("+"|"-") term)*
term: NUMBER | "(" expr ")"
NUMBER: /[0-9]+/
%ignore /[ \t]+/
"#;
    let mut b = GrammarBuilder::new();
    let number = b.add_lexeme(LexemeSpec::regex("[0-9]+"));
    let (plus, minus, open, close) =
        (b.literal("+"), b.literal("-"), b.literal("("), b.literal(")"));
    let op = b.choice("op", &[&[plus], &[minus]]);
    let expr = b.add_nonterminal("expr");
    let term = b.choice("term", &[&[number]]);
    b.add_rule(term, &[open, expr, close]);
    let list = sep_list(&mut b, "terms", term, &[op]);
    b.add_rule(expr, &[list]);
    b.add_ignore(RegexAst::Regex("[ \\t]+".into()));
    (lark.to_string(), b.build(expr, Limits::default()).unwrap())
}

fn json_like() -> (String, earley::Grammar) {
    let lark = r#"
start: list
list: "[" (value ("," value)*)? "]"
value: NUMBER | STRING | list
NUMBER: /-?[0-9]+/
STRING: /"[^"]*"/
%ignore /[ \n]+/
"#;
    let mut b = GrammarBuilder::new();
    let number = b.add_lexeme(LexemeSpec::regex("-?[0-9]+"));
    let string = b.add_lexeme(LexemeSpec::regex("\"[^\"]*\""));
    let (open, comma, close) = (b.literal("["), b.literal(","), b.literal("]"));
    let list = b.add_nonterminal("list");
    let value = b.choice("value", &[&[number], &[string], &[list]]);
    let values = sep_list(&mut b, "values", value, &[comma]);
    let values_opt = b.optional(values);
    b.add_rule(list, &[open, values_opt, close]);
    b.add_ignore(RegexAst::Regex("[ \\n]+".into()));
    (lark.to_string(), b.build(list, Limits::default()).unwrap())
}

fn keywords() -> (String, earley::Grammar) {
    let lark = r#"
start: stmt+
stmt: "if" ID ";" | ID "=" NUMBER ";"
ID: /[a-z]+/
NUMBER: /[0-9]+/
%ignore " "
"#;
    let mut b = GrammarBuilder::new();
    let id = b.add_lexeme(LexemeSpec::regex("[a-z]+"));
    let number = b.add_lexeme(LexemeSpec::regex("[0-9]+"));
    let (kw_if, semi, eq) = (b.literal("if"), b.literal(";"), b.literal("="));
    let stmt = b.choice("stmt", &[&[kw_if, id, semi], &[id, eq, number, semi]]);
    let stmts = b.repeat(stmt, 1, None).unwrap();
    b.add_ignore(RegexAst::Literal(" ".into()));
    (lark.to_string(), b.build(stmts, Limits::default()).unwrap())
}

fn lazy_body() -> (String, earley::Grammar) {
    let lark = r#"
start: "A:" body "B" body
body[lazy]: /[a-z ]*!/
"#;
    let mut b = GrammarBuilder::new();
    let a = b.literal("A:");
    let bb = b.literal("B");
    let body = b.add_lexeme(LexemeSpec::regex("[a-z ]*!").lazy());
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[a, body, bb, body]);
    (lark.to_string(), b.build(start, Limits::default()).unwrap())
}

fn special() -> (String, earley::Grammar) {
    let lark = r#"
start: TEXT <|endofprompt|> "ok"
TEXT: /[a-z ]+/
"#;
    let mut b = GrammarBuilder::new();
    let text = b.add_lexeme(LexemeSpec::regex("[a-z ]+"));
    let sp = b.special_token(SpecialToken::Name("<|endofprompt|>".into()));
    let ok = b.literal("ok");
    let start = b.add_nonterminal("start");
    b.add_rule(start, &[text, sp, ok]);
    (lark.to_string(), b.build(start, Limits::default()).unwrap())
}

#[test]
fn cfg_masks_equal_llguidance() {
    let cases: Vec<(&str, fn() -> (String, earley::Grammar), &str)> = vec![
        ("arithmetic", arithmetic, "12 + (3 - 4)+5 -(((6)))"),
        ("json_like", json_like, "[1, \"a b\", [2, []],\n -3]"),
        ("keywords", keywords, "if x; iff = 3; if if;ab=12;"),
        ("lazy", lazy_body, "A:hello world!Bbye!"),
    ];
    for v in vocabularies() {
        for (name, make, input) in &cases {
            let (lark, ours) = make();
            let peer = llguidance::api::TopLevelGrammar::from_lark(lark);
            check(&v, name, peer, &ours, &encode(&v, input));
        }
    }
}

#[test]
fn special_token_masks_equal_llguidance() {
    let v = vocab("o200k", bpe::Tokenizer::o200k_base());
    let (lark, ours) = special();
    let sp = TokenId(v.tokenizer.special_id("<|endofprompt|>").unwrap());
    let mut tokens = encode(&v, "hello there");
    tokens.push(sp);
    tokens.extend(encode(&v, "ok"));
    check(&v, "special", llguidance::api::TopLevelGrammar::from_lark(lark), &ours, &tokens);
}

/// Shared Lark grammars through our Lark front-end and llguidance's, with
/// sample inputs (the one shipped with the grammar, or written here).
#[test]
fn shared_lark_grammar_masks_equal_llguidance() {
    let Some(dir) = compare::shared::data_dir_or_skip("mask differential on shared grammars")
    else {
        return;
    };
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    let cases = [
        ("grammars/lark/syncode/calc_grammar.lark", "1 + 2 * (3 - 4.5) / 6 - ((7))".to_string()),
        (
            "grammars/lark/syncode/json_grammar.lark",
            r#"{"a": [1, -2.5e3, true, null], "b": {"c": ""}}"#.to_string(),
        ),
        ("grammars/lark/llguidance/rfc.lark", read("grammars/lark/llguidance/rfc.xml")),
    ];
    let v = vocab("o200k", bpe::Tokenizer::o200k_base());
    for (path, input) in cases {
        let src = read(path);
        let ours = grammar::lark::compile(&src, &grammar::Config::default()).unwrap();
        let peer = llguidance::api::TopLevelGrammar::from_lark(src);
        check(&v, path, peer, &ours, &encode(&v, &input));
    }
}
