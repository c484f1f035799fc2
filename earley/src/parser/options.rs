//! Lexeme options that act beyond the lexer: hidden stop text (`stop=`),
//! lexemes an end-of-sequence token may end (`stop=""`), and lexemes
//! limited in tokens (`max_tokens=N`). See `DESIGN.md`, "Lexeme options".
//!
//! - A lazy lexeme with a hidden stop ends where its stop text completes.
//!   When every lexeme allowed next starts with that text in its
//!   structure, the text is lexed again as the start of what follows (no
//!   byte is lost). Otherwise the position is *sealed*: a frame that
//!   rejects every further byte (the token must end with the stop text),
//!   which [`Parser::take_hidden`] turns into the fresh row after the
//!   lexeme once the token is consumed, reporting the hidden length.
//! - Token counts are the caller's (the parser sees bytes): the matcher
//!   counts the tokens a lexeme spans and asks [`Parser::apply_max_tokens`]
//!   after each token.

use lexer::{LexemeSet, StateId};

use super::{Frame, Parser, RowKey};
use crate::error::ParseError;

/// What [`Parser::apply_max_tokens`] did to the lexeme in progress.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MaxTokensOutcome {
    /// No live lexeme has reached its limit (or no lexeme is in progress).
    Unchanged,
    /// The lexemes at their limit were dropped; others go on.
    Limited,
    /// Every live lexeme reached its limit and the text matches: the
    /// lexeme ended here.
    Ended,
    /// Every live lexeme reached its limit and none matches the text: the
    /// lexeme cannot end here, so the token that got here is not allowed.
    CannotEnd,
}

impl Parser {
    /// A lexeme with a hidden stop ended at `state` with byte `b`; `r` is
    /// the row after it. Re-lexes the stop text into what follows when
    /// every allowed lexeme starts with it, else seals the position.
    #[inline(never)]
    pub(super) fn end_hidden(&mut self, r: usize, state: StateId, b: u8) -> Option<Frame> {
        let h = self.lexer.hidden_len(state);
        let start = self.rows[r].lexer_start;
        let acc = self.lexer.accepting(state)?;
        // The hidden bytes: the stop literal of an ending lexeme with that
        // length, or the last byte. (A stop regex of several words longer
        // than one byte leaves them unknown: sealed; see DESIGN.md.)
        let lexer = &self.lexer;
        let text: Option<Vec<u8>> = lexer
            .accept_set(acc)
            .iter()
            .filter_map(|&l| lexer.stop_bytes(l))
            .find(|t| t.len() == h)
            .map(<[u8]>::to_vec)
            .or_else(|| (h == 1).then(|| vec![b]));
        if let Some(text) = text {
            let forced = {
                let mut live = lexer.live_lexemes(start).peekable();
                live.peek().is_some() && live.all(|l| lexer.forces_bytes(l, &text))
            };
            if forced {
                return self.relex_hidden(r, start, &text);
            }
        }
        self.hidden_pending = h as u32;
        Some(Frame::new(StateId::DEAD, r as u32, true))
    }

    /// Lexes the hidden `text` from row `r`'s start state `start`.
    fn relex_hidden(&mut self, r: usize, start: StateId, text: &[u8]) -> Option<Frame> {
        let mut s = start;
        for (i, &c) in text.iter().enumerate() {
            let next = self.lexer.next(s, c);
            if next.is_dead() {
                return None;
            }
            if next.is_lazy_end() {
                // A lexeme can only end at the last hidden byte (every
                // allowed lexeme starts with the whole text).
                return if i + 1 == text.len() { self.end_lazy(r, next, c) } else { None };
            }
            s = next;
        }
        Some(Frame::new(s, r as u32, false))
    }

    /// How many bytes of hidden stop text end the consumed text when the
    /// position is sealed (see [`take_hidden`](Parser::take_hidden)), else 0.
    pub fn sealed_hidden(&self) -> usize {
        match self.frames.last() {
            Some(top) if top.fresh() && top.state.is_dead() => self.hidden_pending as usize,
            _ => 0,
        }
    }

    /// `state` (a row's start state) without the `%ignore` lexeme, for
    /// the row right after `%ignore` when it matches once per boundary.
    pub(super) fn without_skip(&mut self, state: StateId) -> StateId {
        let Some(skip) = self.g.skip else { return state };
        let mut keep = LexemeSet::default();
        for l in self.lexer.live_lexemes(state).filter(|&l| l != skip) {
            keep.insert(l);
        }
        self.lexer.start_state(&keep)
    }

    /// After a token was consumed: when it ended with hidden stop text
    /// (the position is sealed), unseals it and returns the number of
    /// hidden bytes the caller should take back; else 0. `tail` is the
    /// end of the consumed text (at least [`sealed_hidden`](Parser::sealed_hidden)
    /// bytes when the caller has them): when every lexeme allowed next
    /// starts with the hidden text (known here but not during the mask
    /// walk for a stop regex of several words), it is lexed again as their
    /// start and nothing is hidden; otherwise the position becomes the
    /// fresh row after the lexeme.
    pub fn take_hidden(&mut self, tail: &[u8]) -> usize {
        let h = self.sealed_hidden();
        let Some(top) = self.frames.last().copied() else { return 0 };
        if !(top.fresh() && top.state.is_dead()) {
            return 0;
        }
        self.hidden_pending = 0;
        let r = top.row() as usize;
        let start = self.rows.get(r).map_or(StateId::DEAD, |row| row.lexer_start);
        if h > 0 && tail.len() >= h {
            let text = &tail[tail.len() - h..];
            let lexer = &self.lexer;
            let forced = {
                let mut live = lexer.live_lexemes(start).peekable();
                live.peek().is_some() && live.all(|l| lexer.forces_bytes(l, text))
            };
            if forced && let Some(f) = self.relex_hidden(r, start, text) {
                if let Some(top) = self.frames.last_mut() {
                    *top = f;
                }
                return 0;
            }
        }
        if let Some(f) = self.frames.last_mut() {
            *f = Frame::new(start, r as u32, true);
        }
        h
    }

    /// Whether an end-of-sequence token may end the lexeme in progress
    /// here: it matches and one of the matching lexemes has `stop=""`.
    pub fn eos_ends_lexeme(&self) -> bool {
        let Some(&top) = self.frames.last() else { return false };
        if top.fresh() {
            return false;
        }
        let Some(acc) = self.lexer.accepting(top.state) else { return false };
        self.lexer.accept_set(acc).iter().any(|&l| self.lexer.ends_at_eos(l))
    }

    /// Consumes an end-of-sequence token that ends the lexeme in progress
    /// (see [`eos_ends_lexeme`](Parser::eos_ends_lexeme)); it counts as one
    /// frame, like a special token. `Ok(false)` (nothing changed) when it
    /// may not.
    ///
    /// # Errors
    /// A limit exceeded.
    pub fn try_consume_eos_end(&mut self) -> Result<bool, ParseError> {
        self.check()?;
        if !self.eos_ends_lexeme() {
            return Ok(false);
        }
        let Some(&top) = self.frames.last() else { return Ok(false) };
        let Some(acc) = self.lexer.accepting(top.state) else { return Ok(false) };
        self.boundary = self.text.len() as u32;
        let Some(r) = self.push_row(top.row() as usize, RowKey::Lexemes(acc)) else {
            self.check()?;
            return Ok(false);
        };
        self.frames.push(Frame::new(self.rows[r].lexer_start, r as u32, true));
        self.sync_text();
        self.check()?;
        Ok(true)
    }

    /// The lexeme in progress: the row it started at, or `None` at a
    /// lexeme boundary (no byte of the next lexeme seen yet).
    pub fn lexeme_row(&self) -> Option<u32> {
        self.frames.last().filter(|f| !f.fresh()).map(|f| f.row())
    }

    /// Whether the last consumed byte stayed in the lexeme of the byte
    /// before it (it did not end a lexeme): where llguidance checks
    /// `max_tokens`.
    pub fn last_byte_continued_lexeme(&self) -> bool {
        match self.frames.as_slice() {
            [.., prev, top] => !top.fresh() && prev.row() == top.row(),
            _ => false,
        }
    }

    /// The lexemes of the lexeme in progress that reached their
    /// `max_tokens` when it spans `count` tokens, and the outcome of
    /// dropping them, without changing anything.
    pub fn max_tokens_outcome(&mut self, count: u32) -> MaxTokensOutcome {
        self.max_tokens_plan(count).0
    }

    fn max_tokens_plan(&mut self, count: u32) -> (MaxTokensOutcome, Option<LexemeSet>) {
        let Some(&top) = self.frames.last() else { return (MaxTokensOutcome::Unchanged, None) };
        if top.fresh() {
            return (MaxTokensOutcome::Unchanged, None);
        }
        let mut keep = LexemeSet::default();
        let mut any_limited = false;
        for l in self.lexer.live_lexemes(top.state) {
            if self.lexer.max_tokens(l).is_some_and(|m| m <= count) {
                any_limited = true;
            } else {
                keep.insert(l);
            }
        }
        if !any_limited {
            return (MaxTokensOutcome::Unchanged, None);
        }
        if !keep.is_empty() {
            return (MaxTokensOutcome::Limited, Some(keep));
        }
        if self.lexer.accepting(top.state).is_some() {
            (MaxTokensOutcome::Ended, None)
        } else {
            (MaxTokensOutcome::CannotEnd, None)
        }
    }

    /// Applies `max_tokens` to the lexeme in progress when it spans
    /// `count` tokens (the caller counts them): lexemes at their limit are
    /// dropped; when none is left the lexeme ends here if it matches.
    /// [`MaxTokensOutcome::CannotEnd`] changes nothing.
    ///
    /// # Errors
    /// A limit exceeded.
    pub fn apply_max_tokens(&mut self, count: u32) -> Result<MaxTokensOutcome, ParseError> {
        self.check()?;
        let (outcome, keep) = self.max_tokens_plan(count);
        let Some(&top) = self.frames.last() else { return Ok(outcome) };
        match outcome {
            MaxTokensOutcome::Limited => {
                let keep = keep.unwrap_or_default();
                let s = self.lexer.limit_state(top.state, &keep);
                if let Some(f) = self.frames.last_mut() {
                    *f = top.within(s);
                }
            }
            MaxTokensOutcome::Ended => {
                let Some(acc) = self.lexer.accepting(top.state) else { return Ok(outcome) };
                match self.push_row(top.row() as usize, RowKey::Lexemes(acc)) {
                    Some(r) => {
                        let start = self.rows[r].lexer_start;
                        if let Some(f) = self.frames.last_mut() {
                            *f = Frame::new(start, r as u32, true);
                        }
                    }
                    None => {
                        self.check()?;
                        return Ok(MaxTokensOutcome::CannotEnd);
                    }
                }
            }
            MaxTokensOutcome::Unchanged | MaxTokensOutcome::CannotEnd => {}
        }
        self.check()?;
        Ok(outcome)
    }
}
