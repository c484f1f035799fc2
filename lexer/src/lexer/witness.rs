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

/// The longest witness kept.
pub(super) const MAX_LEN: usize = 4;
/// Witnesses kept per lexeme.
pub(super) const PER_LEXEME: usize = 6;

/// A byte string of at most [`MAX_LEN`] bytes, stored inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Witness {
    bytes: [u8; MAX_LEN],
    len: u8,
}

impl Witness {
    /// The empty witness: the derivative is positive itself.
    pub(super) const EMPTY: Witness = Witness { bytes: [0; MAX_LEN], len: 0 };

    /// `first` followed by `rest`, or `None` when longer than [`MAX_LEN`].
    pub(super) fn new(first: u8, rest: &[u8]) -> Option<Witness> {
        let len = rest.len() + 1;
        if len > MAX_LEN {
            return None;
        }
        let mut bytes = [0; MAX_LEN];
        bytes[0] = first;
        bytes[1..len].copy_from_slice(rest);
        Some(Witness { bytes, len: len as u8 })
    }

    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// One lexeme's witnesses, most recently useful first.
#[derive(Clone, Debug, Default)]
pub(super) struct Witnesses {
    list: Vec<Witness>,
}

impl Witnesses {
    /// Keeps `w` to try after the ones kept, replacing the least recently
    /// useful one when full; one already kept is ignored.
    pub(super) fn learn(&mut self, w: Witness) {
        if self.list.contains(&w) {
            return;
        }
        if self.list.len() == PER_LEXEME {
            self.list.pop();
        }
        self.list.push(w);
    }

    /// The prefix of the first kept witness that proves `d` non-empty (and
    /// moves that witness to the front), or `None`: a witness proves `d`
    /// when one of the derivatives along it is positive (derivre's flag for
    /// expressions that match some string by their structure alone,
    /// nullable ones included). Panics only where derivre's derivative does.
    pub(super) fn prove(
        &mut self,
        exprs: &mut ExprSet,
        deriv: &mut DerivCache,
        d: ExprRef,
    ) -> Option<Witness> {
        let mut used = 0;
        let found = self.list.iter().position(|w| {
            let mut e = d;
            for (i, &b) in w.bytes().iter().enumerate() {
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
        Some(Witness { len: used as u8, ..self.list[0] })
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
) -> Option<Witness> {
    let mut search = Search { exprs, deriv, reps, budget, word: [0; MAX_LEN] };
    let len = search.from(d, 0)?;
    Some(Witness { bytes: search.word, len: len as u8 })
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
    fn learning_keeps_distinct_short_witnesses_up_to_the_cap() {
        let w = |first: u8, rest: &[u8]| Witness::new(first, rest);
        assert_eq!(w(b'a', b"bcde"), None, "longer than MAX_LEN");
        let mut kept = Witnesses::default();
        for x in [w(b'"', b""), w(b'"', b""), w(b'/', b"\"")].into_iter().flatten() {
            kept.learn(x);
        }
        assert_eq!(kept.list.len(), 2, "duplicates are ignored");
        for b in b'0'..=b'9' {
            kept.learn(Witness::new(b, b"").unwrap());
        }
        assert_eq!(kept.list.len(), PER_LEXEME);
        assert_eq!(kept.list[0].bytes(), b"\"", "the oldest kept witness stays first");
    }
}
