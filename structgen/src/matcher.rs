//! The [`Matcher`]: token masks and token consumption under a grammar.

use std::sync::Arc;

use earley::{Grammar, ParseError, Parser, ParserStats, PositionKey};
use toktrie::{TokTrie, TokTrieBuilder, TokenId, TokenKind, TokenSet};

mod forced;
mod options;
mod sliced;
pub use forced::{DEFAULT_MAX_FORCED_BYTES, ForcedTokens, ReplayStats};
pub use options::Backtrack;
pub use sliced::SlicerStats;

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
    /// A token after the end of sequence.
    AfterEos {
        /// The token.
        token: TokenId,
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
            MatcherError::AfterEos { token } => {
                write!(f, "token {} comes after the end of sequence", token.0)
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

/// What one consumed token pushed on the parser.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// An ordinary token: its number of bytes.
    Bytes(usize),
    /// A special token (one frame).
    Special,
    /// An end-of-sequence token (nothing pushed; the matcher stopped).
    Eos,
}

/// Token masks and token consumption for one sequence under one grammar.
///
/// ```
/// use std::sync::Arc;
/// use structgen::Matcher;
/// use toktrie::{TokTrieBuilder, TokenId};
///
/// let trie = TokTrieBuilder::new()
///     .token(TokenId(0), b"1")
///     .token(TokenId(1), b"2")
///     .token(TokenId(2), b"a")
///     .special(TokenId(3), "<eos>")
///     .eos(TokenId(3))
///     .build()
///     .unwrap();
/// let grammar = structgen::grammar::regex::compile("[0-9]{2}").unwrap();
/// let mut m = Matcher::new(Arc::new(trie), &grammar).unwrap();
/// let allowed: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
/// assert_eq!(allowed, [0, 1]);
/// m.consume_tokens(&[TokenId(0), TokenId(1)]).unwrap();
/// assert!(m.is_accepting());
/// assert!(m.compute_mask().unwrap().contains(TokenId(3))); // EOS only now
/// assert!(m.consume_token(TokenId(2)).is_err()); // outside the mask: sticky error
/// assert!(m.compute_mask().is_err());
/// ```
///
/// A token outside the mask is never a panic: it is an error that leaves the
/// matcher stopped in that error ([`error`](Matcher::error)). The matcher is
/// `Send`, so the masks of a batch can be computed on several threads.
///
/// Grammars with Lark's `stop=X` hide the stop text from the model: after
/// a token that ends with it, [`backtrack`](Matcher::backtrack) says which
/// trailing tokens to take back; `stop=""` lets EOS end a lexeme (EOS is
/// then in the mask and the grammar goes on); `max_tokens=N` limits the
/// tokens a lexeme spans (see `matcher/options.rs`).
#[derive(Clone, Debug)]
pub struct Matcher {
    trie: Arc<TokTrie>,
    parser: Parser,
    mask: TokenSet,
    steps: Vec<Step>,
    error: Option<MatcherError>,
    stopped: bool,
    /// The position `mask` was computed at: equal positions have equal masks.
    mask_key: Option<PositionKey>,
    /// The slicer, when on (see [`with_slicer`](Matcher::with_slicer)).
    slicer: Option<sliced::SlicerHook>,
    /// Forced tokens, when a tokenizer is given (see
    /// [`with_tokenizer`](Matcher::with_tokenizer)).
    forcing: Option<Box<forced::Forcing>>,
    /// Token counts and backtracking of the lexeme options `max_tokens=`
    /// and `stop=` (see `matcher/options.rs`).
    options: options::LexemeOptions,
}

impl Matcher {
    /// A matcher at the start of the grammar. Special-token names in the
    /// grammar (`<|eom_id|>`) are looked up in `trie`.
    ///
    /// # Errors
    /// A special token the vocabulary lacks; a limit exceeded on the first row.
    pub fn new(trie: Arc<TokTrie>, grammar: &Grammar) -> Result<Matcher, MatcherError> {
        let parser = {
            let t = trie.clone();
            Parser::new(grammar, &move |name| t.special_by_name(name))?
        };
        let mask = trie.token_set();
        let options = options::LexemeOptions::new(parser.lexer());
        Ok(Matcher {
            trie,
            parser,
            mask,
            steps: Vec::new(),
            error: None,
            stopped: false,
            mask_key: None,
            slicer: None,
            forcing: None,
            options,
        })
    }

    /// The trie of a [`bpe::Tokenizer`]: its ordinary tokens by bytes, its
    /// special tokens by name, and `<|endoftext|>`, `<|end_of_text|>`,
    /// `<|eot_id|>` or `</s>` (the first present) as the end of sequence.
    ///
    /// # Errors
    /// A vocabulary the trie cannot hold (see [`toktrie::BuildError`]).
    pub fn trie_of(tokenizer: &bpe::Tokenizer) -> Result<TokTrie, toktrie::BuildError> {
        let mut b = TokTrieBuilder::new().vocab_size(tokenizer.vocab_size());
        for id in 0..tokenizer.vocab_size() as u32 {
            if tokenizer.is_special(id) {
                continue;
            }
            if let Some(bytes) = tokenizer.token_bytes(id) {
                b = b.token(TokenId(id), bytes);
            }
        }
        let mut eos = None;
        for (id, name) in tokenizer.special_tokens() {
            b = b.special(TokenId(id), name);
            let rank = ["<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "</s>"]
                .iter()
                .position(|n| *n == name);
            if let Some(rank) = rank
                && eos.is_none_or(|(r, _)| rank < r)
            {
                eos = Some((rank, id));
            }
        }
        if let Some((_, id)) = eos {
            b = b.eos(TokenId(id));
        }
        b.build()
    }

    /// The vocabulary trie.
    pub fn trie(&self) -> &Arc<TokTrie> {
        &self.trie
    }

    /// The tokens allowed next: the ordinary tokens whose bytes the grammar
    /// allows, the special tokens it allows, and the EOS tokens exactly when
    /// the text so far is a sentence.
    ///
    /// # Errors
    /// The matcher is stopped in an error, or a limit was exceeded (the
    /// matcher then stays in that error).
    pub fn compute_mask(&mut self) -> Result<&TokenSet, MatcherError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.stopped {
            self.mask.clear();
            return Ok(&self.mask);
        }
        if self.healing_mask().is_some() {
            return Ok(&self.mask);
        }
        let key = self.parser.position_key();
        if self.mask_key == Some(key) && !self.options.limited() {
            // Same position as the last mask (a lexeme like `[^"]*` that
            // loops on one state): the mask is the same.
            return Ok(&self.mask);
        }
        self.mask_key = None;
        self.parser.begin_step();
        if self.parser.can_extend() {
            if !self.sliced_mask() {
                self.trie.compute_mask_by_state(&mut self.parser, &mut self.mask);
            }
        } else {
            // Only the end of the sequence remains: no walk needed.
            self.mask.clear();
        }
        if let Err(e) = self.filter_token_limits() {
            return Err(self.fail(e));
        }
        let accepting = self.parser.is_accepting();
        if let Err(e) = self.parser.check().and(accepting.clone()) {
            return Err(self.fail(e.into()));
        }
        let accepting = accepting.unwrap_or(false);
        for &eos in self.trie.eos_tokens() {
            if accepting || self.parser.eos_ends_lexeme() {
                self.mask.insert(eos);
            } else if !self.parser.special_token_allowed(eos) {
                self.mask.remove(eos);
            }
        }
        self.mask_key = Some(key);
        Ok(&self.mask)
    }

    /// Consumes one token.
    ///
    /// # Errors
    /// A token outside the mask ([`MatcherError::TokenRejected`]), an unknown
    /// id, a token after EOS, or a limit exceeded. Every error is sticky.
    pub fn consume_token(&mut self, token: TokenId) -> Result<(), MatcherError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        match self.try_step(token) {
            Ok(Some(step)) => {
                self.steps.push(step);
                self.forcing_consumed(token);
                Ok(())
            }
            Ok(None) => {
                let e = MatcherError::TokenRejected { token, position: self.steps.len() };
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
    /// stay: a rejected token was never consumed.
    pub fn rollback(&mut self, n: usize) {
        let n = n.min(self.steps.len());
        let mut frames = 0;
        for step in self.steps.drain(self.steps.len() - n..) {
            match step {
                Step::Bytes(k) => frames += k,
                Step::Special => frames += 1,
                Step::Eos => self.stopped = false,
            }
        }
        self.parser.pop_bytes(frames);
        self.forcing_rolled_back();
        self.options_rolled_back();
    }

    /// Whether the text so far is a sentence (EOS is allowed).
    pub fn is_accepting(&mut self) -> bool {
        self.error.is_none() && (self.stopped || self.parser.is_accepting().unwrap_or(false))
    }

    /// Whether the matcher stopped: after an EOS token, in an error, or
    /// when the grammar allows nothing more than the end of the sequence.
    pub fn is_stopped(&mut self) -> bool {
        self.stopped || self.error.is_some() || !self.parser.can_extend()
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

    fn fail(&mut self, e: MatcherError) -> MatcherError {
        self.error = Some(e.clone());
        e
    }

    /// Consumes `token` if allowed: `Ok(None)` when not allowed (nothing changed).
    fn try_step(&mut self, token: TokenId) -> Result<Option<Step>, MatcherError> {
        if self.stopped {
            return Err(MatcherError::AfterEos { token });
        }
        if let Some(r) = self.healing_step(token) {
            return r;
        }
        self.parser.begin_step();
        let is_eos = self.trie.eos_tokens().contains(&token);
        match self.trie.kind(token) {
            TokenKind::Special => {
                if self.parser.try_consume_special(token)? {
                    Ok(Some(Step::Special))
                } else if is_eos && self.parser.try_consume_eos_end()? {
                    // `stop=""`: the EOS token ends a lexeme and the text goes on.
                    Ok(Some(Step::Special))
                } else if is_eos && self.parser.is_accepting()? {
                    self.stopped = true;
                    Ok(Some(Step::Eos))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn matcher_is_send() {
        assert_send::<Matcher>();
    }
}
