//! The terminals `%import common.NAME` provides.
//!
//! The same 25 names as llguidance (Lark's `common.lark` list), written here
//! in the dialect itself with regexes the `derivre` engine accepts: Lark's
//! own file uses a lazy `.*?` and a look-behind for `ESCAPED_STRING` and
//! `C_COMMENT`, which are rewritten as plain regular expressions matching
//! the same strings (a string ends at its first unescaped quote, a comment
//! at its first `*/`). A raw line break may appear inside `ESCAPED_STRING`
//! but not right after a backslash, as in llguidance.

use std::sync::OnceLock;

use crate::config::Config;
use crate::lark::ast::{Def, Grammar, Item};

/// The definitions, one per line.
pub(crate) const COMMON: &str = r#"
DIGIT: "0".."9"
HEXDIGIT: "a".."f" | "A".."F" | DIGIT
INT: DIGIT+
SIGNED_INT: ["+" | "-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e" | "E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+" | "-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+" | "-"] NUMBER
ESCAPED_STRING: /"(\\.|[^"\\])*"/
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_" | LETTER) ("_" | LETTER | DIGIT)*
WS_INLINE: (" " | /\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
SQL_COMMENT: /--[^\n]*/
"#;

/// The parsed definitions (parsed once; the text is a constant, so a parse
/// error is a bug caught by the tests).
pub(crate) fn common() -> &'static [Def] {
    static DEFS: OnceLock<Vec<Def>> = OnceLock::new();
    DEFS.get_or_init(|| {
        let g: Grammar = crate::lark::parser::parse(COMMON, &Config::default().limits)
            .unwrap_or_else(|e| unreachable!("the common terminals parse: {e}"));
        g.items
            .into_iter()
            .filter_map(|i| match i {
                Item::Def(d) => Some(d),
                _ => None,
            })
            .collect()
    })
}

/// The names `%import common.NAME` accepts, for error messages.
pub(crate) fn names() -> Vec<&'static str> {
    common().iter().map(|d| d.name.name.as_str()).collect()
}
