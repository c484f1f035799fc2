//! The [`Matcher`]'s forced tokens: the bytes the grammar forces
//! (`earley::Parser::forced_bytes`) turned into canonical tokens by
//! [`coalesce::Coalescer`], and prompt-boundary healing.

use coalesce::{Coalescer, Next, NextBytes, Refusal, Tail};
use earley::{ByteSet, ForcedBytes, ForcedStop, ParseError, PositionKey};
use toktrie::{Recognizer, TokenId, TokenKind};

use super::Step;
use crate::{Matcher, MatcherError};

/// The default limit on forced bytes computed in one step.
pub const DEFAULT_MAX_FORCED_BYTES: usize = 256;

/// A matcher's forcing state: the coalescer, the generated tail, and the
/// prompt bytes still to be generated (token healing).
#[derive(Clone, Debug)]
pub(crate) struct Forcing {
    coalescer: Coalescer,
    pub(crate) enabled: bool,
    max_bytes: usize,
    /// The generated text since its last final piece boundary.
    tail: Tail,
    /// The tail right after the prompt (rollback rebuilds from it).
    base: Tail,
    /// Consumed tokens and, for each, how many healing bytes it covered.
    /// Invariant: one entry per entry of the matcher's `steps`.
    history: Vec<(u32, usize)>,
    /// Prompt bytes removed by healing: `heal[heal_pos..]` must still be
    /// generated before the grammar's text.
    heal: Vec<u8>,
    heal_pos: usize,
    /// Healing bytes covered by the token being consumed.
    pending_heal: usize,
    /// The last forced bytes computed, and the parser position they were
    /// computed at (see [`ForcedCache`]).
    cache: Option<ForcedCache>,
}

/// Forced bytes kept between steps, as llguidance keeps its forced bytes in
/// the parser: most steps that force bytes are followed by a step at a
/// position inside them (the forced tokens cover a prefix, or the sampled
/// token does), whose forced bytes are the rest.
///
/// Invariant: `fb` is what [`earley::Parser::forced_bytes_quick`] answers
/// at the position `key` with the matcher's limit, except that `fb.next`
/// holds every allowed byte among `tested`, the bytes whose lexer class was
/// tried after the forced bytes (more are tried when the coalescer or
/// [`Matcher::forced_bytes`] asks: [`AskNext`]), and `fb.next_complete`
/// says whether `tested` is every byte. Equal keys are equal parser
/// positions (a row id names one computation of a row and every row below
/// it), so a hit is exact.
///
/// Why the rest is exact after consuming a prefix `b` of `F = fb.bytes`:
/// the search from the new position visits the positions the search from
/// `key` visited after `b`, with the same answers there (they are the
/// same parser positions), so it finds `F[b.len()..]` and the same stop,
/// `next` and flags; only a search stopped by the byte limit could go
/// further from the new position, so such a result is never advanced.
#[derive(Clone, Debug)]
struct ForcedCache {
    key: PositionKey,
    fb: ForcedBytes,
    tested: ByteSet,
}

/// The bytes allowed after the cached forced bytes, found on demand: the
/// parser tries only the lexer classes of the bytes asked about that were
/// not tried before. Most steps that force bytes need a few classes to
/// decide the coalescer's end check, where trying every class (each a
/// derivative in a lexer that has not met the transition) cost two thirds
/// of a forced-token step.
struct AskNext<'a> {
    parser: &'a mut earley::Parser,
    cache: &'a mut ForcedCache,
    /// A limit exceeded while trying; every later answer is "allowed".
    error: Option<ParseError>,
}

impl AskNext<'_> {
    /// Tries the classes of the bytes of `set` not tried yet (up to the
    /// first allowed one with `first_only`).
    fn ask(&mut self, set: [u64; 4], first_only: bool) {
        let missing = ByteSet::from_words(set).difference(&self.cache.tested);
        if missing.is_empty() || self.error.is_some() {
            return;
        }
        match self.parser.next_bytes_after(&self.cache.fb.bytes, missing, first_only) {
            Ok((allowed, tried)) => {
                let c = &mut *self.cache;
                c.fb.next = c.fb.next.union(&allowed);
                c.tested = c.tested.union(&tried);
                c.fb.next_complete = c.tested == ByteSet::FULL;
            }
            Err(e) => self.error = Some(e),
        }
    }
}

impl NextBytes for AskNext<'_> {
    fn may_end(&self) -> bool {
        self.cache.fb.accepting || self.cache.fb.special
    }

    fn allowed(&mut self, set: [u64; 4]) -> [u64; 4] {
        self.ask(set, false);
        if self.error.is_some() {
            return set; // the cautious answer; the caller reports the error
        }
        self.cache.fb.next.intersection(&ByteSet::from_words(set)).words()
    }

    fn any_allowed_in(&mut self, set: [u64; 4]) -> bool {
        let want = ByteSet::from_words(set);
        if !self.cache.fb.next.intersection(&want).is_empty() {
            return true;
        }
        self.ask(set, true);
        self.error.is_some() || !self.cache.fb.next.intersection(&want).is_empty()
    }

    fn any_allowed(&mut self) -> bool {
        match self.cache.fb.stop {
            // Two bytes (or a class of several), or the one byte at the limit.
            ForcedStop::Branch | ForcedStop::Limit => true,
            ForcedStop::Dead => false,
            _ => self.allowed([u64::MAX; 4]) != [0; 4],
        }
    }
}

/// The answer of [`Matcher::forced_tokens`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ForcedTokens {
    /// Tokens to append without a model call, canonical whatever follows.
    pub tokens: Vec<TokenId>,
    /// The bytes the grammar forces here (the tokens cover a prefix).
    pub bytes: Vec<u8>,
    /// How many of `bytes` the tokens cover; the rest is held back for the
    /// next sampled token, which the mask makes start with them.
    pub covered: usize,
    /// Why no token was forced although bytes were, if so.
    pub refusal: Option<Refusal>,
}

/// The parser seen through the healing prefix: the first bytes must be the
/// healed prompt bytes, the rest goes to the parser.
struct Healing<'a> {
    heal: &'a [u8],
    /// Bytes pushed so far (healing bytes first).
    pushed: usize,
    parser: &'a mut earley::Parser,
}

impl Recognizer for Healing<'_> {
    fn trie_started(&mut self) {
        self.parser.begin_step();
    }

    fn try_push_byte(&mut self, byte: u8) -> bool {
        let ok = match self.heal.get(self.pushed) {
            Some(&h) => h == byte,
            None => self.parser.try_push_byte(byte),
        };
        self.pushed += usize::from(ok);
        ok
    }

    fn pop_bytes(&mut self, n: usize) {
        let in_parser = self.pushed.saturating_sub(self.heal.len()).min(n);
        Recognizer::pop_bytes(self.parser, in_parser);
        self.pushed -= n.min(self.pushed);
    }
}

impl Forcing {
    pub(crate) fn new(coalescer: Coalescer) -> Forcing {
        Forcing {
            coalescer,
            enabled: true,
            max_bytes: DEFAULT_MAX_FORCED_BYTES,
            base: Tail::new(),
            tail: Tail::new(),
            history: Vec::new(),
            heal: Vec::new(),
            heal_pos: 0,
            pending_heal: 0,
            cache: None,
        }
    }

    /// Back to the start: no tokens, no prompt, no healing.
    pub(crate) fn reset(&mut self) {
        let (coalescer, enabled, max_bytes) =
            (self.coalescer.clone(), self.enabled, self.max_bytes);
        *self = Forcing::new(coalescer);
        self.enabled = enabled;
        self.max_bytes = max_bytes;
    }
}

impl Matcher {
    /// Turns forcing on or off (on by default when the vocabulary's
    /// tokenizer supports forced tokens); off,
    /// [`forced_tokens`](Matcher::forced_tokens) is always empty.
    pub fn set_forcing(&mut self, on: bool) {
        if let Some(f) = &mut self.forcing {
            f.enabled = on;
        }
    }

    /// The limit on forced bytes computed in one step (default
    /// [`DEFAULT_MAX_FORCED_BYTES`]).
    pub fn set_max_forced_bytes(&mut self, max: usize) {
        if let Some(f) = &mut self.forcing {
            f.max_bytes = max;
            f.cache = None;
        }
    }

    /// The bytes every continuation allowed by the grammar starts with
    /// (empty when stopped or while healed prompt bytes are pending). The
    /// allowed next bytes are complete when some bytes are forced.
    ///
    /// # Errors
    /// The matcher is stopped in an error, or a limit was exceeded.
    pub fn forced_bytes(&mut self) -> Result<ForcedBytes, MatcherError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.stopped.is_some() || self.healing_pending() {
            return Ok(ForcedBytes {
                bytes: Vec::new(),
                stop: earley::ForcedStop::Branch,
                next: earley::ByteSet::EMPTY,
                next_complete: false,
                accepting: self.stopped.is_some(),
                special: false,
            });
        }
        self.search_forced()?;
        let Some(cache) = self.forcing.as_mut().and_then(|f| f.cache.as_mut()) else {
            // No tokenizer: nothing kept between steps.
            self.parser.begin_step();
            return self
                .parser
                .forced_bytes_step(DEFAULT_MAX_FORCED_BYTES)
                .map_err(|e| self.fail(e.into()));
        };
        if !cache.fb.bytes.is_empty() && !cache.fb.next_complete {
            let mut ask = AskNext { parser: &mut self.parser, cache, error: None };
            ask.allowed([u64::MAX; 4]);
            if let Some(e) = ask.error {
                return Err(self.fail(e.into()));
            }
            return Ok(ask.cache.fb.clone());
        }
        Ok(cache.fb.clone())
    }

    /// Makes the forcing state's cache hold the forced bytes at the current
    /// position: kept from an earlier step, or searched (stopping as soon
    /// as the answer is known: most steps force nothing, and where bytes
    /// are forced the coalescer asks about the next bytes it needs).
    fn search_forced(&mut self) -> Result<(), MatcherError> {
        let key = self.parser.position_key();
        let Some(f) = self.forcing.as_ref() else { return Ok(()) };
        if f.cache.as_ref().is_some_and(|c| c.key == key) {
            return Ok(());
        }
        let max = f.max_bytes;
        self.parser.begin_step();
        let fb = self.parser.forced_bytes_quick(max).map_err(|e| self.fail(e.into()))?;
        // The classes the search found allowed are known; no others are.
        let tested = if fb.next_complete { ByteSet::FULL } else { fb.next };
        if let Some(f) = self.forcing.as_mut() {
            f.cache = Some(ForcedCache { key, fb, tested });
        }
        Ok(())
    }

    /// The tokens the grammar forces now, in the canonical tokenization
    /// (see the `coalesce` crate); empty without a tokenizer, when forcing
    /// is off, or when they cannot be canonical. EOS is never forced.
    ///
    /// # Errors
    /// As [`forced_bytes`](Matcher::forced_bytes).
    pub fn forced_tokens(&mut self) -> Result<ForcedTokens, MatcherError> {
        if !self.forcing.as_ref().is_some_and(|f| f.enabled) {
            return Ok(ForcedTokens::default());
        }
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.stopped.is_some() || self.healing_pending() {
            return Ok(ForcedTokens::default());
        }
        self.search_forced()?;
        let Some(f) = self.forcing.as_mut() else { return Ok(ForcedTokens::default()) };
        let Some(cache) = f.cache.as_mut() else { return Ok(ForcedTokens::default()) };
        let coalescer = &mut f.coalescer;
        let bytes = cache.fb.bytes.clone();
        let mut ask = AskNext { parser: &mut self.parser, cache, error: None };
        let r = coalescer.forced_tokens_asking(&f.tail, &bytes, &mut ask);
        if let Some(e) = ask.error {
            return Err(self.fail(e.into()));
        }
        Ok(ForcedTokens {
            tokens: r.tokens.into_iter().map(TokenId).collect(),
            bytes,
            covered: r.covered,
            refusal: r.refusal,
        })
    }

    /// Computes the forced tokens and consumes them; returns them.
    ///
    /// # Errors
    /// As [`forced_bytes`](Matcher::forced_bytes) and
    /// [`consume_token`](Matcher::consume_token).
    pub fn consume_forced(&mut self) -> Result<Vec<TokenId>, MatcherError> {
        let f = self.forced_tokens()?;
        self.consume_tokens(&f.tokens)?;
        Ok(f.tokens)
    }

    /// Every token path that spells the current forced tokens' bytes (the
    /// .txt framework), canonical path first, at most `limit` paths.
    ///
    /// # Errors
    /// As [`forced_tokens`](Matcher::forced_tokens).
    pub fn forced_alternatives(&mut self, limit: usize) -> Result<Vec<Vec<TokenId>>, MatcherError> {
        let f = self.forced_tokens()?;
        if f.tokens.is_empty() {
            return Ok(Vec::new());
        }
        let mut all = coalesce::alternatives(&self.trie, &f.bytes[..f.covered], limit);
        all.retain(|p| *p != f.tokens);
        all.insert(0, f.tokens);
        all.truncate(limit.max(1));
        Ok(all)
    }

    /// Prepares the prompt: tokenizes its end together with the grammar's
    /// forced prefix (which the matcher consumes) and heals its last
    /// tokens; returns the prompt to give the model. Healed prompt bytes
    /// ([`healing_bytes`](Matcher::healing_bytes)) must then be generated
    /// first: the mask allows exactly the tokens that continue them.
    /// Without a tokenizer, or once tokens were consumed, the prompt is
    /// returned unchanged.
    ///
    /// # Errors
    /// As [`forced_bytes`](Matcher::forced_bytes).
    pub fn process_prompt(&mut self, prompt: &[TokenId]) -> Result<Vec<TokenId>, MatcherError> {
        let fresh = self.steps.is_empty() && self.parser.num_bytes() == 0;
        if self.forcing.is_none() || !fresh {
            return Ok(prompt.to_vec());
        }
        let fb = self.forced_bytes()?;
        let next = Next { bytes: fb.next.words(), end: fb.accepting || fb.special };
        let ids: Vec<u32> = prompt.iter().map(|t| t.0).collect();
        let Some(f) = self.forcing.as_mut() else { return Ok(prompt.to_vec()) };
        let p = f.coalescer.process_prompt(&ids, &fb.bytes, &next);
        for &b in &fb.bytes[..p.grammar_bytes] {
            // Forced bytes: accepted by construction; kept below every step.
            if !self.parser.try_consume_byte(b)? {
                return Err(self
                    .fail(MatcherError::TokenRejected { token: TokenId(u32::MAX), position: 0 }));
            }
        }
        let Some(f) = self.forcing.as_mut() else { return Ok(prompt.to_vec()) };
        f.tail.clear();
        f.tail.extend(f.coalescer.tokenizer(), &p.tokens);
        f.base = f.tail.clone();
        f.heal = p.healed;
        f.heal_pos = 0;
        self.mask_key = None;
        self.refresh_status()?;
        Ok(p.tokens.into_iter().map(TokenId).collect())
    }

    /// Prompt bytes removed by [`process_prompt`](Matcher::process_prompt)
    /// that the model has not generated again yet.
    pub fn healing_bytes(&self) -> &[u8] {
        self.forcing.as_ref().map_or(&[], |f| &f.heal[f.heal_pos..])
    }

    /// Whether healed prompt bytes are still to be generated.
    pub(super) fn healing_pending(&self) -> bool {
        self.forcing.as_ref().is_some_and(|f| f.heal_pos < f.heal.len())
    }

    /// Records a consumed token in the tail (called after every step, with
    /// the parser position before it), and keeps the cached forced bytes
    /// when the token spelled a prefix of them.
    pub(super) fn forcing_consumed(&mut self, token: TokenId, before: PositionKey) {
        let key = self.parser.position_key();
        let bytes = match self.trie.kind(token) {
            TokenKind::Ordinary => self.trie.token_bytes(token),
            _ => None,
        };
        if let Some(f) = &mut self.forcing {
            let heal = std::mem::take(&mut f.pending_heal);
            f.heal_pos += heal;
            f.history.push((token.0, heal));
            f.tail.push(f.coalescer.tokenizer(), token.0);
            if let Some(c) = f.cache.as_mut()
                && heal == 0
                && c.key == before
                && c.fb.stop != ForcedStop::Limit
                && let Some(b) = bytes
                && c.fb.bytes.starts_with(b)
            {
                c.fb.bytes.drain(..b.len());
                c.key = key;
            } else {
                f.cache = None;
            }
        }
    }

    /// Brings the tail and the healing position back after a rollback.
    pub(super) fn forcing_rolled_back(&mut self) {
        let n = self.steps.len();
        if let Some(f) = &mut self.forcing {
            f.pending_heal = 0;
            if f.history.len() <= n {
                return;
            }
            for &(_, heal) in &f.history[n..] {
                f.heal_pos -= heal;
            }
            f.history.truncate(n);
            f.tail = f.base.clone();
            for &(t, _) in &f.history {
                f.tail.push(f.coalescer.tokenizer(), t);
            }
        }
    }

    /// The mask while healed prompt bytes are pending, or `None`.
    pub(super) fn healing_mask(&mut self) -> Option<()> {
        let f = self.forcing.as_ref()?;
        if f.heal_pos >= f.heal.len() {
            return None;
        }
        let mut h = Healing { heal: &f.heal[f.heal_pos..], pushed: 0, parser: &mut self.parser };
        self.trie.compute_mask(&mut h, &mut self.mask);
        self.mask_key = None;
        Some(())
    }

    /// Consumes `token` while healed prompt bytes are pending, or `None`.
    pub(super) fn healing_step(
        &mut self,
        token: TokenId,
    ) -> Option<Result<Option<Step>, MatcherError>> {
        let f = self.forcing.as_mut()?;
        let heal = &f.heal[f.heal_pos.min(f.heal.len())..];
        if heal.is_empty() {
            return None;
        }
        if self.trie.kind(token) != TokenKind::Ordinary {
            return Some(Ok(None)); // no special token or EOS inside the prompt
        }
        let bytes = self.trie.token_bytes(token).unwrap_or(&[]);
        let k = heal.len().min(bytes.len());
        if bytes.is_empty() || bytes[..k] != heal[..k] {
            return Some(Ok(None));
        }
        f.pending_heal = k;
        self.parser.begin_step();
        for (i, &b) in bytes[k..].iter().enumerate() {
            match self.parser.try_consume_byte(b) {
                Ok(true) => {}
                Ok(false) => {
                    self.parser.pop_bytes(i);
                    if let Some(f) = self.forcing.as_mut() {
                        f.pending_heal = 0;
                    }
                    return Some(Ok(None));
                }
                Err(e) => return Some(Err(e.into())),
            }
        }
        Some(Ok(Some(Step::Bytes(bytes.len() - k))))
    }
}
