//! The [`Matcher`]'s forced tokens: the bytes the grammar forces
//! (`earley::Parser::forced_bytes`) turned into canonical tokens by
//! [`coalesce::Coalescer`], and prompt-boundary healing.

use coalesce::{Coalescer, Next, Refusal, Tail};
use earley::{ForcedBytes, ForcedStop, PositionKey};
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
/// Invariant: `fb` is what [`earley::Parser::forced_bytes_step`] answers at
/// the position `key` with the matcher's limit, except that `next` may be
/// complete where that search would stop early (when `fb.bytes` is empty;
/// [`Matcher::forced_bytes`] promises a complete `next` only when bytes
/// are forced). Equal keys are equal parser positions (a row id names one
/// computation of a row and every row below it), so a hit is exact.
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
        let max = self.forcing.as_ref().map_or(DEFAULT_MAX_FORCED_BYTES, |f| f.max_bytes);
        let healing = self.forcing.as_ref().is_some_and(|f| f.heal_pos < f.heal.len());
        if self.stopped.is_some() || healing {
            return Ok(ForcedBytes {
                bytes: Vec::new(),
                stop: earley::ForcedStop::Branch,
                next: earley::ByteSet::EMPTY,
                next_complete: false,
                accepting: self.stopped.is_some(),
                special: false,
            });
        }
        let key = self.parser.position_key();
        if let Some(c) = self.forcing.as_ref().and_then(|f| f.cache.as_ref())
            && c.key == key
        {
            return Ok(c.fb.clone());
        }
        self.parser.begin_step();
        // Most steps force nothing: the search stops as soon as that is
        // known, and collects every allowed next byte only when bytes are
        // forced.
        let fb = self.parser.forced_bytes_step(max).map_err(|e| self.fail(e.into()))?;
        if let Some(f) = self.forcing.as_mut() {
            f.cache = Some(ForcedCache { key, fb: fb.clone() });
        }
        Ok(fb)
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
        let fb = self.forced_bytes()?;
        let next = Next { bytes: fb.next.words(), end: fb.accepting || fb.special };
        let Some(f) = self.forcing.as_ref() else { return Ok(ForcedTokens::default()) };
        let r = f.coalescer.forced_tokens(&f.tail, &fb.bytes, &next);
        Ok(ForcedTokens {
            tokens: r.tokens.into_iter().map(TokenId).collect(),
            bytes: fb.bytes,
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
