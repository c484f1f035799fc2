//! Witnesses: a cheap proof that a derivative is not empty.
//!
//! A derivative that holds an intersection or a complement is not known to
//! match anything until derivre's relevance check has searched its
//! derivatives symbolically, which costs microseconds to milliseconds per
//! new state, and can run out of fuel. Most such derivatives, though, are a
//! few bytes away from one that derivre knows to be non-empty by its
//! structure alone (its *positive* flag): inside a JSON string under a
//! word-count `pattern` and `maxLength`, a letter after a space ends the
//! intersection's doubt, and so do the continuation bytes of a UTF-8
//! character or the character after a backslash. If a derivative of `d`
//! along a byte string `w` is positive, some word starts with `w` in `d`'s
//! language, so `d` is not empty; nothing else is claimed, so the proof is
//! exact whatever `w` is.
//!
//! Each lexeme keeps a few witnesses of at most [`MAX_LEN`] bytes, most
//! recently useful first, and a check tries them before derivre's search,
//! so a miss costs at most [`PER_LEXEME`] × [`MAX_LEN`] derivatives (cached
//! by derivre, and often the very transitions the trie walk asks for next).
//! A lexeme learns witnesses two ways: when a state needed the search and a
//! transition out of it is then proven cheaply (that byte, followed by what
//! proved the transition), and, when the search runs out of fuel, by
//! [`discover`]: a bounded depth-first walk over one byte per byte class.
//!
//! Measured with `structgen maskbench` and `cargo xtask bench maskbench`
//! on the MaskBench dev split (Llama-3): see the crate manual.

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

/// Looks for a new witness of `d`: words of at most [`MAX_LEN`] bytes
/// over `reps` (one byte per byte class), depth first, each level trying
/// every byte for a positive derivative before it goes deeper into the
/// live ones. At most `budget` derivatives (cached by derivre: the walk
/// from `d` asks for the same ones). Panics only where derivre does.
pub(super) fn discover(
    exprs: &mut ExprSet,
    deriv: &mut DerivCache,
    reps: &[u8],
    d: ExprRef,
    budget: usize,
) -> Option<([u8; MAX_LEN], u8)> {
    let mut search = Search { exprs, deriv, reps, budget, word: [0; MAX_LEN] };
    let len = search.from(d, 0)?;
    Some((search.word, len as u8))
}

struct Search<'a> {
    exprs: &'a mut ExprSet,
    deriv: &'a mut DerivCache,
    reps: &'a [u8],
    budget: usize,
    word: [u8; MAX_LEN],
}

impl Search<'_> {
    /// The length of a witness of `e` written from `word[depth]` on.
    fn from(&mut self, e: ExprRef, depth: usize) -> Option<usize> {
        let mut live = Vec::new();
        for &b in self.reps {
            if self.budget == 0 {
                return None;
            }
            self.budget -= 1;
            let next = self.deriv.derivative(self.exprs, e, b);
            if next == ExprRef::NO_MATCH {
                continue;
            }
            if self.exprs.is_positive(next) {
                self.word[depth] = b;
                return Some(depth + 1);
            }
            live.push((b, next));
        }
        if depth + 1 == MAX_LEN {
            return None;
        }
        for (b, next) in live {
            self.word[depth] = b;
            if let Some(len) = self.from(next, depth + 1) {
                return Some(len);
            }
        }
        None
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
