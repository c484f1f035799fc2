//! What a lexer recognizes: lexemes (named regular expressions) and limits.

use std::sync::Arc;

use derivre::RegexAst;

use crate::Preparsed;

/// The index of a lexeme in its [`LexerSpec`], dense from 0.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct LexemeId(pub u32);

impl LexemeId {
    /// The id as an index into per-lexeme arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One lexeme: a name (for messages), a regular expression and its matching mode.
///
/// The regular expression is a [`derivre::RegexAst`], so front-ends can build
/// intersections ([`RegexAst::And`]), complements ([`RegexAst::Not`]),
/// bounded repetitions and JSON quoting directly, or pass a pattern string
/// ([`RegexAst::Regex`], implicitly anchored, `regex` crate syntax).
///
/// A lexeme never matches the empty string inside the lexer: when its regex
/// is nullable, the lexer matches the non-empty part and reports
/// [`Lexer::is_nullable`](crate::Lexer::is_nullable) so that the parser's
/// grammar builder makes the lexeme's symbol optional instead.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LexemeSpec {
    /// A human-readable name: the Lark terminal name, `"while"`, `/[0-9]+/`.
    pub name: String,
    /// The language of the lexeme (anchored at both ends).
    pub regex: RegexAst,
    /// Greedy (`false`, the default): the lexeme extends while the next byte
    /// keeps it alive (maximal munch, no backtracking). Lazy (`true`): the
    /// lexeme ends at the first byte where it matches.
    pub lazy: bool,
    /// Hidden stop text (Lark `stop=...`): the lexeme matches `regex`
    /// followed by a word of `stop`, lazily (it ends where the stop text
    /// first completes), and [`Lexer::hidden_len`](crate::Lexer::hidden_len)
    /// reports how many of its last bytes are the stop text.
    pub stop: Option<RegexAst>,
    /// The end-of-sequence token may end this lexeme (Lark `stop=""`): the
    /// parser lets an EOS token close it where it matches.
    pub ends_at_eos: bool,
    /// The most tokens the lexeme may span (Lark `max_tokens=N`); kept for
    /// the token-level matcher, the lexer itself never counts tokens.
    pub max_tokens: Option<u32>,
}

impl LexemeSpec {
    /// A greedy lexeme from an AST.
    pub fn new(name: impl Into<String>, regex: RegexAst) -> LexemeSpec {
        LexemeSpec {
            name: name.into(),
            regex,
            lazy: false,
            stop: None,
            ends_at_eos: false,
            max_tokens: None,
        }
    }

    /// A greedy lexeme matching exactly `text`; named by its quoted text.
    pub fn literal(text: &str) -> LexemeSpec {
        LexemeSpec::new(format!("{text:?}"), RegexAst::Literal(text.to_string()))
    }

    /// A greedy lexeme from a pattern string (anchored; `regex` crate syntax);
    /// named `/pattern/`.
    pub fn regex(pattern: &str) -> LexemeSpec {
        LexemeSpec::new(format!("/{pattern}/"), RegexAst::Regex(pattern.to_string()))
    }

    /// The same lexeme, lazy (ends at its first match).
    pub fn lazy(mut self) -> LexemeSpec {
        self.lazy = true;
        self
    }

    /// The same lexeme followed by the hidden stop text `stop` (lazy: it
    /// ends where the stop text first completes).
    pub fn with_stop(mut self, stop: RegexAst) -> LexemeSpec {
        self.lazy = true;
        self.stop = Some(stop);
        self
    }

    /// The same lexeme, which an end-of-sequence token may also end.
    pub fn ending_at_eos(mut self) -> LexemeSpec {
        self.ends_at_eos = true;
        self
    }

    /// The same lexeme, spanning at most `n` tokens.
    pub fn with_max_tokens(mut self, n: u32) -> LexemeSpec {
        self.max_tokens = Some(n);
        self
    }
}

/// Resource limits of a lexer; exceeding one is an error, never a hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LexerLimits {
    /// The most lexer states (sets of live derivatives) one lexer may create.
    pub max_states: usize,
    /// The most derivre expression nodes (the shared hash-consed set) the
    /// lexer may hold, counting the lexemes and every derivative built later.
    pub max_exprs: usize,
    /// Fuel for each emptiness check of a derivative (a unit is one step of
    /// derivre's relevance search); checks on intersections and complements
    /// can be exponential, so this bounds them. At construction a lexeme
    /// whose check runs out is an error; during parsing the derivative is
    /// dropped (see [`Lexer::fuel_refusals`](crate::Lexer::fuel_refusals)).
    pub relevance_fuel: u64,
    /// Fuel the lexemes' emptiness checks share when the lexer is built,
    /// beyond their own `relevance_fuel`: a check runs with the larger of
    /// the two and what it spends comes out of this pool. Construction so
    /// costs at most `build_fuel` plus `relevance_fuel` per lexeme; a
    /// lexeme that runs out is an error. 10,000,000 by default (ten times
    /// llguidance's `initial_lexer_fuel`): seven of MaskBench's handwritten
    /// schemas need more than `relevance_fuel` for one lexeme, and the
    /// checks of a schema share the pool; running it dry takes about 0.3 s
    /// on a 2-core CI machine.
    pub build_fuel: u64,
    /// Fuel for all the emptiness checks of one step (one mask or one
    /// token, from [`Lexer::begin_step`](crate::Lexer::begin_step) to the
    /// next), so that a step's cost stays bounded however many hard
    /// derivatives its walk meets; past it, derivatives that need a check
    /// are dropped like those out of `relevance_fuel` (llguidance's
    /// `step_lexer_fuel` plays this part and stops the parser instead).
    pub step_fuel: u64,
    /// The widest derivative a lexeme's regex may make, as estimated when
    /// the lexer is built: nested counted repetitions of nullable bodies
    /// multiply (`((a*){100}){100}` makes derivatives of about 10,000
    /// terms, each byte of a mask walk rebuilding one); see `width.rs`.
    pub max_repeat_width: u64,
}

impl Default for LexerLimits {
    fn default() -> LexerLimits {
        LexerLimits {
            max_states: 250_000,
            max_exprs: 2_000_000,
            relevance_fuel: 100_000,
            build_fuel: 10_000_000,
            step_fuel: 400_000,
            max_repeat_width: 1_000,
        }
    }
}

impl LexerLimits {
    /// These limits with [`max_states`](LexerLimits::max_states) set to `value`.
    pub fn with_max_states(mut self, value: usize) -> LexerLimits {
        self.max_states = value;
        self
    }

    /// These limits with [`max_exprs`](LexerLimits::max_exprs) set to `value`.
    pub fn with_max_exprs(mut self, value: usize) -> LexerLimits {
        self.max_exprs = value;
        self
    }

    /// These limits with [`relevance_fuel`](LexerLimits::relevance_fuel) set to `value`.
    pub fn with_relevance_fuel(mut self, value: u64) -> LexerLimits {
        self.relevance_fuel = value;
        self
    }

    /// These limits with [`build_fuel`](LexerLimits::build_fuel) set to `value`.
    pub fn with_build_fuel(mut self, value: u64) -> LexerLimits {
        self.build_fuel = value;
        self
    }

    /// These limits with [`step_fuel`](LexerLimits::step_fuel) set to `value`.
    pub fn with_step_fuel(mut self, value: u64) -> LexerLimits {
        self.step_fuel = value;
        self
    }

    /// These limits with [`max_repeat_width`](LexerLimits::max_repeat_width) set to `value`.
    pub fn with_max_repeat_width(mut self, value: u64) -> LexerLimits {
        self.max_repeat_width = value;
        self
    }
}

/// The lexemes of one grammar, in id order.
#[derive(Clone, Debug, Default)]
pub struct LexerSpec {
    lexemes: Vec<LexemeSpec>,
    /// The pattern strings its lexer starts from parsed (`None`: the
    /// common ones).
    preparsed: Option<Arc<Preparsed>>,
}

impl LexerSpec {
    /// An empty spec.
    pub fn new() -> LexerSpec {
        LexerSpec::default()
    }

    /// Adds a lexeme and returns its id (ids are dense, in insertion order).
    pub fn add(&mut self, lexeme: LexemeSpec) -> LexemeId {
        let id = LexemeId(self.lexemes.len() as u32);
        self.lexemes.push(lexeme);
        id
    }

    /// The lexeme `id`, if it exists.
    pub fn get(&self, id: LexemeId) -> Option<&LexemeSpec> {
        self.lexemes.get(id.index())
    }

    /// The number of lexemes.
    pub fn len(&self) -> usize {
        self.lexemes.len()
    }

    /// Whether there are no lexemes.
    pub fn is_empty(&self) -> bool {
        self.lexemes.is_empty()
    }

    /// All lexemes in id order.
    pub fn lexemes(&self) -> &[LexemeSpec] {
        &self.lexemes
    }

    /// Makes its lexer start from `preparsed` (a set a front end keeps for
    /// the process) instead of [`Preparsed::common`]; the language is the
    /// same, only the patterns it holds are not parsed again.
    pub fn set_preparsed(&mut self, preparsed: Arc<Preparsed>) {
        self.preparsed = Some(preparsed);
    }

    /// The pattern strings its lexer starts from parsed.
    pub fn preparsed(&self) -> &Arc<Preparsed> {
        self.preparsed.as_ref().unwrap_or_else(|| Preparsed::common())
    }
}

/// A set of lexemes, as a bitset over [`LexemeId`]s.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct LexemeSet {
    words: Vec<u64>,
}

impl LexemeSet {
    /// An empty set able to hold ids below `n` without growing.
    pub fn with_capacity(n: usize) -> LexemeSet {
        LexemeSet { words: vec![0; n.div_ceil(64)] }
    }

    /// Adds `id`.
    #[inline]
    pub fn insert(&mut self, id: LexemeId) {
        let (w, b) = (id.index() / 64, id.index() % 64);
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << b;
    }

    /// Whether `id` is in the set.
    #[inline]
    pub fn contains(&self, id: LexemeId) -> bool {
        let (w, b) = (id.index() / 64, id.index() % 64);
        self.words.get(w).is_some_and(|x| x & (1 << b) != 0)
    }

    /// Removes every element, keeping the capacity.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = LexemeId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(LexemeId(i as u32 * 64 + b))
            })
        })
    }

    /// The words with trailing zero words removed: equal sets give equal keys.
    pub(crate) fn key(&self) -> &[u64] {
        let n = self.words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        &self.words[..n]
    }
}
