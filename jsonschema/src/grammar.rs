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
/// sequence derives the empty string), or a permutation phrase.
#[derive(Clone, Debug)]
pub struct Nonterminal {
    /// A readable name.
    pub name: String,
    /// The alternatives (empty when `permutation` is set).
    pub alternatives: Vec<Vec<Symbol>>,
    /// Members in any order (object properties with
    /// [`PropertyOrder::Any`](crate::PropertyOrder::Any)); the engine's
    /// [`earley::Permutation`] describes the language.
    pub permutation: Option<Permutation>,
}

/// Members that come in any order, separated by `separator`: each name at
/// most once, the required names always, between `min` and `max` members
/// (see [`earley::Permutation`]).
#[derive(Clone, Debug)]
pub struct Permutation {
    /// A member and its name (`None`: the member may repeat).
    pub members: Vec<(Symbol, Option<u32>)>,
    /// The names every derivation uses.
    pub required: Vec<u32>,
    /// Between consecutive members.
    pub separator: Option<Symbol>,
    /// The fewest members.
    pub min: u32,
    /// The most members (`None`: unbounded).
    pub max: Option<u32>,
    /// Whether the members must be distinct JSON values (`uniqueItems`;
    /// see [`earley::Permutation::distinct`]).
    pub distinct: bool,
    /// Whether a member may leave finitely many completions, so that the
    /// parser searches for one that differs from the earlier members (see
    /// [`earley::Permutation::search`]).
    pub search: bool,
    /// Whether members come in the order of their names, the unnamed ones
    /// after every name (`prefixItems` with `uniqueItems`; see
    /// [`earley::Permutation::ordered`]).
    pub ordered: bool,
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

    /// The number of rule alternatives (a permutation phrase counts one
    /// per member).
    pub fn num_rules(&self) -> usize {
        let rules = |n: &Nonterminal| {
            n.alternatives.len() + n.permutation.as_ref().map_or(0, |p| p.members.len())
        };
        self.nonterminals.iter().map(rules).sum()
    }
}
