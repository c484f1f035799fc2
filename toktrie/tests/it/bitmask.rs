//! `TokenSet::write_bitmask` against the bit-by-bit definition: bit `i % 32`
//! of word `i / 32` is id `i`; the words past the set's are zeroed.

use proptest::prelude::*;
use toktrie::{TokenId, TokenSet};

proptest! {
    #[test]
    fn bitmask_rows_hold_exactly_the_members(
        len in 0usize..300,
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..80),
        extra in 0usize..4,
    ) {
        let mut set = TokenSet::new(len);
        let ids: Vec<u32> = if len == 0 { vec![] } else { picks.iter().map(|p| p.index(len) as u32).collect() };
        for &i in &ids {
            set.insert(TokenId(i));
        }
        let need = TokenSet::bitmask_words(len);
        let mut row = vec![u32::MAX; need + extra];
        prop_assert!(set.write_bitmask(&mut row));
        for i in 0..row.len() * 32 {
            let bit = row[i / 32] >> (i % 32) & 1 == 1;
            prop_assert_eq!(bit, ids.contains(&(i as u32)), "id {}", i);
        }
        if need > 0 {
            prop_assert!(!set.write_bitmask(&mut row[..need - 1]), "a short row is refused");
        }
    }
}
