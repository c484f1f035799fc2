//! Forced bytes: the longest byte string every live path of the lexer and
//! the parser agrees on from the current position.
//!
//! The compressed-FSM idea (a state with one outgoing transition needs no
//! model call) generalized to the Earley parser: from the current position,
//! find the bytes the grammar allows next; when exactly one byte is allowed,
//! the text is not a sentence yet (EOS is not allowed) and no special token
//! may come, that byte is forced; push it and repeat. Everything pushed is
//! popped again, so the parser ends where it started.
//!
//! The allowed bytes are found per lexer byte class, not per byte: bytes of
//! one class lead every lexer state to the same successor, and the parser
//! sees bytes only through the lexer, so one representative per class
//! answers for the whole class. A class of two or more bytes that is allowed
//! already means a branch.
//!
//! Why the result is the common prefix of every continuation: a byte is
//! appended only when it is the one byte allowed and the empty continuation
//! is not complete (not accepting, no special token), so every continuation
//! that ends in a sentence passes through it. Whitespace that may repeat is
//! never forced: a loop offers the choice between going round again and
//! leaving, i.e. two allowed bytes.

use lexer::Lexer;

use crate::error::ParseError;
use crate::parser::Parser;

/// Why [`Parser::forced_bytes`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForcedStop {
    /// Two or more bytes are allowed next.
    Branch,
    /// The text is a sentence here: EOS is allowed (bytes may follow too).
    Accepting,
    /// A special token is allowed here.
    Special,
    /// Nothing at all may follow (and the text is not a sentence).
    Dead,
    /// The configured limit on forced bytes was reached.
    Limit,
}

/// A set of byte values (256 bits).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    /// The empty set.
    pub const EMPTY: ByteSet = ByteSet([0; 4]);

    /// Adds `b`.
    #[inline]
    pub fn insert(&mut self, b: u8) {
        self.0[(b >> 6) as usize] |= 1 << (b & 63);
    }

    /// Whether `b` is in the set.
    #[inline]
    pub fn contains(&self, b: u8) -> bool {
        self.0[(b >> 6) as usize] >> (b & 63) & 1 != 0
    }

    /// The number of bytes in the set.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// The bytes, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&b| self.contains(b))
    }

    /// The set as four little-endian 64-bit words (bit `b` is byte `b`).
    pub fn words(&self) -> [u64; 4] {
        self.0
    }
}

impl std::fmt::Debug for ByteSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter().map(|b| b as char)).finish()
    }
}

/// The answer of [`Parser::forced_bytes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForcedBytes {
    /// The forced bytes: every continuation of the text starts with them.
    pub bytes: Vec<u8>,
    /// Why they end.
    pub stop: ForcedStop,
    /// The bytes allowed after `bytes`.
    pub next: ByteSet,
    /// Whether the text followed by `bytes` is a sentence (EOS allowed).
    pub accepting: bool,
    /// Whether a special token may follow `bytes`.
    pub special: bool,
}

/// One representative byte per lexer byte class, and whether the class has
/// that one byte only.
fn class_representatives(lexer: &Lexer) -> Vec<(u8, bool)> {
    let n = lexer.num_byte_classes();
    let mut reps: Vec<Option<(u8, bool)>> = vec![None; n];
    for b in 0..=255u8 {
        let c = lexer.byte_class(b);
        match &mut reps[c] {
            slot @ None => *slot = Some((b, true)),
            Some((_, single)) => *single = false,
        }
    }
    reps.into_iter().flatten().collect()
}

impl Parser {
    /// The bytes every continuation of the text agrees on, at most
    /// `max_bytes` of them (see the module documentation of `forced.rs`);
    /// the parser is left where it was.
    ///
    /// Cost per forced byte: one push and pop per lexer byte class, each a
    /// table look-up inside a lexeme or a (usually reused) row at a lexeme
    /// boundary.
    ///
    /// # Errors
    /// A limit exceeded while exploring (the parser then stays in that
    /// error, as after any mask computation).
    pub fn forced_bytes(&mut self, max_bytes: usize) -> Result<ForcedBytes, ParseError> {
        self.check()?;
        let reps = class_representatives(self.lexer());
        let mut bytes = Vec::new();
        let result = self.forced_loop(&reps, max_bytes, &mut bytes);
        self.pop_bytes(bytes.len());
        let (stop, next, accepting, special) = result?;
        Ok(ForcedBytes { bytes, stop, next, accepting, special })
    }

    fn forced_loop(
        &mut self,
        reps: &[(u8, bool)],
        max_bytes: usize,
        bytes: &mut Vec<u8>,
    ) -> Result<(ForcedStop, ByteSet, bool, bool), ParseError> {
        loop {
            let accepting = self.is_accepting()?;
            let special = self.any_special_allowed();
            let mut next = ByteSet::EMPTY;
            // The single allowed byte so far, if its class has one byte.
            let mut only: Option<u8> = None;
            let mut allowed_classes = 0;
            for &(rep, single) in reps {
                if !self.try_consume_byte(rep)? {
                    continue;
                }
                self.pop_bytes(1);
                allowed_classes += 1;
                if single {
                    next.insert(rep);
                    only = Some(rep);
                } else {
                    let c = self.lexer().byte_class(rep);
                    for b in 0..=255u8 {
                        if self.lexer().byte_class(b) == c {
                            next.insert(b);
                        }
                    }
                    only = None;
                }
            }
            let stop = if accepting {
                Some(ForcedStop::Accepting)
            } else if special {
                Some(ForcedStop::Special)
            } else if allowed_classes == 0 {
                Some(ForcedStop::Dead)
            } else if allowed_classes > 1 || only.is_none() {
                Some(ForcedStop::Branch)
            } else if bytes.len() >= max_bytes {
                Some(ForcedStop::Limit)
            } else {
                None
            };
            if let Some(stop) = stop {
                return Ok((stop, next, accepting, special));
            }
            let Some(b) = only else { return Ok((ForcedStop::Branch, next, accepting, special)) };
            if !self.try_consume_byte(b)? {
                // Cannot happen (the byte was just accepted); stop safely.
                return Ok((ForcedStop::Dead, next, accepting, special));
            }
            bytes.push(b);
        }
    }
}
