//! Witness suffixes: a cheap proof that a derivative is not empty.
//!
//! A derivative that holds an intersection or a complement is not known to
//! match anything until derivre's relevance check has searched its
//! derivatives symbolically, which costs microseconds to milliseconds per
//! new state. Most such derivatives, though, end the same way as their
//! neighbours: inside a JSON string under `maxLength` the string can close
//! right away (`"`), and after a backslash an escaped character closes it
//! (`/"`). If `d` followed by a short byte string `w` is nullable, `w` is a
//! word of `d`'s language and `d` is not empty; nothing else is claimed, so
//! the proof is exact whatever `w` is.
//!
//! Each lexeme keeps a few such suffixes, most recently useful first,
//! learned while the lexer runs: a byte that makes the lexeme match is a
//! suffix of length one, and a byte followed by a suffix that proved the
//! next derivative is one byte longer. A check tries them before derivre's
//! search and falls back to it when none applies, so a miss costs at most
//! [`PER_LEXEME`] × [`MAX_LEN`] derivatives (cached by derivre, and often
//! the very transitions the trie walk asks for next).
//!
//! Measured with `structgen maskbench` on the MaskBench dev split
//! (Llama-3): see the figures in the crate manual.

use derivre::ExprRef;
use derivre::raw::{DerivCache, ExprSet};

/// The longest suffix kept.
pub(super) const MAX_LEN: usize = 4;
/// Suffixes kept per lexeme.
pub(super) const PER_LEXEME: usize = 6;

/// One lexeme's suffixes, most recently useful first.
#[derive(Clone, Debug, Default)]
pub(super) struct Witnesses {
    /// Each suffix in a fixed array with its length.
    list: Vec<([u8; MAX_LEN], u8)>,
}

impl Witnesses {
    /// Keeps `bytes` as a suffix to try (after the ones kept), replacing
    /// the least recently useful one when full. Longer suffixes and ones
    /// already kept are ignored.
    pub(super) fn learn(&mut self, first: u8, rest: &[u8]) {
        let len = rest.len() + 1;
        if len > MAX_LEN {
            return;
        }
        let mut w = [0u8; MAX_LEN];
        w[0] = first;
        w[1..len].copy_from_slice(rest);
        let entry = (w, len as u8);
        if self.list.contains(&entry) {
            return;
        }
        if self.list.len() == PER_LEXEME {
            self.list.pop();
        }
        self.list.push(entry);
    }

    /// The first kept witness that proves `d` non-empty (and moves it to
    /// the front), or `None`: a witness proves `d` when one of the
    /// derivatives along it is positive (derivre's flag for expressions
    /// that match some string by their structure alone, nullable ones
    /// included). Panics only where derivre's derivative does.
    pub(super) fn prove(
        &mut self,
        exprs: &mut ExprSet,
        deriv: &mut DerivCache,
        d: ExprRef,
    ) -> Option<([u8; MAX_LEN], u8)> {
        let mut used = 0;
        let found = self.list.iter().position(|&(w, len)| {
            let mut e = d;
            for (i, &b) in w[..len as usize].iter().enumerate() {
                e = deriv.derivative(exprs, e, b);
                if e == ExprRef::NO_MATCH {
                    return false;
                }
                if exprs.is_positive(e) {
                    used = i + 1;
                    return true;
                }
            }
            false
        })?;
        self.list[..=found].rotate_right(1);
        Some((self.list[0].0, used as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learning_keeps_distinct_short_suffixes_up_to_the_cap() {
        let mut w = Witnesses::default();
        w.learn(b'"', b"");
        w.learn(b'"', b"");
        w.learn(b'/', b"\"");
        w.learn(b'a', b"bcde");
        assert_eq!(w.list.len(), 2, "duplicates and suffixes over MAX_LEN are ignored");
        for b in b'0'..=b'9' {
            w.learn(b, b"");
        }
        assert_eq!(w.list.len(), PER_LEXEME);
        assert_eq!(w.list[0], ([b'"', 0, 0, 0], 1), "the oldest kept suffix stays first");
    }
}
