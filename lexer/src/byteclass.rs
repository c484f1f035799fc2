//! Byte classes: bytes that no lexeme tells apart share one column of the
//! transition table.

use derivre::ExprRef;
use derivre::raw::{DerivCache, ExprSet};
use rustc_hash::FxHashSet;

/// A partition of the 256 byte values.
///
/// Invariant: two bytes in one class behave identically in every expression
/// of the set the partition was computed from, and in every derivative of
/// those expressions (derivatives only test bytes against sets already
/// present, except `RemainderIs`, whose digits and dot are kept apart).
#[derive(Clone, Debug)]
pub(crate) struct ByteClasses {
    class: [u8; 256],
    len: usize,
}

impl ByteClasses {
    /// The coarsest partition refining every byte test in `exprs` and in
    /// the derivatives the lexer can reach from them.
    ///
    /// `derivre` does not export its expression enum, so byte tests are
    /// recognized through its public methods: an expression whose
    /// `surely_no_match` answer depends on the byte is a byte, a byte set, or
    /// (with one argument) a byte string, whose later bytes are reached by
    /// taking the derivative on its first byte. Digits, `.` and `-` get
    /// classes of their own for `MultipleOf` (decimal remainder) expressions.
    pub(crate) fn of_exprset(exprs: &mut ExprSet, deriv: &mut DerivCache) -> ByteClasses {
        let mut classes = ByteClasses { class: [0; 256], len: 1 };
        let mut set = [false; 256];
        for &b in b"0123456789.-" {
            set = [false; 256];
            set[b as usize] = true;
            classes.refine(&set);
        }
        let mut todo: Vec<ExprRef> = (1..exprs.len() as u32).map(ExprRef::new).collect();
        let mut seen = FxHashSet::default();
        while let Some(e) = todo.pop() {
            if !exprs.is_valid(e) || !seen.insert(e) {
                continue;
            }
            let expr = exprs.get(e);
            todo.extend_from_slice(expr.args());
            for (b, slot) in set.iter_mut().enumerate() {
                *slot = !expr.surely_no_match(b as u8);
            }
            if set.iter().all(|&x| x) {
                continue;
            }
            let byte_string = expr.args().len() == 1;
            if set.iter().all(|&x| !x) && !byte_string {
                continue;
            }
            classes.refine(&set);
            if byte_string {
                if let Some(first) = set.iter().position(|&x| x) {
                    let rest = deriv.derivative(exprs, e, first as u8);
                    todo.push(rest);
                }
            }
        }
        classes
    }

    /// Splits every class by membership in `set`.
    fn refine(&mut self, set: &[bool; 256]) {
        // new class of (old class, member) pairs, assigned in byte order
        let mut map = [[u16::MAX; 2]; 256];
        let mut next = 0u16;
        for b in 0..256 {
            let slot = &mut map[self.class[b] as usize][set[b] as usize];
            if *slot == u16::MAX {
                *slot = next;
                next += 1;
            }
            self.class[b] = *slot as u8;
        }
        self.len = next as usize;
    }

    /// The class of `byte`, below [`len`](ByteClasses::len).
    #[inline]
    pub(crate) fn class(&self, byte: u8) -> usize {
        self.class[byte as usize] as usize
    }

    /// The number of classes (1 to 256).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}
