//! Grammar construction: the builder front-ends lower into, and the compiled,
//! flat grammar the parser runs on.

use std::sync::Arc;

use lexer::{LexemeId, LexemeSpec, Lexer, LexerLimits, LexerSpec, Preparsed, RegexAst};
use rustc_hash::FxHashMap;

use crate::error::GrammarError;

/// A grammar symbol: a lexeme (terminal), a special token, or a nonterminal.
/// Handed out by one [`GrammarBuilder`] and meaningful only there.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SymbolId(u32);

impl SymbolId {
    /// The id as an index into per-symbol arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A special token terminal: matched by a token id, never by text.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum SpecialToken {
    /// A token named like `<|eom_id|>` (Lark `<|name|>`), resolved against
    /// the tokenizer when a parser is created.
    Name(String),
    /// Token ids, as inclusive ranges (Lark `<[128010]>`, `<[1-5,9]>`).
    Ids(Vec<(u32, u32)>),
}

impl SpecialToken {
    fn display(&self) -> String {
        match self {
            SpecialToken::Name(n) => n.clone(),
            SpecialToken::Ids(r) => {
                let parts: Vec<String> = r
                    .iter()
                    .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
                    .collect();
                format!("<[{}]>", parts.join(","))
            }
        }
    }
}

/// What a symbol stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A lexeme of the grammar's lexer.
    Lexeme(LexemeId),
    /// A special token; the index is into [`Grammar::special_tokens`].
    Special(u32),
    /// A nonterminal, defined by rules.
    Nonterminal,
}

/// Resource limits of a grammar and of its parsers. Exceeding one is an
/// error, never a hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Limits of the lexer.
    pub lexer: LexerLimits,
    /// The most symbols a grammar may have after desugaring.
    pub max_symbols: usize,
    /// The most rules a grammar may have after desugaring.
    pub max_rules: usize,
    /// The most Earley items in one row.
    pub max_items_per_row: usize,
    /// The most Earley items computed by one step: one mask, one token.
    pub max_items_per_step: usize,
    /// The most permutation-phrase states one parser keeps (each distinct
    /// set of names used in a phrase is one).
    pub max_phrase_states: usize,
    /// The most bytes one completion search of a distinct phrase with
    /// [`Permutation::search`] may push (a search runs after each byte
    /// inside such a phrase, in a mask walk too).
    pub max_search_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            lexer: LexerLimits::default(),
            max_symbols: 500_000,
            max_rules: 500_000,
            max_items_per_row: 100_000,
            max_items_per_step: 5_000_000,
            max_phrase_states: 1_000_000,
            max_search_bytes: 100_000,
        }
    }
}

impl Limits {
    /// These limits with [`lexer`](Limits::lexer) set to `value` (the lexer's limits).
    pub fn with_lexer(mut self, value: LexerLimits) -> Limits {
        self.lexer = value;
        self
    }

    /// These limits with [`max_symbols`](Limits::max_symbols) set to `value`.
    pub fn with_max_symbols(mut self, value: usize) -> Limits {
        self.max_symbols = value;
        self
    }

    /// These limits with [`max_rules`](Limits::max_rules) set to `value`.
    pub fn with_max_rules(mut self, value: usize) -> Limits {
        self.max_rules = value;
        self
    }

    /// These limits with [`max_items_per_row`](Limits::max_items_per_row) set to `value`.
    pub fn with_max_items_per_row(mut self, value: usize) -> Limits {
        self.max_items_per_row = value;
        self
    }

    /// These limits with [`max_items_per_step`](Limits::max_items_per_step) set to `value`.
    pub fn with_max_items_per_step(mut self, value: usize) -> Limits {
        self.max_items_per_step = value;
        self
    }

    /// These limits with [`max_search_bytes`](Limits::max_search_bytes) set to `value`.
    pub fn with_max_search_bytes(mut self, value: usize) -> Limits {
        self.max_search_bytes = value;
        self
    }

    /// These limits with [`max_phrase_states`](Limits::max_phrase_states) set to `value`.
    pub fn with_max_phrase_states(mut self, value: usize) -> Limits {
        self.max_phrase_states = value;
        self
    }
}

/// A permutation phrase: members that may come in any order, each name at
/// most once (an ID/LP rule; Cameron's permutation phrases). The
/// nonterminal it defines derives every sequence `m1 sep m2 sep … mk` of
/// members such that
///
/// - no name is used twice (a member with name `Some(n)` uses `n`; a
///   member with `None` may come any number of times),
/// - every name in `required` is used,
/// - `min <= k <= max`.
///
/// A JSON object with properties in any order is the motivating case:
/// one member per listed property (its name), one unnamed member per
/// pattern of additional keys, `,` as the separator. A context-free
/// grammar for this language needs a rule per subset of names (it grows
/// as `2^p`); the parser instead carries the set of names used in its
/// items, so the cost is that of the text, not of the subsets (see
/// `DESIGN.md`, "Permutation phrases").
///
/// ```
/// use structgen_earley::{GrammarBuilder, Limits, Permutation};
/// use lexer::LexemeSpec;
///
/// // a, b and c in any order, comma-separated, a and b required, c optional
/// let mut b = GrammarBuilder::new();
/// let (a, bb, c, comma) = (b.literal("a"), b.literal("b"), b.literal("c"), b.literal(","));
/// let any = b.add_nonterminal("any");
/// b.add_permutation(any, Permutation {
///     members: vec![(a, Some(0)), (bb, Some(1)), (c, Some(2))],
///     required: vec![0, 1],
///     separator: Some(comma),
///     min: 0,
///     max: None,
///     distinct: false,
///     search: false,
///     ordered: false,
/// });
/// let g = b.build(any, Limits::default()).unwrap();
/// for text in ["a,b", "b,a", "c,b,a", "b,c,a"] {
///     assert!(g.accepts(text.as_bytes()).unwrap(), "{text}");
/// }
/// for text in ["a", "a,a,b", "a,b,c,c", "ab", ""] {
///     assert!(!g.accepts(text.as_bytes()).unwrap(), "{text}");
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permutation {
    /// The members: a symbol, and the name it uses (`None`: repeatable).
    /// Several members may share a name (alternatives for one slot).
    pub members: Vec<(SymbolId, Option<u32>)>,
    /// The names that every derivation uses.
    pub required: Vec<u32>,
    /// A symbol between consecutive members, if any.
    pub separator: Option<SymbolId>,
    /// The fewest members.
    pub min: u32,
    /// The most members (`None`: unbounded).
    pub max: Option<u32>,
    /// Whether the members' texts must be pairwise distinct as JSON values
    /// (JSON Schema's `uniqueItems`): numbers by value, strings after
    /// their escapes are decoded, objects regardless of member order. A
    /// member's text is what its wrapper spans, a leading separator of
    /// whitespace and `,` skipped; a text that is not one JSON value
    /// compares by its bytes. The parser checks it when a member
    /// completes (see `DESIGN.md`, "Distinct members"); a parser of such a
    /// grammar keeps the consumed text and needs the byte-by-byte
    /// [`Recognizer`](toktrie::Recognizer) walk
    /// ([`Parser::needs_byte_walk`](crate::Parser::needs_byte_walk)).
    pub distinct: bool,
    /// With `distinct`: a member may leave finitely many completions (a
    /// bounded string, a closed object), so a prefix could have only
    /// members equal to earlier ones left to complete it. The parser then
    /// keeps masks exact by searching, after each byte inside such a
    /// phrase, for a completion that leaves every such phrase, and rejects
    /// the byte when there is none (see `DESIGN.md`, "Distinct members";
    /// [`Limits::max_search_bytes`] bounds one search). Without it the
    /// members must be free: every prefix of a member that its last
    /// lexeme may go on from has infinitely many completions.
    pub search: bool,
    /// Members in the order of their names (JSON Schema's `prefixItems`
    /// with `uniqueItems`): the member named `k` may come only as the
    /// `k`-th member, after the members named `0` to `k - 1`, and an
    /// unnamed member only after every name. Names are then `0..n`.
    pub ordered: bool,
}

#[derive(Clone, Debug)]
struct BuilderSymbol {
    name: String,
    kind: SymbolKind,
}

/// Builds a grammar over lexemes; front-ends (regex, Lark, GBNF, JSON
/// Schema) lower into it.
///
/// Lexemes are added with [`add_lexeme`](GrammarBuilder::add_lexeme) (any
/// [`RegexAst`], so intersections and complements are available), rules with
/// [`add_rule`](GrammarBuilder::add_rule); `%ignore` text with
/// [`add_ignore`](GrammarBuilder::add_ignore). [`build`](GrammarBuilder::build)
/// validates and compiles.
///
/// ```
/// use structgen_earley::{GrammarBuilder, Limits};
/// use lexer::LexemeSpec;
///
/// // list: "[" (INT ("," INT)*)? "]"  with spaces ignored
/// let mut b = GrammarBuilder::new();
/// let int = b.add_lexeme(LexemeSpec::regex("[0-9]+"));
/// let (open, comma, close) = (b.literal("["), b.literal(","), b.literal("]"));
/// let more = b.add_nonterminal("more");
/// b.add_rule(more, &[comma, int]);
/// let more_star = b.repeat(more, 0, None).unwrap();
/// let items = b.add_nonterminal("items");
/// b.add_rule(items, &[int, more_star]);
/// let items_opt = b.optional(items);
/// let list = b.add_nonterminal("list");
/// b.add_rule(list, &[open, items_opt, close]);
/// b.add_ignore(lexer::RegexAst::Regex("[ ]+".into()));
/// let grammar = b.build(list, Limits::default()).unwrap();
/// assert!(grammar.accepts(b"[1, 2 ,3]").unwrap());
/// assert!(!grammar.accepts(b"[1 2]").unwrap());
/// ```
#[derive(Clone, Debug, Default)]
pub struct GrammarBuilder {
    symbols: Vec<BuilderSymbol>,
    lexemes: LexerSpec,
    specials: Vec<SpecialToken>,
    rules: Vec<(SymbolId, Vec<SymbolId>)>,
    permutations: Vec<(SymbolId, Permutation)>,
    ignore: Vec<RegexAst>,
    literals: FxHashMap<String, SymbolId>,
    special_ids: FxHashMap<SpecialToken, SymbolId>,
    epsilon: Option<SymbolId>,
    optionals: FxHashMap<SymbolId, SymbolId>,
    initial_ignore: bool,
    ignore_once: bool,
    pending_error: Option<GrammarError>,
}

impl GrammarBuilder {
    /// An empty builder.
    pub fn new() -> GrammarBuilder {
        GrammarBuilder::default()
    }

    fn push_symbol(&mut self, name: String, kind: SymbolKind) -> SymbolId {
        let id = SymbolId(self.symbols.len() as u32);
        self.symbols.push(BuilderSymbol { name, kind });
        id
    }

    /// Adds a lexeme (a terminal) and returns its symbol. Every call makes a
    /// new lexeme, even for an equal regex (see [`literal`](GrammarBuilder::literal)
    /// for a deduplicating helper).
    pub fn add_lexeme(&mut self, spec: LexemeSpec) -> SymbolId {
        let name = spec.name.clone();
        let id = self.lexemes.add(spec);
        self.push_symbol(name, SymbolKind::Lexeme(id))
    }

    /// The lexeme matching exactly `text` (greedy), shared by every call with
    /// the same text.
    pub fn literal(&mut self, text: &str) -> SymbolId {
        if let Some(&s) = self.literals.get(text) {
            return s;
        }
        let s = self.add_lexeme(LexemeSpec::literal(text));
        self.literals.insert(text.to_string(), s);
        s
    }

    /// A special-token terminal, shared by every call with the same token.
    pub fn special_token(&mut self, token: SpecialToken) -> SymbolId {
        if let Some(&s) = self.special_ids.get(&token) {
            return s;
        }
        let idx = self.specials.len() as u32;
        self.specials.push(token.clone());
        let s = self.push_symbol(token.display(), SymbolKind::Special(idx));
        self.special_ids.insert(token, s);
        s
    }

    /// Adds a nonterminal named `name` (the name is for messages only; every
    /// call makes a new symbol). Define it with [`add_rule`](GrammarBuilder::add_rule).
    pub fn add_nonterminal(&mut self, name: &str) -> SymbolId {
        self.push_symbol(name.to_string(), SymbolKind::Nonterminal)
    }

    /// Adds the rule `lhs → rhs` (an empty `rhs` is an ε-rule). Errors
    /// (unknown ids, a terminal `lhs`) are reported by [`build`](GrammarBuilder::build).
    pub fn add_rule(&mut self, lhs: SymbolId, rhs: &[SymbolId]) {
        self.rules.push((lhs, rhs.to_vec()));
    }

    /// Defines `lhs` by a permutation phrase (see [`Permutation`]). `lhs`
    /// must have no other rule and no other permutation. Errors (unknown
    /// ids, `min > max`, a second definition) are reported by
    /// [`build`](GrammarBuilder::build).
    pub fn add_permutation(&mut self, lhs: SymbolId, permutation: Permutation) {
        self.permutations.push((lhs, permutation));
    }

    /// Adds text ignored between lexemes and after the last one (Lark
    /// `%ignore`); before the first lexeme only with
    /// [`allow_initial_ignore`](GrammarBuilder::allow_initial_ignore). Several
    /// calls are alternatives.
    pub fn add_ignore(&mut self, regex: RegexAst) {
        self.ignore.push(regex);
    }

    /// Whether ignored text may also come before the first lexeme. Off by
    /// default, as in llguidance's Lark grammars.
    pub fn allow_initial_ignore(&mut self, allow: bool) {
        self.initial_ignore = allow;
    }

    /// Whether ignored text is one match of the ignore regexes per lexeme
    /// boundary (`true`: the regex describes the whole skipped span, so its
    /// bounds hold; llguidance's `%llguidance {"ignore_once": true}`) rather
    /// than any number of matches in a row (`false`, the default).
    pub fn ignore_once(&mut self, once: bool) {
        self.ignore_once = once;
    }

    /// Makes the lexer start from `preparsed`, pattern strings the front
    /// end parsed once for the process
    /// ([`LexerSpec::set_preparsed`]); the language is the same.
    pub fn preparsed(&mut self, preparsed: Arc<Preparsed>) {
        self.lexemes.set_preparsed(preparsed);
    }

    /// The name of a symbol, if the id belongs to this builder.
    pub fn name(&self, sym: SymbolId) -> Option<&str> {
        self.symbols.get(sym.index()).map(|s| s.name.as_str())
    }

    /// The kind of a symbol, if the id belongs to this builder.
    pub fn kind(&self, sym: SymbolId) -> Option<&SymbolKind> {
        self.symbols.get(sym.index()).map(|s| &s.kind)
    }

    /// A nonterminal deriving only the empty string (shared).
    pub fn epsilon(&mut self) -> SymbolId {
        if let Some(e) = self.epsilon {
            return e;
        }
        let e = self.add_nonterminal("ε");
        self.add_rule(e, &[]);
        self.epsilon = Some(e);
        e
    }

    /// `sym?`: a nonterminal deriving `sym` or the empty string (shared per `sym`).
    pub fn optional(&mut self, sym: SymbolId) -> SymbolId {
        if let Some(&o) = self.optionals.get(&sym) {
            return o;
        }
        let name = format!("{}?", self.symbol_name(sym));
        let o = self.add_nonterminal(&name);
        self.add_rule(o, &[sym]);
        self.add_rule(o, &[]);
        self.optionals.insert(sym, o);
        o
    }

    /// A nonterminal with one rule per alternative.
    pub fn choice(&mut self, name: &str, alternatives: &[&[SymbolId]]) -> SymbolId {
        let n = self.add_nonterminal(name);
        for alt in alternatives {
            self.add_rule(n, alt);
        }
        n
    }

    /// `sym{min,max}` (`max = None`: unbounded), desugared into rules whose
    /// number grows with `log2(max)`, not `max`: `x{0,100000}` costs about
    /// 40 rules. Unbounded repetitions are left-recursive (cheapest for Earley).
    ///
    /// # Errors
    /// [`GrammarError::BadRepeat`] when `min > max`.
    pub fn repeat(
        &mut self,
        sym: SymbolId,
        min: u32,
        max: Option<u32>,
    ) -> Result<SymbolId, GrammarError> {
        let name = self.symbol_name(sym);
        if let Some(max) = max
            && min > max
        {
            return Err(GrammarError::BadRepeat { name, min, max });
        }
        let label = match max {
            Some(max) if max == min => format!("{name}{{{min}}}"),
            Some(max) => format!("{name}{{{min},{max}}}"),
            None => format!("{name}{{{min},}}"),
        };
        let exact = self.exactly(sym, min);
        let tail = match max {
            None => {
                // star: S → ε | S sym
                let star = self.add_nonterminal(&format!("{name}*"));
                self.add_rule(star, &[]);
                self.add_rule(star, &[star, sym]);
                star
            }
            Some(max) => self.at_most(sym, max - min),
        };
        let r = self.add_nonterminal(&label);
        self.add_rule(r, &[exact, tail]);
        Ok(r)
    }

    /// `powers[j]` derives exactly `2^j` copies of `sym`, for `2^j <= n`
    /// (`powers[j] → powers[j-1] powers[j-1]`: one parse each).
    fn powers(&mut self, sym: SymbolId, n: u32) -> Vec<SymbolId> {
        let name = self.symbol_name(sym);
        let mut powers = vec![sym];
        while (1u64 << powers.len()) <= n as u64 {
            let prev = *powers.last().unwrap_or(&sym);
            let p = self.add_nonterminal(&format!("{name}{{{}}}", 1u64 << powers.len()));
            self.add_rule(p, &[prev, prev]);
            powers.push(p);
        }
        powers
    }

    /// A nonterminal deriving exactly `n` copies of `sym` in O(log n) rules.
    fn exactly(&mut self, sym: SymbolId, n: u32) -> SymbolId {
        if n == 0 {
            return self.epsilon();
        }
        if n == 1 {
            return sym;
        }
        let name = self.symbol_name(sym);
        let powers = self.powers(sym, n);
        let rhs: Vec<SymbolId> =
            (0..powers.len()).filter(|k| n & (1 << k) != 0).map(|k| powers[k]).collect();
        let e = self.add_nonterminal(&format!("{name}{{{n}}}"));
        self.add_rule(e, &rhs);
        e
    }

    /// A nonterminal deriving 0 to `n` copies of `sym` in O(log n) rules,
    /// unambiguously, with the large chunks first:
    ///
    /// - `below(j)` derives 0 to `2^j - 1` copies as `powers[j-1]? powers[j-2]? … powers[0]?`
    ///   (`below(j) → powers[j-1] below(j-1) | below(j-1)`), the binary
    ///   digits of the count from the highest;
    /// - with `2^k <= n < 2^(k+1)`: `at_most(n) → below(k) | powers[k] at_most(n - 2^k)`
    ///   (fewer than `2^k` copies, or at least that many).
    ///
    /// Every count has one parse, and the chunks come in decreasing size, so
    /// after `i` copies an Earley row holds O(log² n) items: a chunk of size
    /// `2^j` in progress starts at the one multiple of `2^(j+1)` (the sum of
    /// the larger chunks) within `2^j` of `i`. The balanced split
    /// `at_most(h) at_most(h)` this replaces had a parse per way to share
    /// the copies between the halves, and rows grew with `i`.
    fn at_most(&mut self, sym: SymbolId, n: u32) -> SymbolId {
        if n == 0 {
            return self.epsilon();
        }
        let name = self.symbol_name(sym);
        let powers = self.powers(sym, n);
        // below[j] derives 0 to 2^j - 1 copies.
        let mut below = vec![self.epsilon()];
        for j in 1..powers.len() {
            let b = self.add_nonterminal(&format!("{name}{{0,{}}}", (1u64 << j) - 1));
            let prev = below[j - 1];
            self.add_rule(b, &[powers[j - 1], prev]);
            self.add_rule(b, &[prev]);
            below.push(b);
        }
        // at_most for the remainders, from the smallest: n with its high
        // bits cleared one by one.
        let mut rest = self.epsilon(); // at_most(0)
        let mut m = 0u32;
        for k in 0..powers.len() {
            if n & (1 << k) == 0 {
                continue;
            }
            // m < 2^k: at_most(m + 2^k) → below(k) | powers[k] at_most(m)
            m += 1 << k;
            let a = self.add_nonterminal(&format!("{name}{{0,{m}}}"));
            self.add_rule(a, &[below[k]]);
            self.add_rule(a, &[powers[k], rest]);
            rest = a;
        }
        rest
    }
    fn symbol_name(&self, sym: SymbolId) -> String {
        self.name(sym).map_or_else(|| format!("#{}", sym.0), str::to_string)
    }

    /// Validates and compiles the grammar with `start` as its start symbol.
    ///
    /// Rules that can derive no string (using a nonterminal without rules
    /// that is unreachable, or a lexeme matching nothing) and rules
    /// unreachable from `start` are dropped: they cannot affect which texts
    /// are accepted.
    ///
    /// # Errors
    /// An unknown symbol id, a rule for a terminal, a reachable nonterminal
    /// without rules ([`GrammarError::Undefined`], naming it), an empty
    /// language, an exceeded limit, or a lexeme that does not compile.
    pub fn build(self, start: SymbolId, limits: Limits) -> Result<Grammar, GrammarError> {
        crate::compile::compile(self, start, limits)
    }

    pub(crate) fn into_parts(self) -> BuilderParts {
        BuilderParts {
            names: self.symbols.iter().map(|s| s.name.clone()).collect(),
            kinds: self.symbols.into_iter().map(|s| s.kind).collect(),
            lexemes: self.lexemes,
            specials: self.specials,
            rules: self.rules,
            permutations: self.permutations,
            ignore: self.ignore,
            initial_ignore: self.initial_ignore,
            ignore_once: self.ignore_once,
            pending_error: self.pending_error,
        }
    }
}

/// The builder's content, handed to the compiler.
pub(crate) struct BuilderParts {
    pub(crate) names: Vec<String>,
    pub(crate) kinds: Vec<SymbolKind>,
    pub(crate) lexemes: LexerSpec,
    pub(crate) specials: Vec<SpecialToken>,
    pub(crate) rules: Vec<(SymbolId, Vec<SymbolId>)>,
    pub(crate) permutations: Vec<(SymbolId, Permutation)>,
    pub(crate) ignore: Vec<RegexAst>,
    pub(crate) initial_ignore: bool,
    pub(crate) ignore_once: bool,
    pub(crate) pending_error: Option<GrammarError>,
}

impl SymbolId {
    pub(crate) fn from_index(i: usize) -> SymbolId {
        SymbolId(i as u32)
    }
}

/// A compiled grammar: immutable, shareable between threads; each
/// [`Parser`](crate::Parser) clones its lexer caches from it.
///
/// Layout (see `DESIGN.md`): the right-hand sides of all rules lie in one
/// flat array `rhs`, each followed by an end marker holding the rule's
/// left-hand side; an Earley item's dot is an index into that array.
#[derive(Clone, Debug)]
pub struct Grammar {
    pub(crate) inner: Arc<GrammarInner>,
}

#[derive(Debug)]
pub(crate) struct GrammarInner {
    /// The lexer every parser starts from (cloned; never changed after
    /// compilation, so the grammar holds no mutable state).
    pub(crate) lexer: Lexer,
    pub(crate) names: Vec<String>,
    pub(crate) kinds: Vec<SymbolKind>,
    pub(crate) specials: Vec<SpecialToken>,
    /// Flat right-hand sides. Invariant: `rhs[p]` is a symbol index, or
    /// `END | lhs` right after the last symbol of a rule.
    pub(crate) rhs: Vec<u32>,
    /// Invariant: the rules of nonterminal `n` start at
    /// `rule_starts[rules_of[n].0 .. rules_of[n].1]`.
    pub(crate) rules_of: Vec<(u32, u32)>,
    pub(crate) rule_starts: Vec<u32>,
    /// Per symbol: derives the empty string.
    pub(crate) nullable: Vec<bool>,
    /// The permutation phrases (see `compile/permutation.rs`).
    pub(crate) perms: Vec<crate::compile::PermRule>,
    /// Per symbol: `k + 1` when the symbol is defined by `perms[k]`, else 0.
    pub(crate) perm_of: Vec<u32>,
    /// Per symbol: `j + 1` when the symbol is a wrapper of member
    /// `perm_members[j]` (as it comes first, or after a separator), else 0.
    pub(crate) wrapper_of: Vec<u32>,
    /// The members with wrappers: (permutation, member index).
    pub(crate) perm_members: Vec<(u32, u32)>,
    /// The synthetic start nonterminal `S' → S`, and the dot position of
    /// its completed item.
    pub(crate) start: u32,
    pub(crate) accept_pos: u32,
    /// The `%ignore` lexeme.
    pub(crate) skip: Option<LexemeId>,
    /// Whether `%ignore` is allowed in the first row.
    pub(crate) initial_ignore: bool,
    /// Whether `%ignore` matches once per boundary (not again right after
    /// itself).
    pub(crate) ignore_once: bool,
    pub(crate) limits: Limits,
    pub(crate) num_rules: usize,
    /// Whether some phrase has distinct members (the parser then keeps
    /// the text and checks them; see `parser/distinct.rs`).
    pub(crate) has_distinct: bool,
    /// Whether some distinct phrase searches for completions
    /// ([`Permutation::search`]; rows then record their scope).
    pub(crate) has_search: bool,
}

/// The end marker bit in [`GrammarInner::rhs`].
pub(crate) const END: u32 = 1 << 31;

impl Grammar {
    /// The number of symbols (after desugaring).
    pub fn num_symbols(&self) -> usize {
        self.inner.kinds.len()
    }

    /// The number of rules (after desugaring and pruning).
    pub fn num_rules(&self) -> usize {
        self.inner.num_rules
    }

    /// The number of lexemes (the `%ignore` lexeme included).
    pub fn num_lexemes(&self) -> usize {
        self.inner.lexer.num_lexemes()
    }

    /// An estimate of the heap memory the grammar holds, in bytes (its
    /// lexer, see [`Lexer::heap_size`](lexer::Lexer::heap_size), and its
    /// rule arrays). For cache accounting, not an exact figure.
    pub fn heap_size(&self) -> usize {
        let g = &self.inner;
        g.lexer.heap_size()
            + 4 * (g.rhs.len() + g.rule_starts.len() + 2 * g.rules_of.len())
            + g.names.iter().map(|n| n.len() + 24).sum::<usize>()
            + 16 * g.kinds.len()
    }

    /// The special tokens the grammar mentions, indexed by
    /// [`SymbolKind::Special`].
    pub fn special_tokens(&self) -> &[SpecialToken] {
        &self.inner.specials
    }

    /// The limits the grammar was built with (used by its parsers).
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The name of a symbol.
    pub fn symbol_name(&self, sym: SymbolId) -> Option<&str> {
        self.inner.names.get(sym.index()).map(String::as_str)
    }

    /// Whether the grammar accepts `text` exactly, with the parser's lexing
    /// rules (greedy lexemes, `%ignore`). Special tokens are never matched;
    /// each byte counts as a token (hidden stop text is taken after it,
    /// [`Parser::take_hidden`](crate::Parser::take_hidden)).
    ///
    /// # Errors
    /// A limit exceeded while parsing.
    pub fn accepts(&self, text: &[u8]) -> Result<bool, crate::ParseError> {
        let mut p = crate::Parser::new(self, &|_| None)?;
        for (i, &b) in text.iter().enumerate() {
            if !p.try_consume_byte(b)? {
                return Ok(false);
            }
            p.take_hidden(&text[..=i]);
        }
        p.is_accepting()
    }
}
