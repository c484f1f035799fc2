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
//! Inside a lexeme that cannot end yet, the lexer's structural analysis of
//! the live derivatives usually names the one allowed byte directly
//! (`lexer::Lexer::forced_byte`, no transition computed). Otherwise the
//! allowed bytes are found per lexer byte class, not per byte: bytes of
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

    /// The set of the four words' bits (the inverse of [`words`](ByteSet::words)).
    pub fn from_words(words: [u64; 4]) -> ByteSet {
        ByteSet(words)
    }

    /// Every byte.
    pub const FULL: ByteSet = ByteSet([u64::MAX; 4]);

    /// The bytes in `self` or `other`.
    pub fn union(&self, other: &ByteSet) -> ByteSet {
        ByteSet(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    /// The bytes in both `self` and `other`.
    pub fn intersection(&self, other: &ByteSet) -> ByteSet {
        ByteSet(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }

    /// The bytes in `self` and not in `other`.
    pub fn difference(&self, other: &ByteSet) -> ByteSet {
        ByteSet(std::array::from_fn(|i| self.0[i] & !other.0[i]))
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
    /// The bytes allowed after `bytes` (all of them when `next_complete`).
    pub next: ByteSet,
    /// Whether `next` is every allowed byte ([`Parser::forced_bytes`]) or
    /// only those found before the answer was known
    /// ([`Parser::forced_bytes_quick`]).
    pub next_complete: bool,
    /// Whether the text followed by `bytes` is a sentence (EOS allowed).
    pub accepting: bool,
    /// Whether a special token may follow `bytes`.
    pub special: bool,
}

/// How much of the allowed next bytes a forced-bytes search collects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NextMode {
    /// Every allowed byte after the forced bytes.
    Complete,
    /// Only until the answer is known.
    Quick,
    /// Every allowed byte when some bytes are forced, else as `Quick`.
    WhenForced,
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
        self.forced_bytes_with(max_bytes, NextMode::Complete)
    }

    /// Like [`forced_bytes`](Parser::forced_bytes), but stops looking at
    /// byte classes as soon as the answer is known: `next` is then only
    /// the allowed bytes found so far ([`ForcedBytes::next_complete`] is
    /// `false`). Cheaper where nothing is forced, the common case.
    ///
    /// # Errors
    /// As [`forced_bytes`](Parser::forced_bytes).
    pub fn forced_bytes_quick(&mut self, max_bytes: usize) -> Result<ForcedBytes, ParseError> {
        self.forced_bytes_with(max_bytes, NextMode::Quick)
    }

    /// The answer of [`forced_bytes`](Parser::forced_bytes) when some bytes
    /// are forced, else that of [`forced_bytes_quick`](Parser::forced_bytes_quick):
    /// `next` is complete exactly when `bytes` is not empty. One search
    /// where the two calls in a row would walk the forced bytes twice.
    ///
    /// # Errors
    /// As [`forced_bytes`](Parser::forced_bytes).
    pub fn forced_bytes_step(&mut self, max_bytes: usize) -> Result<ForcedBytes, ParseError> {
        self.forced_bytes_with(max_bytes, NextMode::WhenForced)
    }

    /// The bytes of `want` the grammar allows after `prefix` (bytes it
    /// allows from here, such as the forced bytes), and the bytes it tried:
    /// the members of the lexer byte classes with one in `want`, one push
    /// and pop per class; with `first_only`, it stops at the first allowed
    /// class. A search that stopped early
    /// ([`forced_bytes_quick`](Parser::forced_bytes_quick)) is completed
    /// this way for just the bytes a caller asks about. The parser is left
    /// where it was. Should `prefix` not be allowed (a caller's mistake),
    /// every byte of `want` is answered allowed, the cautious answer for a
    /// caller proving that some byte cannot come.
    ///
    /// # Errors
    /// A limit exceeded while exploring (the parser then stays in that
    /// error, as after any mask computation).
    pub fn next_bytes_after(
        &mut self,
        prefix: &[u8],
        want: ByteSet,
        first_only: bool,
    ) -> Result<(ByteSet, ByteSet), ParseError> {
        self.check()?;
        let mut pushed = 0;
        let mut result = Ok((want, want));
        for &b in prefix {
            match self.try_consume_byte(b) {
                Ok(true) => pushed += 1,
                Ok(false) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if pushed == prefix.len() {
            result = self.classes_allowed(want, first_only);
        }
        self.pop_bytes(pushed);
        result
    }

    /// The allowed bytes among the classes with a member in `want` (up to
    /// the first allowed one with `first_only`), and the members of the
    /// classes tried.
    fn classes_allowed(
        &mut self,
        want: ByteSet,
        first_only: bool,
    ) -> Result<(ByteSet, ByteSet), ParseError> {
        let (mut allowed, mut tried) = (ByteSet::EMPTY, ByteSet::EMPTY);
        for class in 0..self.lexer().num_byte_classes() {
            let members = ByteSet(self.lexer().class_members(class));
            if members.intersection(&want).is_empty() {
                continue;
            }
            tried = tried.union(&members);
            let rep = self.lexer().class_representatives()[class];
            if self.try_consume_byte(rep)? {
                self.pop_bytes(1);
                allowed = allowed.union(&members);
                if first_only {
                    break;
                }
            }
        }
        Ok((allowed, tried))
    }

    fn forced_bytes_with(&mut self, max: usize, mode: NextMode) -> Result<ForcedBytes, ParseError> {
        self.check()?;
        let mut bytes = Vec::new();
        let result = self.forced_loop(max, mode, &mut bytes);
        self.pop_bytes(bytes.len());
        let (stop, next, accepting, special, next_complete) = result?;
        Ok(ForcedBytes { bytes, stop, next, next_complete, accepting, special })
    }

    #[allow(clippy::type_complexity)]
    fn forced_loop(
        &mut self,
        max_bytes: usize,
        mode: NextMode,
        bytes: &mut Vec<u8>,
    ) -> Result<(ForcedStop, ByteSet, bool, bool, bool), ParseError> {
        loop {
            let accepting = self.is_accepting()?;
            let special = self.any_special_allowed();
            if !accepting && !special && bytes.len() < max_bytes {
                // Fast path inside a lexeme that cannot end here: the
                // lexer's structural analysis names the one byte allowed
                // without computing a transition per class.
                let (state, lexer) = self.lexer_state_mut();
                if let Some(b) = lexer.forced_byte(state)
                    && self.try_consume_byte(b)?
                {
                    bytes.push(b);
                    continue;
                }
            }
            let complete = match mode {
                NextMode::Complete => true,
                NextMode::Quick => false,
                NextMode::WhenForced => !bytes.is_empty(),
            };
            let mut next = ByteSet::EMPTY;
            if !complete && (accepting || special) {
                let stop = if accepting { ForcedStop::Accepting } else { ForcedStop::Special };
                return Ok((stop, next, accepting, special, false));
            }
            // The single allowed byte so far, if its class has one byte.
            let mut only: Option<u8> = None;
            let mut allowed_classes = 0;
            // One representative per lexer byte class answers for the class.
            for class in 0..self.lexer().num_byte_classes() {
                let rep = self.lexer().class_representatives()[class];
                if !self.try_consume_byte(rep)? {
                    continue;
                }
                self.pop_bytes(1);
                allowed_classes += 1;
                let members = self.lexer().class_members(class);
                for (w, m) in next.0.iter_mut().zip(members) {
                    *w |= m;
                }
                let single = members.iter().map(|w| w.count_ones()).sum::<u32>() == 1;
                only = if single { Some(rep) } else { None };
                if !complete && (allowed_classes > 1 || only.is_none()) {
                    return Ok((ForcedStop::Branch, next, accepting, special, false));
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
                return Ok((stop, next, accepting, special, true));
            }
            let Some(b) = only else {
                return Ok((ForcedStop::Branch, next, accepting, special, true));
            };
            if !self.try_consume_byte(b)? {
                // Cannot happen (the byte was just accepted); stop safely.
                return Ok((ForcedStop::Dead, next, accepting, special, true));
            }
            bytes.push(b);
        }
    }
}
