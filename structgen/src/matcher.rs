//! The [`Matcher`]: token masks and token consumption under a grammar.

use earley::{ParseError, Parser, ParserStats, PositionKey};
use toktrie::{TokTrie, TokenId, TokenKind, TokenSet};

use crate::spec::StartId;
use crate::{Grammar, Vocabulary};
use std::sync::Arc;

mod bitmask;
mod forced;
mod options;
mod sliced;
pub(crate) mod split;
mod strict;
#[cfg(feature = "parallel")]
pub use bitmask::BatchPool;
pub use bitmask::{BatchError, fill_bitmask_batch, fill_bitmask_rows};
pub use forced::{DEFAULT_MAX_FORCED_BYTES, ForcedTokens};
pub use options::Backtrack;
pub use sliced::SlicerStats;
pub use split::{DEFAULT_MAX_SPLITS, MAX_SHARED_KEYS, MAX_SHARED_SPLITS, SplitStats};

/// Why a matcher stopped or could not be created.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MatcherError {
    /// The parser hit a limit, or the grammar names an unknown special token.
    Parse(ParseError),
    /// A token outside the mask was consumed.
    TokenRejected {
        /// The token.
        token: TokenId,
        /// How many tokens had been consumed before it.
        position: usize,
    },
    /// A token id the vocabulary does not have.
    UnknownToken {
        /// The token.
        token: TokenId,
    },
    /// A token after the matcher stopped (after a stop token, or past the
    /// grammar's `max_tokens`).
    AfterStop {
        /// The token.
        token: TokenId,
    },
    /// A bitmask row too short for the vocabulary.
    BitmaskTooSmall {
        /// Words needed: `ceil(vocabulary size / 32)`.
        need: usize,
        /// Words given.
        got: usize,
    },
    /// The lexer refused a derivative for lack of fuel during this step,
    /// and the matcher was built
    /// [`with_refusals_as_errors`](Matcher::with_refusals_as_errors).
    FuelRefused {
        /// Refusals during the step.
        refusals: u64,
        /// The byte offset in the consumed text where the step started.
        offset: usize,
    },
    /// The matcher panicked while filling its row in
    /// [`fill_bitmask_rows`] or [`fill_bitmask_batch`] (a bug in structgen):
    /// the panic was caught so that the other rows of the batch are filled,
    /// and the matcher stays stopped in this error until
    /// [`reset`](Matcher::reset).
    Panicked {
        /// The panic's message.
        message: String,
    },
}

impl std::fmt::Display for MatcherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatcherError::Parse(e) => e.fmt(f),
            MatcherError::TokenRejected { token, position } => {
                write!(f, "token {} at position {position} is not allowed by the grammar", token.0)
            }
            MatcherError::UnknownToken { token } => {
                write!(f, "token {} is not in the vocabulary", token.0)
            }
            MatcherError::AfterStop { token } => {
                write!(f, "token {} comes after the matcher stopped", token.0)
            }
            MatcherError::BitmaskTooSmall { need, got } => {
                write!(f, "a bitmask row of {got} words is too small: the vocabulary needs {need}")
            }
            MatcherError::FuelRefused { refusals, offset } => write!(
                f,
                "at byte {offset}: the lexer refused {refusals} derivative(s) for lack of fuel \
                 (LexerLimits::relevance_fuel, LexerLimits::step_fuel); the exact mask is unknown"
            ),
            MatcherError::Panicked { message } => {
                write!(f, "internal error (a bug in structgen, please report it): {message}")
            }
        }
    }
}

impl std::error::Error for MatcherError {}

impl From<ParseError> for MatcherError {
    fn from(e: ParseError) -> MatcherError {
        MatcherError::Parse(e)
    }
}

/// Why a matcher allows no more text (see [`Matcher::stop_reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// A stop token was consumed where the grammar accepts.
    StopToken(TokenId),
    /// The grammar allows nothing but the end: the mask holds only the
    /// stop tokens.
    NoExtension,
    /// The grammar's `max_tokens` were consumed: the mask holds only the
    /// stop tokens.
    MaxTokens,
    /// The matcher is stopped in an error ([`Matcher::error`]).
    Error,
}

/// What one consumed token pushed on the parser.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// An ordinary token: its number of bytes.
    Bytes(usize),
    /// A special token (one frame).
    Special,
    /// A stop token that ended the sequence (nothing pushed).
    Stop,
}

/// What the queries on `&self` answer, refreshed after every change of
/// position (a consumed token, a rollback, a reset).
#[derive(Clone, Copy, Debug, Default)]
struct Status {
    /// The text so far is a sentence: a stop token is allowed.
    accepting: bool,
    /// Some byte or special token may come next.
    can_extend: bool,
}

/// Token masks and token consumption for one sequence under one grammar.
///
/// ```
/// use structgen::{Grammar, Matcher, Vocabulary, toktrie::TokenId};
///
/// let vocab = Vocabulary::builder()
///     .token_list(&["1", "2", "a"])
///     .special(TokenId(3), "<eos>")
///     .stop_tokens([TokenId(3)])
///     .build()?;
/// let grammar = Grammar::regex("[0-9]{2}")?;
/// let mut m = Matcher::new(&vocab, &grammar)?;
/// let mut row = vec![0u32; vocab.bitmask_words()];
/// m.fill_bitmask(&mut row)?;
/// assert_eq!(row, [0b011]); // tokens 0 and 1
/// m.consume_tokens(&[TokenId(0), TokenId(1)])?;
/// assert!(m.is_accepting());
/// m.fill_bitmask(&mut row)?;
/// assert_eq!(row, [0b1000]); // the stop token only
/// assert!(m.consume_token(TokenId(2)).is_err()); // outside the mask: sticky error
/// assert!(m.error().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A token outside the mask is never a panic: it is an error that leaves the
/// matcher stopped in that error ([`error`](Matcher::error)). A matcher is
/// `Send + Sync`, so the masks of a batch can be computed on several threads
/// ([`fill_bitmask_batch`]); it shares its grammar and vocabulary with
/// other matchers by [`Arc`] and nothing else, so its masks depend on its
/// own tokens only.
///
/// Cloning a matcher forks it: the clone goes on independently from the
/// same position. It copies the parser's state (its consumed bytes, Earley
/// rows and lexer tables: kilobytes to a few megabytes for large schemas),
/// not the grammar or the vocabulary.
///
/// Grammars with Lark's `stop=X` hide the stop text from the model: after
/// a token that ends with it, [`backtrack`](Matcher::backtrack) says which
/// trailing tokens to take back; `stop=""` lets a stop token end a lexeme
/// (it is then in the mask and the grammar goes on); `max_tokens=N` limits
/// the tokens a lexeme spans (see `matcher/options.rs`).
#[derive(Clone, Debug)]
pub struct Matcher {
    vocab: Vocabulary,
    grammar: Grammar,
    /// `vocab.trie()`, kept at hand for the hot path.
    trie: Arc<TokTrie>,
    parser: Parser,
    mask: TokenSet,
    steps: Vec<Step>,
    error: Option<MatcherError>,
    /// The stop tokens of this matcher (the vocabulary's by default).
    stop_tokens: Vec<TokenId>,
    /// Set when a stop token ended the sequence.
    stopped: Option<TokenId>,
    status: Status,
    /// The position `mask` was computed at: equal positions have equal masks.
    mask_key: Option<PositionKey>,
    /// The slicer, when on (see [`with_slicer`](Matcher::with_slicer)).
    slicer: Option<sliced::SlicerHook>,
    /// Split masks by lexer state, for free text (see `matcher/split.rs`).
    splits: split::SplitCache,
    /// Forced tokens, when the vocabulary has a tokenizer that supports
    /// them (see [`forced_tokens`](Matcher::forced_tokens)).
    forcing: Option<Box<forced::Forcing>>,
    /// Token counts and backtracking of the lexeme options `max_tokens=`
    /// and `stop=` (see `matcher/options.rs`).
    options: options::LexemeOptions,
    /// Whether a fuel refusal fails the step (see `matcher/strict.rs`).
    refusals_as_errors: bool,
    /// The grammar's kept start this matcher was copied from (lineage 0:
    /// built from scratch); on drop its lexer is offered to the grammar's
    /// start (see [`Grammar`]).
    start_id: StartId,
}

impl Matcher {
    /// A matcher at the start of `grammar`, over `vocab` with its stop
    /// tokens, its slicer and (when its tokenizer supports them) forced
    /// tokens. Special-token names in the grammar (`<|eom_id|>`) are looked
    /// up in the vocabulary.
    ///
    /// The first matcher of a grammar over a vocabulary builds the start
    /// (the first Earley row, the slicer's probes, the first mask) and the
    /// grammar keeps it; every later one is a copy of it, whose lexer may
    /// have learned from matchers dropped since (see [`Grammar`]). Either
    /// way the new matcher has its first mask computed, so its answers do
    /// not depend on which matcher came first (its lexer's work counters
    /// do: a learned start computes fewer transitions).
    /// A limit exceeded while computing the first mask is not an error
    /// here: the matcher is stopped in it, and the first query returns it.
    ///
    /// # Errors
    /// A special token the vocabulary lacks; a limit exceeded on the first row.
    pub fn new(vocab: &Vocabulary, grammar: &Grammar) -> Result<Matcher, MatcherError> {
        grammar.start_matcher(vocab)
    }

    /// Replaces the grammar handle (the same compiled grammar) and names
    /// the kept start this matcher was copied from.
    pub(crate) fn set_grammar(&mut self, grammar: Grammar, start_id: StartId) {
        self.grammar = grammar;
        self.start_id = start_id;
    }

    /// The parser's lexer (for its statistics: states, transitions
    /// computed, fuel refusals).
    pub fn lexer(&self) -> &lexer::Lexer {
        self.parser.lexer()
    }

    /// The kept start this matcher was copied from.
    pub(crate) fn start_id(&self) -> StartId {
        self.start_id
    }

    /// The number of split masks this matcher holds.
    pub(crate) fn num_splits(&self) -> usize {
        self.splits.num_splits()
    }

    /// Takes what `other` learned: a copy of its lexer, adopted as a start
    /// ([`lexer::Lexer::adopt_as_start`]; it must descend from the lexer
    /// this matcher's parser was computed with, see [`Parser::set_lexer`]),
    /// and its split masks, which name that lexer's states (not its marks
    /// of states seen once).
    pub(crate) fn learn_from(&mut self, other: &Matcher) {
        let mut lexer = other.lexer().clone();
        lexer.adopt_as_start();
        self.parser.set_lexer(lexer);
        self.splits.replace_with(&other.splits);
    }

    /// A matcher at the start of `grammar`, built from scratch, its first
    /// mask computed.
    pub(crate) fn build(vocab: &Vocabulary, grammar: Grammar) -> Result<Matcher, MatcherError> {
        let trie = vocab.trie().clone();
        strict::check_token_ids(&grammar, &trie)?;
        let parser = {
            let t = trie.clone();
            Parser::new(grammar.earley(), &move |name| t.special_by_name(name))?
        };
        let mask = trie.token_set();
        let options = options::LexemeOptions::new(parser.lexer());
        let mut m = Matcher {
            vocab: vocab.clone(),
            grammar,
            trie,
            parser,
            mask,
            steps: Vec::new(),
            error: None,
            stop_tokens: vocab.stop_tokens().to_vec(),
            stopped: None,
            status: Status::default(),
            mask_key: None,
            slicer: None,
            splits: split::SplitCache::new(split::DEFAULT_MAX_SPLITS, vocab.shared_splits()),
            forcing: None,
            options,
            refusals_as_errors: false,
            start_id: StartId::default(),
        };
        m = m.with_slicer(vocab.slicer().cloned());
        if let Some(c) = vocab.coalescer() {
            m.forcing = Some(Box::new(forced::Forcing::new(c.clone())));
        }
        m.refresh_status()?;
        // The first mask, so that every matcher starts alike; an error
        // stays in the matcher.
        let _ = m.compute_mask();
        Ok(m)
    }

    /// This matcher with `stop` as its stop tokens instead of the
    /// vocabulary's (a per-request override, such as a chat model's
    /// end-of-turn token only).
    ///
    /// # Errors
    /// A token outside the vocabulary.
    pub fn with_stop_tokens(mut self, stop: &[TokenId]) -> Result<Matcher, crate::Error> {
        self.vocab.check_ids(stop)?;
        self.stop_tokens = stop.to_vec();
        self.mask_key = None;
        Ok(self)
    }

    /// The vocabulary trie.
    pub fn trie(&self) -> &Arc<TokTrie> {
        &self.trie
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    /// The grammar.
    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// The stop tokens of this matcher.
    pub fn stop_tokens(&self) -> &[TokenId] {
        &self.stop_tokens
    }

    /// The tokens allowed next: the ordinary tokens whose bytes the grammar
    /// allows, the special tokens it allows, and the stop tokens exactly
    /// when the text so far is a sentence. After a stop token, nothing;
    /// once the grammar's `max_tokens` are consumed, the stop tokens only.
    ///
    /// # Errors
    /// The matcher is stopped in an error, or a limit was exceeded (the
    /// matcher then stays in that error).
    pub fn compute_mask(&mut self) -> Result<&TokenSet, MatcherError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.stopped.is_some() {
            self.mask.clear();
            return Ok(&self.mask);
        }
        if self.at_max_tokens() {
            self.mask.clear();
            for &t in &self.stop_tokens {
                self.mask.insert(t);
            }
            self.mask_key = None;
            return Ok(&self.mask);
        }
        if self.healing_mask().is_some() {
            return Ok(&self.mask);
        }
        // In free text, a literal just completed ends now, under a fresh
        // step budget (see `Parser::close_final_lexeme`: the same answers,
        // a start every request meets, so its split is shared). Elsewhere
        // it only moves split attempts onto lexeme starts, whose refusals
        // cost walks (measured: the rfc grammar's p99 mask doubled).
        if self.splits.shares(self.parser.lexer()) {
            self.parser.begin_step();
            self.parser.close_final_lexeme();
        }
        let key = self.parser.position_key();
        if self.mask_key == Some(key) && !self.options.limited() {
            // Same position as the last mask (a lexeme like `[^"]*` that
            // loops on one state): the mask is the same.
            return Ok(&self.mask);
        }
        self.mask_key = None;
        self.parser.begin_step();
        let refusals = self.fuel_refusals();
        if self.status.can_extend {
            if self.parser.needs_byte_walk() {
                // Among distinct members (`uniqueItems`) once one is taken,
                // checked on the text, which only the byte-by-byte walk
                // hands to the parser (a split serves the tokens that stay
                // inside a lexeme where nothing is checked).
                self.mask_by_bytes();
            } else {
                if !self.sliced_mask()
                    && !self.splits.mask(&self.trie, &mut self.parser, &mut self.mask)
                {
                    self.trie.compute_mask_by_state(&mut self.parser, &mut self.mask);
                }
                // Elsewhere the walks by state serve (slices and splits
                // prove tokens inside the lexeme in progress, where no
                // member can complete), until one reaches a taken phrase:
                // then the mask is walked again by bytes. Nothing the
                // abandoned walk cached depends on the rows.
                if self.parser.take_byte_walk_required() {
                    self.parser.begin_step();
                    self.mask_by_bytes();
                }
            }
        } else {
            // Only the end of the sequence remains: no walk needed.
            self.mask.clear();
        }
        if let Err(e) = self.filter_token_limits() {
            return Err(self.fail(e));
        }
        if let Err(e) = self.parser.check() {
            return Err(self.fail(e.into()));
        }
        if let Some(e) = self.refusal_error(refusals) {
            return Err(self.fail(e));
        }
        let ends_lexeme = self.parser.eos_ends_lexeme();
        for i in 0..self.stop_tokens.len() {
            let t = self.stop_tokens[i];
            if self.status.accepting || ends_lexeme {
                self.mask.insert(t);
            } else if !self.parser.special_token_allowed(t) {
                self.mask.remove(t);
            }
        }
        self.mask_key = Some(key);
        Ok(&self.mask)
    }

    /// Writes the mask into one row of an engine's bitmask: token `i` is
    /// bit `i % 32` of word `i / 32` (the layout of XGrammar, llguidance
    /// and outlines-core); every word of `row` is written, so padding words
    /// past the vocabulary are cleared.
    ///
    /// On an error the row allows the stop tokens only (so a sampler still
    /// ends the sequence) and the error is returned.
    ///
    /// # Errors
    /// As [`compute_mask`](Matcher::compute_mask);
    /// [`MatcherError::BitmaskTooSmall`] when `row` has fewer than
    /// [`Vocabulary::bitmask_words`] words (nothing is written).
    pub fn fill_bitmask(&mut self, row: &mut [u32]) -> Result<(), MatcherError> {
        let need = self.vocab.bitmask_words();
        if row.len() < need {
            return Err(MatcherError::BitmaskTooSmall { need, got: row.len() });
        }
        match self.compute_mask() {
            Ok(mask) => {
                mask.write_bitmask(row);
                Ok(())
            }
            Err(e) => {
                self.write_stop_row(row);
                Err(e)
            }
        }
    }

    /// Writes the row of a failed matcher into `row`: its stop tokens only
    /// (so a sampler still ends the sequence); ids past `row` are left out.
    pub(crate) fn write_stop_row(&self, row: &mut [u32]) {
        row.fill(0);
        for t in &self.stop_tokens {
            if let Some(w) = row.get_mut(t.index() / 32) {
                *w |= 1 << (t.index() % 32);
            }
        }
    }

    /// Consumes one token.
    ///
    /// # Errors
    /// A token outside the mask ([`MatcherError::TokenRejected`]), an unknown
    /// id, a token after the matcher stopped, or a limit exceeded. Every
    /// error is sticky.
    pub fn consume_token(&mut self, token: TokenId) -> Result<(), MatcherError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let refusals = self.fuel_refusals();
        let before = self.parser.position_key();
        match self.try_step(token) {
            Ok(Some(step)) => {
                self.steps.push(step);
                self.forcing_consumed(token, before);
                if let Some(e) = self.refusal_error(refusals) {
                    return Err(self.fail(e));
                }
                self.refresh_status()
            }
            Ok(None) => {
                let e = self
                    .refusal_error(refusals)
                    .unwrap_or(MatcherError::TokenRejected { token, position: self.steps.len() });
                Err(self.fail(e))
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Consumes tokens in order; stops at the first error.
    ///
    /// # Errors
    /// As [`consume_token`](Matcher::consume_token).
    pub fn consume_tokens(&mut self, tokens: &[TokenId]) -> Result<(), MatcherError> {
        tokens.iter().try_for_each(|&t| self.consume_token(t))
    }

    /// How many of `tokens`, from the first, the grammar allows in a row;
    /// the matcher's state does not change.
    ///
    /// # Errors
    /// The matcher is stopped in an error, or a limit was exceeded.
    pub fn validate_tokens(&mut self, tokens: &[TokenId]) -> Result<usize, MatcherError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let (steps0, stopped0) = (self.steps.len(), self.stopped);
        let mut n = 0;
        let mut result = Ok(());
        for &t in tokens {
            if self.at_max_tokens() && !self.stop_tokens.contains(&t) {
                break;
            }
            match self.try_step(t) {
                Ok(Some(step)) => {
                    self.steps.push(step);
                    n += 1;
                }
                Ok(None) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let extra = self.steps.len() - steps0;
        self.rollback(extra);
        self.stopped = stopped0;
        match result {
            Ok(()) => Ok(n),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Undoes the last `n` consumed tokens (at most all of them). Errors
    /// stay: a rejected token was never consumed. After a caught panic
    /// ([`MatcherError::Panicked`]) nothing is undone: only
    /// [`reset`](Matcher::reset) leaves that error.
    pub fn rollback(&mut self, n: usize) {
        if matches!(self.error, Some(MatcherError::Panicked { .. })) {
            return;
        }
        let n = n.min(self.steps.len());
        let mut frames = 0;
        for step in self.steps.drain(self.steps.len() - n..) {
            match step {
                Step::Bytes(k) => frames += k,
                Step::Special => frames += 1,
                Step::Stop => self.stopped = None,
            }
        }
        self.parser.pop_bytes(frames);
        self.forcing_rolled_back();
        self.options_rolled_back();
        if self.error.is_none()
            && let Err(e) = self.refresh_status()
        {
            self.fail(e);
        }
    }

    /// Back to the start of the grammar, as a new matcher over the same
    /// grammar and vocabulary with this matcher's settings (stop tokens,
    /// slicer, forcing), errors cleared. Cheaper than a new matcher: the
    /// lexer keeps the states it has built (which only saves work; masks
    /// are the same).
    ///
    /// # Errors
    /// A limit exceeded on the first row (as [`new`](Matcher::new)).
    pub fn reset(&mut self) -> Result<(), MatcherError> {
        if self.error.is_some() {
            // A parser stopped by a limit is rebuilt from the grammar.
            let fresh = Matcher::new(&self.vocab, &self.grammar)?;
            let enabled = self.forcing.as_ref().is_none_or(|f| f.enabled);
            let slicer = self.slicer.as_ref().map(|h| h.slicer().clone());
            let stop = std::mem::take(&mut self.stop_tokens);
            let max_splits = self.splits.max_splits();
            *self = fresh.with_slicer(slicer).with_max_splits(max_splits);
            self.stop_tokens = stop;
            self.set_forcing(enabled);
            return Ok(());
        }
        self.rollback(self.steps.len());
        self.stopped = None;
        if let Some(f) = &mut self.forcing {
            f.reset();
        }
        self.parser.pop_bytes(self.parser.num_bytes());
        self.mask_key = None;
        self.refresh_status()
    }

    /// Whether the text so far is a sentence: a stop token is allowed
    /// (and after a stop token: `true`).
    pub fn is_accepting(&self) -> bool {
        self.error.is_none()
            && (self.stopped.is_some() || (self.status.accepting && !self.healing_pending()))
    }

    /// Whether the matcher allows no more text: see [`stop_reason`](Matcher::stop_reason).
    pub fn is_stopped(&self) -> bool {
        self.stop_reason().is_some()
    }

    /// Why the matcher allows no more text, or `None` while text may
    /// still come.
    pub fn stop_reason(&self) -> Option<StopReason> {
        if self.error.is_some() {
            Some(StopReason::Error)
        } else if let Some(t) = self.stopped {
            Some(StopReason::StopToken(t))
        } else if self.at_max_tokens() {
            Some(StopReason::MaxTokens)
        } else if !self.status.can_extend && !self.healing_pending() {
            Some(StopReason::NoExtension)
        } else {
            None
        }
    }

    /// The error the matcher stopped in, if any.
    pub fn error(&self) -> Option<&MatcherError> {
        self.error.as_ref()
    }

    /// The number of tokens consumed.
    pub fn num_tokens(&self) -> usize {
        self.steps.len()
    }

    /// The parser's work counters (rows computed and reused, bytes pushed).
    pub fn parser_stats(&self) -> ParserStats {
        self.parser.stats()
    }

    /// How many lexer derivatives were dropped because their emptiness
    /// check ran out of fuel (see [`lexer::Lexer::fuel_refusals`]); while it
    /// is zero, every mask was exact.
    pub fn fuel_refusals(&self) -> u64 {
        self.parser.lexer().fuel_refusals()
    }

    /// The mask by the byte-by-byte walk (a grammar with distinct members
    /// where the parser needs the bytes): from a split when one serves
    /// (`matcher/split.rs`), the whole trie otherwise.
    fn mask_by_bytes(&mut self) {
        if !self.splits.taken_mask(&self.trie, &mut self.parser, &mut self.mask) {
            self.parser.begin_step();
            self.trie.compute_mask(&mut self.parser, &mut self.mask);
        }
    }

    fn fail(&mut self, e: MatcherError) -> MatcherError {
        self.error = Some(e.clone());
        e
    }

    fn at_max_tokens(&self) -> bool {
        self.grammar.max_tokens().is_some_and(|max| self.steps.len() >= max)
    }

    /// Recomputes what the `&self` queries answer, after the position
    /// changed.
    fn refresh_status(&mut self) -> Result<(), MatcherError> {
        if self.stopped.is_some() {
            self.status = Status::default();
            return Ok(());
        }
        let accepting = self.parser.is_accepting().map_err(|e| self.fail(e.into()))?;
        let can_extend = self.parser.can_extend();
        self.parser.check().map_err(|e| self.fail(e.into()))?;
        self.status = Status { accepting, can_extend };
        Ok(())
    }

    /// Consumes `token` if allowed: `Ok(None)` when not allowed (nothing changed).
    fn try_step(&mut self, token: TokenId) -> Result<Option<Step>, MatcherError> {
        if self.stopped.is_some() {
            return Err(MatcherError::AfterStop { token });
        }
        let is_stop = self.stop_tokens.contains(&token);
        if self.at_max_tokens() {
            if is_stop {
                self.stopped = Some(token);
                return Ok(Some(Step::Stop));
            }
            return Err(MatcherError::AfterStop { token });
        }
        if let Some(r) = self.healing_step(token) {
            return r;
        }
        self.parser.begin_step();
        match self.trie.kind(token) {
            TokenKind::Special => {
                if self.parser.try_consume_special(token)? {
                    Ok(Some(Step::Special))
                } else if is_stop && self.parser.try_consume_eos_end()? {
                    // `stop=""`: the stop token ends a lexeme and the text goes on.
                    Ok(Some(Step::Special))
                } else if is_stop && self.parser.is_accepting()? {
                    self.stopped = Some(token);
                    Ok(Some(Step::Stop))
                } else {
                    Ok(None)
                }
            }
            TokenKind::Ordinary => {
                let bytes = self.trie.token_bytes(token).unwrap_or(&[]);
                if bytes.is_empty() {
                    return Ok(None);
                }
                for (i, &b) in bytes.iter().enumerate() {
                    if !self.parser.try_consume_byte(b)? {
                        self.parser.pop_bytes(i);
                        return Ok(None);
                    }
                }
                let len = bytes.len();
                if !self.finish_token_bytes(token)? {
                    self.parser.pop_bytes(len);
                    return Ok(None);
                }
                Ok(Some(Step::Bytes(len)))
            }
            _ => Err(MatcherError::UnknownToken { token }),
        }
    }
}

impl Drop for Matcher {
    /// Offers this matcher's lexer to the grammar's kept start (see
    /// [`Grammar`]): one atomic load when it is not taken.
    fn drop(&mut self) {
        if self.start_id.lineage != 0 {
            self.grammar.offer_lexer(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send_sync::<Matcher>();
        assert_send_sync::<MatcherError>();
    }
}
