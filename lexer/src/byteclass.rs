//! Byte classes: bytes that no lexeme tells apart share one column of the
//! transition table.

use derivre::ExprRef;
use derivre::raw::{DerivCache, ExprSet};
use rustc_hash::{FxHashMap, FxHashSet};

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
    /// The coarsest partition refining every byte test in the expressions
    /// of `exprs` reachable from `roots` and in the derivatives the lexer
    /// can reach from them.
    ///
    /// `derivre` does not export its expression enum, so byte tests are
    /// recognized through its public methods: an expression whose
    /// `surely_no_match` answer depends on the byte is a byte, a byte set, or
    /// (with one argument) a byte string, whose later bytes are reached by
    /// taking the derivative on its first byte. Digits, `.` and `-` get
    /// classes of their own for `MultipleOf` (decimal remainder) expressions.
    pub(crate) fn of_exprset(
        exprs: &mut ExprSet,
        deriv: &mut DerivCache,
        roots: &[ExprRef],
    ) -> ByteClasses {
        let mut classes = ByteClasses { class: [0; 256], len: 1 };
        let mut set = [false; 256];
        for &b in b"0123456789.-" {
            set = [false; 256];
            set[b as usize] = true;
            classes.refine(&set);
        }
        let mut todo: Vec<ExprRef> = roots.to_vec();
        // Visited expressions, by id (dense; derivatives taken below add ids).
        let mut seen = vec![false; exprs.len()];
        // The byte tests, collected first and refined by once each: byte
        // sets as bitmasks, and single bytes (bytes, first bytes of byte
        // strings). The partition is the coarsest refining all of them, so
        // neither order nor repetition changes it, and classes are numbered
        // by their smallest byte.
        let mut sets: FxHashSet<[u64; 4]> = FxHashSet::default();
        let mut singles = [false; 256];
        while let Some(e) = todo.pop() {
            if !exprs.is_valid(e) {
                continue;
            }
            if seen.len() <= e.as_usize() {
                seen.resize(exprs.len().max(e.as_usize() + 1), false);
            }
            if std::mem::replace(&mut seen[e.as_usize()], true) {
                continue;
            }
            let expr = exprs.get(e);
            todo.extend_from_slice(expr.args());
            match expr.args().len() {
                // A leaf: a byte, a byte set, or a node testing no byte.
                0 => {
                    let mut bits = [0u64; 4];
                    for b in 0..256 {
                        if !expr.surely_no_match(b as u8) {
                            bits[b / 64] |= 1 << (b % 64);
                        }
                    }
                    match bits.iter().map(|w| w.count_ones()).sum::<u32>() {
                        0 | 256 => {}
                        1 => {
                            let w = bits.iter().position(|&w| w != 0).unwrap_or(0);
                            singles[w * 64 + bits[w].trailing_zeros() as usize] = true;
                        }
                        _ => {
                            sets.insert(bits);
                        }
                    }
                }
                // A byte string passes its first byte only; any other node
                // of one argument passes every byte.
                1 => {
                    let first = (0..=255u8).find(|&b| !expr.surely_no_match(b));
                    let every = first == Some(0) && !expr.surely_no_match(1);
                    if let (Some(b), false) = (first, every) {
                        singles[b as usize] = true;
                        let rest = deriv.derivative(exprs, e, b);
                        todo.push(rest);
                    }
                }
                // Sequences, unions and intersections pass every byte.
                _ => {}
            }
        }
        for bits in &sets {
            for (b, slot) in set.iter_mut().enumerate() {
                *slot = bits[b / 64] & (1 << (b % 64)) != 0;
            }
            classes.refine(&set);
        }
        classes.isolate(&singles);
        classes
    }

    /// Gives each byte of `singles` a class of its own (the same as
    /// refining by each of them alone, in one pass).
    fn isolate(&mut self, singles: &[bool; 256]) {
        let mut map: FxHashMap<(u8, u16), u16> = FxHashMap::default();
        for (b, &single) in singles.iter().enumerate() {
            let key = (self.class[b], if single { 1 + b as u16 } else { 0 });
            let next = map.len() as u16;
            self.class[b] = *map.entry(key).or_insert(next) as u8;
        }
        self.len = map.len();
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

    /// The smallest byte of each class, in class order.
    pub(crate) fn representatives(&self) -> Vec<u8> {
        let mut reps = vec![None; self.len];
        for b in 0..=255u8 {
            reps[self.class(b)].get_or_insert(b);
        }
        reps.into_iter().flatten().collect()
    }

    /// The bytes of each class as a 256-bit set (bit `b % 64` of word
    /// `b / 64`), in class order.
    pub(crate) fn members(&self) -> Vec<[u64; 4]> {
        let mut sets = vec![[0u64; 4]; self.len];
        for b in 0..256 {
            sets[self.class(b as u8)][b / 64] |= 1 << (b % 64);
        }
        sets
    }
}

#[cfg(test)]
mod tests {
    use derivre::raw::DerivCache;
    use derivre::{ExprRef, JsonQuoteOptions, RegexAst};
    use proptest::prelude::*;
    use rustc_hash::FxHashSet;

    use super::ByteClasses;

    /// The plain computation: every expression tested on every byte, one
    /// refinement per byte test.
    fn naive(
        exprs: &mut derivre::raw::ExprSet,
        deriv: &mut DerivCache,
        roots: &[ExprRef],
    ) -> ByteClasses {
        let mut classes = ByteClasses { class: [0; 256], len: 1 };
        let mut set = [false; 256];
        for &b in b"0123456789.-" {
            set = [false; 256];
            set[b as usize] = true;
            classes.refine(&set);
        }
        let mut todo: Vec<ExprRef> = roots.to_vec();
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
            if byte_string && let Some(first) = set.iter().position(|&x| x) {
                let rest = deriv.derivative(exprs, e, first as u8);
                todo.push(rest);
            }
        }
        classes
    }

    fn regex() -> impl Strategy<Value = RegexAst> {
        let leaf = prop_oneof![
            "[a-e\"\\\\ é]{1,6}".prop_map(RegexAst::Literal),
            Just(RegexAst::Regex("(?s:.)".to_string())),
            Just(RegexAst::Regex("[a-c]+x".to_string())),
            Just(RegexAst::Regex("[^b-d\\n]*".to_string())),
            Just(RegexAst::Regex("-?[0-9]+(\\.[0-9]+)?".to_string())),
            Just(RegexAst::Regex("[ \\t]*".to_string())),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(RegexAst::Concat),
                prop::collection::vec(inner.clone(), 1..4).prop_map(RegexAst::Or),
                prop::collection::vec(inner.clone(), 1..3).prop_map(RegexAst::And),
                inner.clone().prop_map(|x| RegexAst::Not(Box::new(x))),
                inner.prop_map(|x| RegexAst::JsonQuote(Box::new(x), JsonQuoteOptions::regular())),
            ]
        })
    }

    proptest! {
        #[test]
        fn same_classes_as_the_plain_computation(rxs in prop::collection::vec(regex(), 1..5)) {
            // The lexers' builders hold the preparsed patterns too, unused.
            let (mut builder, _) = crate::leaves::Preparsed::common().start();
            let roots: Vec<ExprRef> = rxs.iter().map(|r| builder.mk(r).unwrap()).collect();
            let mut a = builder.into_exprset();
            let mut b = a.clone();
            let fast = ByteClasses::of_exprset(&mut a, &mut DerivCache::new(), &roots);
            let plain = naive(&mut b, &mut DerivCache::new(), &roots);
            prop_assert_eq!(fast.class, plain.class);
            prop_assert_eq!(fast.len, plain.len);
            // The same derivatives were taken: the expression sets agree.
            prop_assert_eq!(a.len(), b.len());
            // Members and representatives agree with `class`, byte by byte.
            let (members, reps) = (fast.members(), fast.representatives());
            prop_assert_eq!(members.len(), fast.len);
            for b in 0..=255u8 {
                let c = fast.class(b);
                prop_assert!(members[c][b as usize / 64] >> (b % 64) & 1 == 1);
                let others = (0..fast.len).filter(|&d| d != c);
                prop_assert!(others.into_iter().all(|d| members[d][b as usize / 64] >> (b % 64) & 1 == 0));
                prop_assert!(reps[c] <= b);
            }
        }
    }
}
