//! Token storage: the bytes of every token, and a hash table from bytes to
//! token id.
//!
//! All token bytes live in one buffer (`bytes`), token `i` at
//! `bytes[starts[i]..starts[i + 1]]`, so a 200k vocabulary costs two
//! allocations. [`ByteMap`] is an open-addressing table of ids that compares
//! keys against that buffer, so it stores no keys of its own.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// The largest id a vocabulary may use: tables are indexed by id, so a
/// hostile file with id 4,000,000,000 must be an error, not an allocation
/// of gigabytes.
pub(crate) const MAX_ID: u32 = (1 << 24) - 1;

/// What an id in the vocabulary is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// No token has this id (a gap in the id space).
    Absent,
    /// An ordinary token of the BPE model.
    Normal,
    /// A special (or added) token, matched by name in the text.
    Special,
}

/// The bytes of every id and what kind of token it is.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tokens {
    /// Concatenated token bytes.
    bytes: Vec<u8>,
    /// `starts[id]..starts[id + 1]` is token `id` in `bytes`;
    /// `starts.len() == kinds.len() + 1`.
    starts: Vec<u32>,
    kinds: Vec<Kind>,
}

impl Tokens {
    /// Builds the table from `(id, bytes, kind)` entries in any order; ids
    /// not given are [`Kind::Absent`]. Later entries for an id replace
    /// earlier ones (callers reject duplicates before).
    pub(crate) fn new(entries: &mut [(u32, &[u8], Kind)]) -> Tokens {
        entries.sort_by_key(|e| e.0);
        let n = entries.last().map_or(0, |e| e.0 as usize + 1);
        let total: usize = entries.iter().map(|e| e.1.len()).sum();
        let mut bytes = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(n + 1);
        let mut kinds = vec![Kind::Absent; n];
        let mut next = 0usize;
        for &(id, b, kind) in entries.iter() {
            let id = id as usize;
            while next <= id {
                starts.push(bytes.len() as u32);
                next += 1;
            }
            // Replaces a previous entry with the same id.
            bytes.truncate(starts[id] as usize);
            bytes.extend_from_slice(b);
            kinds[id] = kind;
        }
        starts.push(bytes.len() as u32);
        Tokens { bytes, starts, kinds }
    }

    /// The number of ids (the largest id plus one).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.kinds.len()
    }

    #[inline]
    pub(crate) fn kind(&self, id: u32) -> Kind {
        self.kinds.get(id as usize).copied().unwrap_or(Kind::Absent)
    }

    /// The bytes of `id` (empty for absent ids).
    #[inline]
    pub(crate) fn bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        if i + 1 >= self.starts.len() {
            return &[];
        }
        &self.bytes[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// The byte length of `id`.
    #[inline]
    pub(crate) fn token_len(&self, id: u32) -> usize {
        let i = id as usize;
        (self.starts[i + 1] - self.starts[i]) as usize
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.starts.capacity() * 4 + self.kinds.capacity()
    }
}

/// An open-addressing hash table from token bytes to token id.
#[derive(Debug, Clone, Default)]
pub(crate) struct ByteMap {
    /// `u32::MAX` marks an empty slot; the length is a power of two.
    slots: Vec<u32>,
    mask: usize,
    /// `64 - log2(slots.len())`.
    shift: u32,
}

/// The slot of `bytes` in a table of `1 << (64 - shift)` slots: FxHash
/// mixed by a multiply and taken from the high bits (Fx's low bits cluster).
#[inline]
fn slot(bytes: &[u8], shift: u32) -> usize {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.write_usize(bytes.len());
    (h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl ByteMap {
    /// A table for the given ids of `tokens`. When two ids have the same
    /// bytes the first one in `ids` is kept and the other is returned in the
    /// error position list.
    pub(crate) fn new(
        tokens: &Tokens,
        ids: impl Iterator<Item = u32>,
        capacity: usize,
    ) -> (ByteMap, Vec<u32>) {
        let size = (capacity.max(1) * 2).next_power_of_two();
        let mut map = ByteMap {
            slots: vec![u32::MAX; size],
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
        };
        let mut duplicates = Vec::new();
        for id in ids {
            let b = tokens.bytes(id);
            let mut i = slot(b, map.shift);
            loop {
                let s = map.slots[i];
                if s == u32::MAX {
                    map.slots[i] = id;
                    break;
                }
                if tokens.bytes(s) == b {
                    duplicates.push(id);
                    break;
                }
                i = (i + 1) & map.mask;
            }
        }
        (map, duplicates)
    }

    /// The id whose bytes are `key`.
    #[inline]
    pub(crate) fn get(&self, tokens: &Tokens, key: &[u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = slot(key, self.shift);
        loop {
            let s = self.slots[i];
            if s == u32::MAX {
                return None;
            }
            if tokens.bytes(s) == key {
                return Some(s);
            }
            i = (i + 1) & self.mask;
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4
    }
}
