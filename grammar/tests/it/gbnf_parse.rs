//! The GBNF parser and its translation to the Lark dialect.

use grammar::Config;

use crate::data;

#[test]
fn every_shared_gbnf_grammar_parses() {
    let Some(dir) = data::grammars_dir("shared GBNF grammars") else { return };
    let files = data::files_with_ext(&dir, "gbnf");
    assert!(files.len() >= 9, "expected the shared GBNF grammars, found {files:?}");
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let g = grammar::gbnf::parse(&src, &Config::default())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!g.rules.is_empty());
        let lark = grammar::gbnf::to_lark(&src, &Config::default())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        grammar::lark::parse(&lark, &Config::default())
            .unwrap_or_else(|e| panic!("{} as Lark:\n{lark}\n{e}", f.display()));
    }
}
