//! The pair table of the backtracking encoder: token pair to rule priority.
//!
//! Open addressing with linear probing, plus one tag byte per slot in a
//! separate array (the idea of SwissTable's control bytes). The compatibility
//! walk probes this table a few times per text byte, and most probes miss;
//! a miss reads only the tag bytes (under 1 MiB for o200k, so they stay in
//! the L2 cache), not the 12-byte slots (9 MiB, which do not).

/// A table from `(a, b)` (as `a << 32 | b`) to a `u32` priority.
#[derive(Debug, Default)]
pub(crate) struct PairTable {
    /// Per slot: 0 when empty, else `0x80` or-ed with 7 bits of the key's
    /// hash (bits just below those that pick the home slot).
    tags: Vec<u8>,
    /// `[key >> 32, key as u32, value]` per slot; meaningful where the tag
    /// is not 0.
    slots: Vec<[u32; 3]>,
    /// Entries held; at most 5/8 of the slots, so probes stay short.
    len: usize,
    /// `64 - log2(slots.len())`.
    shift: u32,
}

/// A multiplicative hash: its high bits depend on every key bit.
#[inline]
fn hash(k: u64) -> u64 {
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl PairTable {
    /// An empty table with room for `n` entries before it grows.
    pub(crate) fn with_capacity(n: usize) -> PairTable {
        let size = (n * 8 / 5 + 1).next_power_of_two().max(16);
        PairTable {
            tags: vec![0; size],
            slots: vec![[0; 3]; size],
            len: 0,
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// The home slot and tag of `k`.
    #[inline]
    fn place(&self, k: u64) -> (usize, u8) {
        let h = hash(k);
        ((h >> self.shift) as usize, 0x80 | ((h >> (self.shift - 7)) as u8 & 0x7F))
    }

    /// Inserts or replaces the value of `k`.
    pub(crate) fn insert(&mut self, k: u64, v: u32) {
        if (self.len + 1) * 8 > self.slots.len() * 5 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let (mut i, tag) = self.place(k);
        loop {
            let t = self.tags[i];
            if t == 0 {
                self.tags[i] = tag;
                self.slots[i] = [(k >> 32) as u32, k as u32, v];
                self.len += 1;
                return;
            }
            if t == tag && self.key(i) == k {
                self.slots[i][2] = v;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let mut bigger = PairTable::with_capacity(self.slots.len().max(8));
        for (i, &t) in self.tags.iter().enumerate() {
            if t != 0 {
                bigger.insert(self.key(i), self.slots[i][2]);
            }
        }
        *self = bigger;
    }

    #[inline]
    fn key(&self, i: usize) -> u64 {
        let [hi, lo, _] = self.slots[i];
        (u64::from(hi) << 32) | u64::from(lo)
    }

    /// The value of `k`.
    #[inline]
    pub(crate) fn get(&self, k: u64) -> Option<u32> {
        let mask = self.slots.len().wrapping_sub(1);
        if self.slots.is_empty() {
            return None;
        }
        let (mut i, tag) = self.place(k);
        loop {
            let t = self.tags[i];
            if t == 0 {
                return None;
            }
            if t == tag && self.key(i) == k {
                return Some(self.slots[i][2]);
            }
            i = (i + 1) & mask;
        }
    }

    /// Entries held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.tags.capacity() + self.slots.capacity() * 12
    }
}

#[cfg(test)]
mod tests {
    use super::PairTable;
    use rustc_hash::FxHashMap;

    #[test]
    fn agrees_with_a_hash_map() {
        // Keys that share halves and crowd the same slots, through growth.
        let mut table = PairTable::with_capacity(4);
        let mut model = FxHashMap::default();
        let mut x = 12345u64;
        for i in 0..20_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = ((x >> 40) % 300) << 32 | (x >> 20) % 700;
            table.insert(k, i);
            model.insert(k, i);
        }
        assert_eq!(table.len(), model.len());
        for a in 0..310u64 {
            for b in 0..710u64 {
                let k = a << 32 | b;
                assert_eq!(table.get(k), model.get(&k).copied(), "key ({a}, {b})");
            }
        }
        assert_eq!(PairTable::default().get(7), None);
    }
}
