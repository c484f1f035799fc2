//! Lowering of the compiled grammar into the `earley` engine.

use earley::{GrammarBuilder, GrammarError, Limits, SymbolId};
use lexer::LexemeSpec;

use crate::grammar::{Grammar, Symbol};

impl Grammar {
    /// Builds the `earley` grammar that serves masks for this grammar.
    ///
    /// Lexemes keep their regexes (greedy; whitespace lives inside the
    /// structural lexemes, so no `%ignore` lexeme is added); nonterminals and
    /// alternatives map one to one.
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
        }
        b.build(nts[self.start.0 as usize], limits)
    }
}
