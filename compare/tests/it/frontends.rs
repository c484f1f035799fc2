//! Differential tests of the Lark and GBNF front-ends against llguidance
//! 1.9.1 on a byte-level vocabulary (one token per byte): for every grammar
//! and input, the longest prefix each engine accepts byte by byte, and
//! whether it accepts the whole input, must be equal. GBNF reaches
//! llguidance through `grammar::gbnf::to_lark`, the translation that makes
//! the same rules lexemes.
//!
//! Inputs are hand-written per feature plus seeded random strings over each
//! grammar's own characters.

use grammar::Config;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn peer_factory() -> llguidance::ParserFactory {
    let env = peer_toktrie::ApproximateTokEnv::single_byte_env();
    compare::peer::llg_factory(&env, &[]).unwrap()
}

/// llguidance's longest accepted prefix and final acceptance.
fn peer_prefix(parser: &llguidance::TokenParser, input: &[u8]) -> (usize, bool) {
    let mut m = llguidance::Matcher::new(Ok(parser.deep_clone()));
    let toks: Vec<u32> = input.iter().map(|&b| u32::from(b)).collect();
    let n = m.validate_tokens(&toks).unwrap();
    if n < toks.len() {
        return (n, false);
    }
    m.consume_tokens(&toks).unwrap();
    (n, m.is_accepting().unwrap())
}

/// Ours: the same, byte by byte on the Earley parser.
fn our_prefix(g: &earley::Grammar, input: &[u8]) -> (usize, bool) {
    let mut p = earley::Parser::new(g, &|_| None).unwrap();
    for (i, &b) in input.iter().enumerate() {
        if !p.try_consume_byte(b).unwrap() {
            return (i, false);
        }
    }
    (input.len(), p.is_accepting().unwrap())
}

/// Random strings over the characters of `src` (plus a few others), seeded.
fn random_inputs(src: &str, seed: u64, n: usize) -> Vec<String> {
    let mut alphabet: Vec<char> = src.chars().filter(|c| !c.is_control()).collect();
    alphabet.extend(['\n', ' ', 'a', '0']);
    alphabet.sort_unstable();
    alphabet.dedup();
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let len = rng.random_range(0..14);
            (0..len).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect()
        })
        .collect()
}

/// Random walks along the bytes our parser allows (ASCII characters of
/// `src`), each ending with a random byte: deep prefixes where the two
/// engines' lexing rules meet.
fn guided_inputs(g: &earley::Grammar, src: &str, seed: u64, n: usize) -> Vec<String> {
    let mut alphabet: Vec<u8> = src.bytes().filter(|b| b.is_ascii() && *b >= b' ').collect();
    alphabet.extend(b"\n a0");
    alphabet.sort_unstable();
    alphabet.dedup();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut p = earley::Parser::new(g, &|_| None).unwrap();
        let mut s = Vec::new();
        let len = rng.random_range(1..40);
        while s.len() < len {
            let start = rng.random_range(0..alphabet.len());
            let next = (0..alphabet.len())
                .map(|i| alphabet[(start + i) % alphabet.len()])
                .find(|&b| p.try_consume_byte(b).unwrap());
            match next {
                Some(b) => s.push(b),
                None => break,
            }
        }
        if rng.random_bool(0.5) {
            s.push(alphabet[rng.random_range(0..alphabet.len())]);
        }
        out.push(String::from_utf8(s).unwrap());
    }
    out
}

fn compare(name: &str, lark: &str, ours: &earley::Grammar, inputs: &[String]) {
    let factory = peer_factory();
    let grammar = llguidance::api::TopLevelGrammar::from_lark(lark.to_string());
    let peer = factory
        .create_parser(grammar)
        .unwrap_or_else(|e| panic!("{name}: llguidance rejects:\n{lark}\n{e}"));
    let mut seen = 0;
    for input in inputs {
        let bytes = input.as_bytes();
        assert_eq!(our_prefix(ours, bytes), peer_prefix(&peer, bytes), "{name}: {input:?}");
        seen += 1;
    }
    assert_eq!(seen, inputs.len());
}

fn lark_case(lark: &str, inputs: &[&str]) {
    let ours = grammar::lark::compile(lark, &Config::default())
        .unwrap_or_else(|e| panic!("ours rejects:\n{lark}\n{e}"));
    let mut all: Vec<String> = inputs.iter().map(|s| s.to_string()).collect();
    all.extend(random_inputs(lark, 7, 100));
    all.extend(guided_inputs(&ours, lark, 7, 100));
    compare(lark, lark, &ours, &all);
}

#[test]
fn lark_features_match_llguidance() {
    let cases: &[(&str, &[&str])] = &[
        (
            "start: greeting NAME\ngreeting: \"hi \" | \"hello \"\nNAME: /[a-z]+/",
            &["hi bob", "hey"],
        ),
        ("start: \"a\"* \"b\"+ \"c\"? \"d\"{2} \"e\"{1,2}", &["bbdde", "aabcddee"]),
        ("start: A~2..3 [\"x\"]\nA: \"a\"", &["aa", "aaax"]),
        ("start: \"ab\"i /c.d/s \"e\"..\"g\"+", &["aBc\ndef", "ABcxdgg"]),
        ("start: NUM\nNUM: SIGN? DIGIT+ (\".\" DIGIT+)?\nSIGN: \"-\"\nDIGIT: /[0-9]/", &["-1.5"]),
        ("start: X\nX: /[a-z]+/ & ~\"ab\"", &["ab", "abc"]),
        ("start: /a+/ \"a\" | /b*/ \"c\"", &["aa", "bbc", "c"]),
        ("start: x\nx: \"a\" \"b\"\n%ignore \" \"", &["a b", "a  b", "ab", " ab", "ab "]),
        ("start: INT (\",\" INT)*\n%import common.INT", &["1,22,3"]),
        ("start: NUMBER\n%import common.NUMBER", &["1.", ".5", "1e5", "1.e5"]),
        ("start: ESCAPED_STRING\n%import common.ESCAPED_STRING", &["\"a\\\"b\"", "\"a\nb\""]),
        ("start: C_COMMENT\n%import common.C_COMMENT", &["/* * */", "/**/ */"]),
        (
            "start: CNAME WS_INLINE SIGNED_NUMBER\n%import common (CNAME, WS_INLINE, SIGNED_NUMBER)",
            &["x1 -2.5e3"],
        ),
        ("start: x \"!\"\nx[lazy]: /[a-z]+/", &["a!", "ab!"]),
        ("start: x\nx[suffix=\"</a>\"]: /.*/", &["b</a>", "b</a>c"]),
        ("start: %regex {\"substring_words\": \"foo bar. baz\"}", &["bar. ", "o"]),
        ("start: a\na: a \"x\" | \"y\"", &["yxx"]),
        (
            "start: \"x\" %json {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, \
             \"b\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}, \"required\": [\"a\"]} \"y\"",
            &["x{\"a\":1}y", "x{ \"a\" : -2 , \"b\": [\"q\"] }y", "x{\"b\":[]}y"],
        ),
        (
            "start: TEXT | fun_call\nTEXT: /[^{](.|\\n)*/\nfun_call: %json {\"type\": \"object\", \
             \"properties\": {\"name\": {\"const\": \"get_weather\"}}, \"required\": [\"name\"]}",
            &["no call", "{\"name\":\"get_weather\"}", "{\"name\":\"x\"}"],
        ),
    ];
    for (lark, inputs) in cases {
        lark_case(lark, inputs);
    }
}

#[test]
fn shared_lark_grammars_match_llguidance() {
    let Some(dir) = compare::shared::data_dir_or_skip("front-end differential (Lark)") else {
        return;
    };
    let dir = dir.join("grammars/lark");
    for rel in [
        "llguidance/rfc.lark",
        "llguidance/lark.lark",
        "lark-parser/json.lark",
        "syncode/json_grammar.lark",
        "syncode/calc_grammar.lark",
        "syncode/c_grammar.lark",
        "syncode/java_grammar.lark",
    ] {
        let src = std::fs::read_to_string(dir.join(rel)).unwrap();
        let ours = grammar::lark::compile(&src, &Config::default()).unwrap();
        let mut inputs = random_inputs(&src, 11, 50);
        inputs.extend(guided_inputs(&ours, &src, 11, 50));
        if rel.starts_with("llguidance/rfc") {
            inputs.push(std::fs::read_to_string(dir.join("llguidance/rfc.xml")).unwrap());
        }
        inputs.push(std::fs::read_to_string(dir.join("llguidance/blog.sample.json")).unwrap());
        compare(rel, &src, &ours, &inputs);
    }
}

#[test]
fn gbnf_grammars_match_llguidance_through_to_lark() {
    let mut cases: Vec<(String, String)> = [
        "root ::= [a-c0-9_]+ \"!\"",
        "root ::= [^a-c] . \"x\"?",
        "root ::= item+\nitem ::= \"- \" [a-z]+ \"\\n\"",
        "root ::= expr\nexpr ::= num (\"+\" num)*\nnum ::= [0-9]+ ws\nws ::= [ ]*",
        "root ::= \"(\" root \")\" | \"x\"",
    ]
    .iter()
    .map(|s| (s.to_string(), s.to_string()))
    .collect();
    if let Some(dir) = compare::shared::data_dir_or_skip("front-end differential (GBNF)") {
        for entry in std::fs::read_dir(dir.join("grammars/gbnf")).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "gbnf") {
                cases.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    for (name, src) in cases {
        let ours = grammar::gbnf::compile(&src, &Config::default()).unwrap();
        let lark = grammar::gbnf::to_lark(&src, &Config::default()).unwrap();
        let mut inputs = random_inputs(&src, 3, 100);
        inputs.extend(guided_inputs(&ours, &src, 3, 100));
        compare(&name, &lark, &ours, &inputs);
    }
}

/// A seeded random Lark grammar: a start rule, two rules and two terminals
/// over a small alphabet, with every operator.
///
/// No `%ignore`: the engines differ on ignored text next to a lexeme that
/// matches the empty string at the start or end of the text. llguidance
/// counts the empty match as a lexeme, so `start: A "b"`, `A: "a"?`,
/// `%ignore " "` accepts `" b"` there; our builder makes nullable lexemes
/// optional symbols, so ignored text before the first real lexeme is
/// rejected (see `ignore_next_to_a_nullable_lexeme_is_a_documented_difference`).
fn random_grammar(rng: &mut SmallRng) -> String {
    fn pick<'a>(rng: &mut SmallRng, xs: &[&'a str]) -> &'a str {
        xs[rng.random_range(0..xs.len())]
    }
    fn body(rng: &mut SmallRng, atoms: &[&str], depth: u32) -> String {
        let alts = rng.random_range(1..4);
        let mut out = Vec::new();
        for _ in 0..alts {
            let n = rng.random_range(if depth == 0 { 1 } else { 0 }..4);
            let mut seq = Vec::new();
            for _ in 0..n {
                let atom = if depth < 2 && rng.random_bool(0.2) {
                    format!("({})", body(rng, atoms, depth + 1))
                } else {
                    pick(rng, atoms).to_string()
                };
                let op = pick(rng, &["", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}"]);
                seq.push(format!("{atom}{op}"));
            }
            out.push(seq.join(" "));
        }
        out.join(" | ")
    }
    const TERM_ATOMS: &[&str] =
        &["\"a\"", "\"b\"", "\"ab\"", "/[ab]+/", "/c*/", "\"a\"..\"c\"", "\"B\"i"];
    const RULE_ATOMS: &[&str] =
        &["\"a\"", "\"b\"", "\"ab\"", "/[ab]+/", "/c+/", "T", "U", "r", "s", "\"c\""];
    let mut g = format!("start: {}\n", body(rng, RULE_ATOMS, 0));
    // The last alternative keeps `r` productive: llguidance keeps rules
    // that derive no string and allows the prefixes they predict (which no
    // text can complete), where our builder removes them and is exact.
    g += &format!("r: {} | \"c\"\n", body(rng, RULE_ATOMS, 0));
    g += &format!("s: {}\n", body(rng, &RULE_ATOMS[..7], 0));
    g += &format!("T: {}\n", body(rng, TERM_ATOMS, 0));
    g += &format!("U: {}\n", body(rng, &["T", "\"c\"", "/b?a/"], 0));
    g
}

#[test]
fn random_lark_grammars_match_llguidance() {
    let mut rng = SmallRng::seed_from_u64(2024);
    let mut compared = 0;
    for _ in 0..150 {
        let src = random_grammar(&mut rng);
        // Both engines must agree on whether the grammar compiles at all.
        let ours = grammar::lark::compile(&src, &Config::default());
        let grammar = llguidance::api::TopLevelGrammar::from_lark(src.clone());
        let peer = peer_factory().create_parser(grammar);
        let ours = match ours {
            Ok(g) => g,
            Err(e) => {
                // We reject grammars whose language is empty (a rule with no
                // finite derivation); llguidance compiles them and accepts
                // nothing. Check that it accepts nothing.
                if let Ok(peer) = &peer {
                    assert!(
                        e.message().contains("accepts no string"),
                        "only ours rejects: {e}\n{src}"
                    );
                    for input in random_inputs("ab c", 1, 50) {
                        assert!(!peer_prefix(peer, input.as_bytes()).1, "{src}\n{input:?}");
                    }
                }
                continue;
            }
        };
        let (s1, s2) = (rng.random(), rng.random());
        // derivre 0.3.13's simplifier panics on some of these regexes in our
        // lexer (smallest found: `/(b?a){0,2}c|(b?a){2}c/` on "bab",
        // simplify.rs:292), where llguidance does not. The lexer turns the
        // panic into a sticky `EngineFault` error; such grammars are skipped
        // here so the front-end comparison runs on the rest.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut inputs = random_inputs("ab c", s1, 30);
            inputs.extend(guided_inputs(&ours, "ab cB", s2, 30));
            compare(&src, &src, &ours, &inputs);
        }));
        compared += compared_unless_engine_fault(&src, run) as usize;
    }
    assert!(compared >= 100, "only {compared} grammars compared");
}

/// Whether a comparison ran to the end; a run stopped by the lexer's
/// `EngineFault` error (a known derivre fault) is reported and skipped, any
/// other failure (a mismatch) is re-raised.
fn compared_unless_engine_fault(src: &str, run: std::thread::Result<()>) -> bool {
    let Err(e) = run else { return true };
    let msg = e
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| e.downcast_ref::<&str>().copied())
        .unwrap_or("");
    assert!(msg.contains("EngineFault"), "{msg}\n{src}");
    println!("KNOWN ISSUE: derivre fault, reported as a lexer error, on\n{src}");
    false
}

/// A seeded random GBNF grammar: `root`, a recursive rule and rules that
/// become terminals, over literals, classes, `.` and every repetition.
fn random_gbnf(rng: &mut SmallRng) -> String {
    fn pick<'a>(rng: &mut SmallRng, xs: &[&'a str]) -> &'a str {
        xs[rng.random_range(0..xs.len())]
    }
    fn body(rng: &mut SmallRng, atoms: &[&str]) -> String {
        let alts = rng.random_range(1..4);
        let mut out = Vec::new();
        for _ in 0..alts {
            let mut seq = Vec::new();
            for _ in 0..rng.random_range(1..4) {
                let atom = pick(rng, atoms);
                let op = pick(rng, &["", "", "*", "+", "?", "{2}", "{0,2}", "{1,}"]);
                seq.push(format!("{atom}{op}"));
            }
            out.push(seq.join(" "));
        }
        out.join(" | ")
    }
    const LEAVES: &[&str] = &["\"a\"", "\"ab\"", "[a-c]", "[^ab]", "\"b\"", "(\"a\" | [bc])"];
    let mut g = format!("root ::= {}\n", body(rng, &["\"a\"", "item", "word", "rec", "[b-c]"]));
    g += &format!("rec ::= \"(\" rec \")\" | {}\n", body(rng, &["item", "\"c\"", "word"]));
    g += &format!("item ::= {}\n", body(rng, LEAVES));
    g += &format!("word ::= {}\n", body(rng, &["item", "\"b\"", "[ab]"]));
    g
}

#[test]
fn random_gbnf_grammars_match_llguidance() {
    let mut rng = SmallRng::seed_from_u64(77);
    let mut compared = 0;
    for _ in 0..100 {
        let src = random_gbnf(&mut rng);
        let ours = grammar::gbnf::compile(&src, &Config::default())
            .unwrap_or_else(|e| panic!("{src}\n{e}"));
        let lark = grammar::gbnf::to_lark(&src, &Config::default()).unwrap();
        let (s1, s2) = (rng.random(), rng.random());
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut inputs = random_inputs("abc()x", s1, 30);
            inputs.extend(guided_inputs(&ours, "abc()x", s2, 30));
            compare(&src, &lark, &ours, &inputs);
        }));
        compared += compared_unless_engine_fault(&src, run) as usize;
    }
    assert!(compared >= 70, "only {compared} grammars compared");
}

/// Documented difference: `%ignore` next to a lexeme that matches the
/// empty string. llguidance scans the empty match as a lexeme, so
/// `start: A "b"`, `A: "a"?`, `%ignore " "` accepts `" b"` (ignored text
/// after an empty `A`) but rejects `" a b"`: whether leading whitespace is
/// allowed depends on a zero-width lexeme. Ours never matches the empty
/// string as a lexeme (a nullable lexeme is an optional symbol), and ignored
/// text only stands between lexemes, never before the first (as in
/// `start: "a" "b"`, where both engines reject `" ab"`): the same rule with
/// or without `A`. This test pins both behaviors.
#[test]
fn ignore_next_to_a_nullable_lexeme_is_a_documented_difference() {
    let f = peer_factory();
    let lark = "start: A \"b\"\nA: \"a\"?\n%ignore \" \"";
    let ours = grammar::lark::compile(lark, &Config::default()).unwrap();
    let peer = f.create_parser(llguidance::api::TopLevelGrammar::from_lark(lark.into())).unwrap();
    // Leading ignored text: llguidance only when `A` is empty.
    assert_eq!(peer_prefix(&peer, b" b"), (2, true));
    assert_eq!(peer_prefix(&peer, b" a b"), (1, false));
    assert_eq!(our_prefix(&ours, b" b"), (0, false));
    assert_eq!(our_prefix(&ours, b" a b"), (0, false));
    // Without a nullable lexeme both reject leading ignored text.
    let plain = "start: \"a\" \"b\"\n%ignore \" \"";
    let ours_plain = grammar::lark::compile(plain, &Config::default()).unwrap();
    let peer_plain =
        f.create_parser(llguidance::api::TopLevelGrammar::from_lark(plain.into())).unwrap();
    assert_eq!(peer_prefix(&peer_plain, b" a b"), (0, false));
    assert_eq!(our_prefix(&ours_plain, b" a b"), (0, false));
    // Everywhere else the two agree.
    for input in ["b", "a b", "ab", "a  b", "b "] {
        assert_eq!(our_prefix(&ours, input.as_bytes()), peer_prefix(&peer, input.as_bytes()));
    }
}

/// Documented difference: rules that derive no string. In
/// `start: "a" | r`, `r: "b" r` (no base case), no sentence starts with
/// `b`. Our builder drops such rules, so the mask after nothing holds `a`
/// only (exact: every allowed prefix extends to a sentence); llguidance
/// keeps them and allows `b`, `bb`, ... which no text can complete.
#[test]
fn unproductive_rules_are_a_documented_difference() {
    let f = peer_factory();
    let lark = "start: \"a\" | r\nr: \"b\" r";
    let ours = grammar::lark::compile(lark, &Config::default()).unwrap();
    let peer = f.create_parser(llguidance::api::TopLevelGrammar::from_lark(lark.into())).unwrap();
    assert_eq!(our_prefix(&ours, b"a"), (1, true));
    assert_eq!(peer_prefix(&peer, b"a"), (1, true));
    assert_eq!(our_prefix(&ours, b"b"), (0, false));
    // llguidance allows the dead end, and never accepts along it.
    for n in 1..20 {
        assert_eq!(peer_prefix(&peer, "b".repeat(n).as_bytes()), (n, false));
    }
}
