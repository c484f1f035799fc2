//! The compiled grammar: regex lexemes and context-free rules over them.

use derivre::RegexAst;

/// Index of a lexeme in [`Grammar::lexemes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LexemeId(pub u32);

/// Index of a nonterminal in [`Grammar::nonterminals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NonterminalId(pub u32);

/// A grammar symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// A terminal: one lexeme.
    Lexeme(LexemeId),
    /// A nonterminal.
    Nonterminal(NonterminalId),
}

/// A lexeme: a regular language over bytes (UTF-8), never containing the
/// empty string.
#[derive(Clone, Debug)]
pub struct Lexeme {
    /// A readable name (`"{"`, `number`, `key:"id"`, `string`...).
    pub name: String,
    /// The language, as a derivre AST.
    pub regex: RegexAst,
}

/// A nonterminal with its alternatives (each a sequence of symbols; an empty
/// sequence derives the empty string).
#[derive(Clone, Debug)]
pub struct Nonterminal {
    /// A readable name.
    pub name: String,
    /// The alternatives.
    pub alternatives: Vec<Vec<Symbol>>,
}

/// A context-free grammar over regex lexemes, as compiled from a schema.
///
/// Every nonterminal is productive (derives at least one string). Whitespace
/// is part of the structural lexemes (`{`, `,`, `:` ...), so the grammar has
/// no ignored lexemes; the language is exactly the set of texts accepted.
#[derive(Clone, Debug)]
pub struct Grammar {
    /// The lexemes.
    pub lexemes: Vec<Lexeme>,
    /// The nonterminals.
    pub nonterminals: Vec<Nonterminal>,
    /// The start symbol.
    pub start: NonterminalId,
}

impl Grammar {
    /// The lexeme with this id.
    pub fn lexeme(&self, id: LexemeId) -> &Lexeme {
        &self.lexemes[id.0 as usize]
    }

    /// The nonterminal with this id.
    pub fn nonterminal(&self, id: NonterminalId) -> &Nonterminal {
        &self.nonterminals[id.0 as usize]
    }

    /// The number of rule alternatives.
    pub fn num_rules(&self) -> usize {
        self.nonterminals.iter().map(|n| n.alternatives.len()).sum()
    }
}
