//! The lexer's states: their content (sets of (lexeme, derivative) pairs),
//! stored back to back in one buffer and interned by content hash, and the
//! table row each new state gets.

use std::hash::{Hash, Hasher};

use derivre::ExprRef;
use rustc_hash::FxHasher;

use super::{AcceptSetId, Lexer, MISSING, NO_ACCEPT, StateId};
use crate::error::{LexerError, LexerErrorKind};
use crate::spec::LexemeId;

impl Lexer {
    /// The (lexeme id, expression id) pairs of the state of dense index
    /// `dense`, back to back.
    pub(super) fn pairs_of(&self, dense: usize) -> &[u32] {
        &self.state_data[self.state_starts[dense] as usize..self.state_starts[dense + 1] as usize]
    }

    /// The hash of a state's content (see `state_by_hash`).
    fn content_hash(pairs: &[u32]) -> u64 {
        let mut h = FxHasher::default();
        pairs.hash(&mut h);
        h.finish()
    }

    /// The state of content `pairs`, interned; the dead state (and the
    /// error recorded) past a limit.
    pub(super) fn intern_or_dead(&mut self, pairs: &[u32]) -> StateId {
        match self.intern_state(pairs) {
            Ok(s) => s,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
                StateId::DEAD
            }
        }
    }

    /// The state of content `pairs`: the one interned before, or a new
    /// one with its row of the table.
    pub(super) fn intern_state(&mut self, pairs: &[u32]) -> Result<StateId, LexerError> {
        let hash = Lexer::content_hash(pairs);
        let mut at = self.state_by_hash.get(&hash).copied().unwrap_or(u32::MAX);
        while at != u32::MAX {
            if self.pairs_of(at as usize) == pairs {
                return Ok(self.state_of[at as usize]);
            }
            at = self.same_hash[at as usize];
        }
        if self.num_states() - self.base_states >= self.limits.max_states {
            return Err(LexerError::new(LexerErrorKind::TooManyStates {
                limit: self.limits.max_states,
            }));
        }
        let mut accepting = Vec::new();
        let mut lazy_end = false;
        let mut hidden = 0;
        for p in pairs.chunks_exact(2) {
            if self.exprs.is_nullable(ExprRef::new(p[1])) {
                let id = LexemeId(p[0]);
                let lazy = self.lexemes[id.index()].lazy;
                lazy_end |= lazy;
                if lazy {
                    hidden = hidden.max(self.exprs.possible_lookahead_len(ExprRef::new(p[1])));
                }
                accepting.push(id);
            }
        }
        // Where a lazy lexeme ends, only the lazy ones match (llguidance:
        // a greedy lexeme matching the same text does not end with it).
        if lazy_end {
            let lexemes = &self.lexemes;
            accepting.retain(|id| lexemes[id.index()].lazy);
        }
        let accepting = if accepting.is_empty() {
            None
        } else {
            let accepting = accepting.into_boxed_slice();
            Some(match self.accept_ids.get(&accepting) {
                Some(&a) => a,
                None => {
                    let a = AcceptSetId(self.accept_sets.len() as u32);
                    self.accept_sets.push(accepting.clone());
                    self.accept_ids.insert(accepting, a);
                    a
                }
            })
        };
        let dense = self.num_states();
        let width = self.classes.len() + 1;
        let row = dense * width;
        if (row + width) as u64 >= (1u64 << 31)
            || self.state_data.len() + pairs.len() > u32::MAX as usize
        {
            return Err(LexerError::new(LexerErrorKind::TooManyStates { limit: dense }));
        }
        // The first state interned (no pairs) is the dead state, row 0.
        let s =
            if dense == 0 { StateId::DEAD } else { StateId(((row as u32) << 1) | lazy_end as u32) };
        self.state_data.extend_from_slice(pairs);
        self.state_starts.push(self.state_data.len() as u32);
        self.state_of.push(s);
        self.same_hash.push(self.state_by_hash.insert(hash, dense as u32).unwrap_or(u32::MAX));
        self.hidden.push(hidden as u32);
        // The dead state's row points to itself, so a walk never reads MISSING there.
        let fill = if s == StateId::DEAD { StateId::DEAD.0 } else { MISSING };
        self.table.extend(std::iter::repeat_n(fill, self.classes.len()));
        self.table.push(accepting.map_or(NO_ACCEPT, |a| a.0));
        Ok(s)
    }
}
