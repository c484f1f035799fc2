//! The shared corpus of grammars: what compiles, what is rejected (matching
//! llguidance 1.9.1, which rejects the same files for the same reasons), and
//! the sample inputs the corpus provides.

use grammar::{Config, ErrorKind};

use crate::data;
use crate::util::viable_prefix;

fn read(dir: &std::path::Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The files llguidance 1.9.1 rejects, and the kind and line of our error.
const REJECTED: &[(&str, ErrorKind, u32)] = &[
    // No `start` rule: a library of terminals.
    ("lark/lark-parser/common.lark", ErrorKind::UnknownName, 0),
    // `OP: /[+*]|[?](?![a-z])/` uses a look-ahead.
    ("lark/lark-parser/lark.lark", ErrorKind::Invalid, 48),
    // `%declare _INDENT _DEDENT` (llguidance first trips on the template on
    // line 253; both are unsupported).
    ("lark/lark-parser/python.lark", ErrorKind::Unsupported, 275),
    // Rule and terminal priorities (`operand.3`, `AGGREGATION.8`).
    ("lark/syncode/go_grammar.lark", ErrorKind::Unsupported, 203),
    ("lark/syncode/sql_grammar.lark", ErrorKind::Unsupported, 144),
];

#[test]
fn shared_lark_grammars_compile_like_llguidance() {
    let Some(dir) = data::grammars_dir("shared Lark grammars (compile)") else { return };
    let cfg = Config::default();
    for f in data::files_with_ext(&dir, "lark") {
        let rel = f.strip_prefix(&dir).unwrap().to_str().unwrap().to_string();
        let src = std::fs::read_to_string(&f).unwrap();
        let r = grammar::lark::compile(&src, &cfg);
        match REJECTED.iter().find(|(name, ..)| *name == rel) {
            Some(&(_, kind, line)) => {
                let e = r.err().unwrap_or_else(|| panic!("{rel} should be rejected"));
                assert_eq!(e.kind(), kind, "{rel}: {e}");
                assert_eq!(e.line().unwrap_or(0), line, "{rel}: {e}");
            }
            None => {
                r.unwrap_or_else(|e| panic!("{rel}: {e}"));
            }
        }
    }
}

#[test]
fn priorities_can_be_ignored() {
    let Some(dir) = data::grammars_dir("shared Lark grammars (priorities)") else { return };
    let mut cfg = Config::default();
    cfg.ignore_priorities = true;
    for rel in ["lark/syncode/go_grammar.lark", "lark/syncode/sql_grammar.lark"] {
        let g = grammar::lark::compile(&read(&dir, rel), &cfg).unwrap_or_else(|e| panic!("{e}"));
        let sample: &[u8] = if rel.contains("go") {
            b"package main\n\nfunc main() {\n\tx := 1\n}\n"
        } else {
            b"SELECT a, b FROM t WHERE a = 1"
        };
        assert_eq!(viable_prefix(&g, sample), (sample.len(), true), "{rel}");
    }
}

/// The sample inputs, with the longest prefix llguidance 1.9.1 accepts
/// (byte tokenizer) and whether it accepts the whole input.
#[test]
fn shared_samples_match_llguidance() {
    let Some(dir) = data::grammars_dir("shared grammar samples") else { return };
    let cfg = Config::default();
    let rfc = grammar::lark::compile(&read(&dir, "lark/llguidance/rfc.lark"), &cfg).unwrap();
    let xml = read(&dir, "lark/llguidance/rfc.xml");
    assert_eq!(viable_prefix(&rfc, xml.as_bytes()), (xml.len(), true));

    let json = read(&dir, "lark/llguidance/blog.sample.json");
    let cases = [
        // `pair: string ":" _WS value` needs a space after `:`, and
        // arrays/objects allow `_WS` only after `[`, `{` and `,`: the
        // closing `\n  ]` of "interests" is the first rejected byte.
        ("lark/lark-parser/json.lark", 329, false),
        ("lark/syncode/json_grammar.lark", json.len(), true),
    ];
    for (rel, n, ok) in cases {
        let g = grammar::lark::compile(&read(&dir, rel), &cfg).unwrap();
        assert_eq!(viable_prefix(&g, json.as_bytes()), (n, ok), "{rel}");
    }
    let g = grammar::gbnf::compile(&read(&dir, "gbnf/json.gbnf"), &cfg).unwrap();
    assert_eq!(viable_prefix(&g, json.as_bytes()), (json.len(), true), "json.gbnf");
}
