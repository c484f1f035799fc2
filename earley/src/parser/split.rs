//! The parser as a [`SplitRecognizer`]: its inner state is the lexer state
//! of the lexeme in progress, and its inner steps are the lexer's plain
//! transitions (the byte stays inside the lexeme, no lazy lexeme ends).
//!
//! [`Parser::step`](super::Parser) takes a plain transition to
//! `top.within(next)` whatever the row, so the split's contract holds with
//! `lift(start, s) = start.within(s)`. Bytes that end a lexeme, end a lazy
//! one or are not cached yet as plain are left to the full step.

use lexer::StateId;
use toktrie::SplitRecognizer;

use super::{Frame, Parser};

impl SplitRecognizer for Parser {
    type Inner = StateId;

    fn inner(&mut self, state: Frame) -> StateId {
        state.state
    }

    #[inline]
    fn inner_step(&mut self, inner: StateId, byte: u8) -> Option<StateId> {
        let next = self.lexer.next(inner, byte);
        next.is_plain().then_some(next)
    }

    #[inline]
    fn lift(&mut self, start: Frame, inner: StateId) -> Frame {
        start.within(inner)
    }

    /// A byte no lexeme of `inner` continues with, where no lexeme
    /// matches (so none can end before it): `step` rejects it from every
    /// row (`step_slow`'s dead, non-accepting case). In free text these
    /// are the bytes that are never valid UTF-8 there, about 77 of the
    /// frontier's 78 nodes on o200k before this rule.
    #[inline]
    fn inner_rejects(&mut self, inner: StateId, byte: u8) -> bool {
        self.lexer.next(inner, byte).is_dead() && self.lexer.accepting(inner).is_none()
    }
}
