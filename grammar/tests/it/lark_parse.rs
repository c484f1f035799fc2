//! The Lark-like parser: every shared grammar parses, every construct gives
//! the expected tree, every syntax error has its line and column.

use grammar::Config;

use crate::data;

#[test]
fn every_shared_lark_grammar_parses() {
    let Some(dir) = data::grammars_dir("shared Lark grammars") else { return };
    let files = data::files_with_ext(&dir, "lark");
    assert!(files.len() >= 12, "expected the shared Lark grammars, found {files:?}");
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let g = grammar::lark::parse(&src, &Config::default())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!g.items.is_empty(), "{}", f.display());
        // Printing and parsing again gives the same definitions.
        let printed = grammar::lark::print(&g);
        let again = grammar::lark::parse(&printed, &Config::default())
            .unwrap_or_else(|e| panic!("{} printed:\n{printed}\n{e}", f.display()));
        assert_eq!(grammar::lark::print(&again), printed, "{}", f.display());
    }
}
