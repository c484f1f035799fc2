//! Lowering of the compiled grammar into the `earley` engine.

use earley::{GrammarBuilder, GrammarError, Limits, SymbolId};
use lexer::LexemeSpec;

use crate::grammar::{Grammar, Symbol};

impl Grammar {
    /// Builds the `earley` grammar that serves masks for this grammar.
    ///
    /// Lexemes keep their regexes (greedy; whitespace lives inside the
    /// structural lexemes, so no `%ignore` lexeme is added); nonterminals,
    /// alternatives and permutation phrases map one to one.
    ///
    /// # Errors
    /// The engine's limits, or a lexeme it cannot compile.
    pub fn to_earley(&self, limits: Limits) -> Result<earley::Grammar, GrammarError> {
        let mut b = GrammarBuilder::new();
        let lexemes: Vec<SymbolId> = self
            .lexemes
            .iter()
            .map(|l| b.add_lexeme(LexemeSpec::new(l.name.clone(), l.regex.clone())))
            .collect();
        let start = self.add_rules(&mut b, &lexemes);
        b.build(start, limits)
    }

    /// The pattern strings this grammar's lexer starts from parsed, when
    /// its lexemes use a `format` (each format's regexes are parsed once
    /// per process; see `lexer::Preparsed`). [`add_rules`](Grammar::add_rules)
    /// sets it; a caller building its own `lexer::LexerSpec` from
    /// [`lexemes`](Grammar::lexemes) sets it with
    /// `LexerSpec::set_preparsed`.
    pub fn preparsed(&self) -> Option<std::sync::Arc<lexer::Preparsed>> {
        crate::formats::preparsed_for(self.lexemes.iter().map(|l| &l.regex))
    }

    /// Adds this grammar's nonterminals and rules to `b`, with `lexemes[i]`
    /// standing for lexeme `i` (the caller adds the lexemes its own way),
    /// and returns the start symbol. For front-ends that embed a schema in
    /// a larger grammar (Lark's `%json`). When the lexemes use a `format`,
    /// the builder's lexer is set to start from its patterns, parsed once
    /// per process (`formats.rs`).
    pub fn add_rules(&self, b: &mut GrammarBuilder, lexemes: &[SymbolId]) -> SymbolId {
        if let Some(set) = self.preparsed() {
            b.preparsed(set);
        }
        let nts: Vec<SymbolId> =
            self.nonterminals.iter().map(|n| b.add_nonterminal(&n.name)).collect();
        let map = |s: &Symbol| match s {
            Symbol::Lexeme(l) => lexemes[l.0 as usize],
            Symbol::Nonterminal(n) => nts[n.0 as usize],
        };
        for (i, n) in self.nonterminals.iter().enumerate() {
            for alt in &n.alternatives {
                let rhs: Vec<SymbolId> = alt.iter().map(map).collect();
                b.add_rule(nts[i], &rhs);
            }
            if let Some(p) = &n.permutation {
                let permutation = earley::Permutation {
                    members: p.members.iter().map(|(s, name)| (map(s), *name)).collect(),
                    required: p.required.clone(),
                    separator: p.separator.as_ref().map(map),
                    min: p.min,
                    max: p.max,
                    distinct: p.distinct,
                    search: p.search,
                    ordered: p.ordered,
                };
                b.add_permutation(nts[i], permutation);
            }
        }
        nts[self.start.0 as usize]
    }
}
