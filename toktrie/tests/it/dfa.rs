//! A table-driven DFA recognizer and the per-token brute-force oracle the
//! walk is checked against.

use toktrie::{Recognizer, StateRecognizer, TokTrie, TokenId, TokenKind, TokenSet};

/// The dead state: a transition to it rejects the byte.
pub(crate) const DEAD: u32 = u32::MAX;

/// A deterministic automaton over bytes; every non-dead state is live.
#[derive(Clone, Debug)]
pub(crate) struct Dfa {
    /// `table[state * 256 + byte]`: the next state or [`DEAD`].
    pub(crate) table: Vec<u32>,
    /// Special token ids this recognizer allows.
    pub(crate) specials: Vec<TokenId>,
}

impl Dfa {
    /// A DFA with `states` states, all transitions given by `next`.
    pub(crate) fn from_fn(states: u32, next: impl Fn(u32, u8) -> Option<u32>) -> Dfa {
        let mut table = vec![DEAD; states as usize * 256];
        for s in 0..states {
            for b in 0..=255u8 {
                table[s as usize * 256 + b as usize] = next(s, b).unwrap_or(DEAD);
            }
        }
        Dfa { table, specials: Vec::new() }
    }

    /// Whether every byte of `bytes` is accepted in turn from state 0.
    pub(crate) fn accepts_all(&self, bytes: &[u8]) -> bool {
        let mut s = 0u32;
        for &b in bytes {
            s = self.table[s as usize * 256 + b as usize];
            if s == DEAD {
                return false;
            }
        }
        true
    }

    /// The recognizer: the DFA with a stack of states, starting in state 0.
    pub(crate) fn recognizer(&self) -> DfaRecognizer<'_> {
        DfaRecognizer { dfa: self, stack: vec![0], pushes: 0, pops: 0 }
    }

    /// The same DFA for the walk that keeps the states, starting in `start`.
    pub(crate) fn state_recognizer(&self, start: u32) -> DfaStates<'_> {
        DfaStates { dfa: self, start, steps: 0, accepted: 0, finished: 0 }
    }

    /// The oracle: the mask computed token by token.
    pub(crate) fn brute_force(&self, trie: &TokTrie, len: usize) -> TokenSet {
        let mut mask = TokenSet::new(len.max(trie.vocab_size()));
        for id in 0..trie.vocab_size() as u32 {
            let id = TokenId(id);
            let allowed = match trie.kind(id) {
                TokenKind::Ordinary => {
                    let bytes = trie.token_bytes(id).unwrap();
                    !bytes.is_empty() && self.accepts_all(bytes)
                }
                TokenKind::Special => self.specials.contains(&id),
                _ => false,
            };
            if allowed {
                mask.insert(id);
            }
        }
        mask
    }
}

/// A [`Dfa`] driven as a [`Recognizer`]; it counts its calls and checks that
/// the walk never pops more than it pushed.
#[derive(Debug)]
pub(crate) struct DfaRecognizer<'a> {
    dfa: &'a Dfa,
    /// The state after each pushed byte; `stack[0]` is the start state.
    pub(crate) stack: Vec<u32>,
    pub(crate) pushes: usize,
    pub(crate) pops: usize,
}

impl DfaRecognizer<'_> {
    /// Pushes bytes that must be accepted (positions the recognizer).
    pub(crate) fn push_all(&mut self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.try_push_byte(b))
    }
}

impl Recognizer for DfaRecognizer<'_> {
    fn try_push_byte(&mut self, byte: u8) -> bool {
        let top = *self.stack.last().unwrap();
        let next = self.dfa.table[top as usize * 256 + byte as usize];
        if next == DEAD {
            return false;
        }
        self.stack.push(next);
        self.pushes += 1;
        true
    }

    fn pop_bytes(&mut self, n: usize) {
        assert!(n < self.stack.len(), "popped {n} bytes with {} pushed", self.stack.len() - 1);
        self.stack.truncate(self.stack.len() - n);
        self.pops += n;
    }

    fn special_allowed(&mut self, token: TokenId) -> bool {
        assert_eq!(self.stack.len(), 1, "specials are asked about at the walk's start position");
        self.dfa.specials.contains(&token)
    }
}

/// A [`Dfa`] driven as a [`StateRecognizer`]; it counts its steps, the
/// accepted ones, and the walks finished.
#[derive(Debug)]
pub(crate) struct DfaStates<'a> {
    dfa: &'a Dfa,
    start: u32,
    pub(crate) steps: usize,
    pub(crate) accepted: usize,
    pub(crate) finished: usize,
}

impl StateRecognizer for DfaStates<'_> {
    type State = u32;

    fn start(&mut self) -> u32 {
        self.start
    }

    fn step(&mut self, state: u32, byte: u8) -> Option<u32> {
        assert_ne!(state, DEAD, "the walk stepped from a rejected state");
        self.steps += 1;
        let next = self.dfa.table[state as usize * 256 + byte as usize];
        self.accepted += (next != DEAD) as usize;
        (next != DEAD).then_some(next)
    }

    fn special_allowed(&mut self, token: TokenId) -> bool {
        self.dfa.specials.contains(&token)
    }

    fn walk_finished(&mut self) {
        self.finished += 1;
    }
}
