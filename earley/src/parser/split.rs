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

use super::distinct::{INSIDE, TAKEN};
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

    /// One lexer step per byte (computing the transitions not cached yet:
    /// the split walk asks only for the few states most of it passes
    /// through).
    fn inner_loops(&mut self, inner: StateId) -> Option<[u64; 4]> {
        let mut loops = [0u64; 4];
        for b in 0..=255u8 {
            if self.inner_step(inner, b) == Some(inner) {
                loops[b as usize / 64] |= 1 << (b % 64);
            }
        }
        Some(loops)
    }
}

impl Parser {
    /// The lexer state at the start of the lexeme in progress (its row's
    /// start state), where the split of a later state of the same lexeme
    /// can be derived from (`TokTrie::split_from`): in free text, the
    /// state after a partial trigger from the text's start. `None` before
    /// the first row.
    pub fn lexeme_start(&self) -> Option<StateId> {
        let top = self.frames.last()?;
        self.rows.get(top.row() as usize).map(|r| r.lexer_start)
    }
}

/// The parser as a [`SplitRecognizer`] for the byte-by-byte walk among
/// distinct members once one is taken ([`Parser::needs_byte_walk`]), from
/// [`Parser::taken_split`].
///
/// There, a byte inside the lexeme in progress is accepted by the walk
/// (`Parser::push_byte_distinct`) exactly when its lexer step is plain,
/// unless the byte leaves the lexeme unable to go on (then the row after
/// it is computed at once, and the member it completes is checked) or the
/// position is inside a searching phrase (then a completion is searched
/// for). So the inner steps here are the plain ones that do neither: into
/// a state that is not accepting-and-finished, and, in a searching
/// phrase, inside a string with more completions than a phrase can have
/// members, where the search answers "found" at once. The split's inside
/// tokens are then accepted at every such position, and
/// [`TokTrie::compute_mask_split_by_bytes`](toktrie::TokTrie::compute_mask_split_by_bytes)
/// walks the rest by bytes. A split made here answers differently from
/// one made by [`Parser`] itself, so the two are cached apart, keyed by
/// [`TakenSplit::key`].
#[derive(Debug)]
pub struct TakenSplit<'a> {
    parser: &'a mut Parser,
    searching: bool,
}

impl Parser {
    /// The split recognizer for this position, when a split may serve its
    /// byte-by-byte walk (see [`TakenSplit`]): inside a searching phrase,
    /// only within a string lexeme (its text starts with `"`). Also where
    /// a walk by state stopped with [`ParseError::ByteWalkRequired`]
    /// (the inner steps are sound wherever the walk is by bytes). `None`
    /// for a grammar without distinct phrases.
    ///
    /// [`ParseError::ByteWalkRequired`]: crate::ParseError::ByteWalkRequired
    pub fn taken_split(&mut self) -> Option<TakenSplit<'_>> {
        if !self.g.has_distinct {
            return None;
        }
        let top = *self.frames.last()?;
        let row = self.rows.get(top.row() as usize)?;
        let searching = row.scope & (INSIDE | TAKEN) == INSIDE | TAKEN;
        if searching && (top.fresh() || self.text.get(row.offset as usize) != Some(&b'"')) {
            return None;
        }
        Some(TakenSplit { parser: self, searching })
    }
}

impl TakenSplit<'_> {
    /// The cache key of splits made here: the lexer state of the lexeme in
    /// progress and whether the position searches.
    pub fn key(&self) -> (StateId, bool) {
        (self.parser.frames.last().map_or(StateId::DEAD, |f| f.state), self.searching)
    }

    /// The parser, for the walk by bytes.
    pub fn parser(&mut self) -> &mut Parser {
        self.parser
    }
}

impl toktrie::StateRecognizer for TakenSplit<'_> {
    type State = Frame;

    fn start(&mut self) -> Frame {
        toktrie::StateRecognizer::start(self.parser)
    }

    fn walk_finished(&mut self) {
        toktrie::StateRecognizer::walk_finished(self.parser);
    }

    fn step(&mut self, state: Frame, byte: u8) -> Option<Frame> {
        toktrie::StateRecognizer::step(self.parser, state, byte)
    }

    fn special_allowed(&mut self, token: toktrie::TokenId) -> bool {
        self.parser.special_token_allowed(token)
    }
}

impl SplitRecognizer for TakenSplit<'_> {
    type Inner = StateId;

    fn inner(&mut self, state: Frame) -> StateId {
        state.state
    }

    fn inner_step(&mut self, inner: StateId, byte: u8) -> Option<StateId> {
        let next = self.parser.inner_step(inner, byte)?;
        self.parser.free_inside(next, self.searching).then_some(next)
    }

    fn lift(&mut self, start: Frame, inner: StateId) -> Frame {
        start.within(inner)
    }

    fn inner_rejects(&mut self, inner: StateId, byte: u8) -> bool {
        self.parser.inner_rejects(inner, byte)
    }
}
