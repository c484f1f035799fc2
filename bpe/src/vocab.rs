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

/// The most ids a vocabulary of `tokens` tokens may span (its largest id
/// plus one): twice its tokens plus 65,536.
///
/// Every per-id table is dense (token offsets and kinds here, the linear
/// encoder's facts, a mask's bits), about 45 bytes an id, so a rank file of
/// 257 lines whose last rank is 16,777,215 took 3.9 s and 610 MB to load
/// and encode. Real vocabularies are dense (o200k_base spans 200,019 ids for
/// 200,000 tokens, Llama-3 128,256 for 128,256); the allowance leaves room
/// for reserved ranges and padding, and keeps a file's cost proportional to
/// its size.
pub(crate) fn max_id_span(tokens: usize) -> usize {
    tokens.saturating_mul(2).saturating_add(1 << 16)
}

/// `Err` with a message when ids up to `largest` span more than
/// [`max_id_span`] for `tokens` tokens.
pub(crate) fn check_id_span(tokens: usize, largest: u32) -> Result<(), String> {
    let span = largest as usize + 1;
    let max = max_id_span(tokens);
    if span <= max {
        return Ok(());
    }
    Err(format!(
        "id {largest} makes the vocabulary span {span} ids for {tokens} tokens, more than \
         the limit of {max} (twice the tokens plus 65,536: tables are indexed by id)"
    ))
}

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
    /// Per slot: 0 when empty, else `tag << 24 | id` where the tag is
    /// `0x80` or-ed with 7 bits of the key's hash (ids fit 24 bits, see
    /// [`MAX_ID`]). A probe compares token bytes only when the tag matches,
    /// so a miss rarely reads the token buffer. The length is a power of two.
    slots: Vec<u32>,
    mask: usize,
    /// `64 - log2(slots.len())`.
    shift: u32,
    /// A Bloom filter of the keys (two bits in one word per key, about 10
    /// bits per key: 256 KiB for o200k), for lookups that mostly miss: the
    /// backtracking encoder asks whether `bytes(x) ++ bytes(y)` is a token
    /// a few times per text byte, and the filter stays in the L2 cache
    /// where the slots (2 MiB) do not. A power of two of words.
    bloom: Vec<u64>,
    /// `64 - log2(bloom.len())`.
    bloom_shift: u32,
}

/// FxHash of `bytes` mixed by a multiply (Fx's low bits cluster; every bit
/// of the result depends on every key bit through the high bits used).
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.write_usize(bytes.len());
    h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// `a == b` for token-sized slices without a call to `memcmp`.
#[inline]
fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 16 {
        return a == b;
    }
    a.iter().zip(b).all(|(x, y)| x == y)
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
        let size = (capacity.max(1) * 2).next_power_of_two().max(2);
        let words = (capacity * 10 / 64).next_power_of_two().max(2);
        let mut map = ByteMap {
            slots: vec![0; size],
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
            bloom: vec![0; words],
            bloom_shift: 64 - words.trailing_zeros(),
        };
        let mut duplicates = Vec::new();
        for id in ids {
            debug_assert!(id <= MAX_ID);
            let b = tokens.bytes(id);
            let h = hash(b);
            let (w, bits) = map.bloom_bits(h);
            map.bloom[w] |= bits;
            let (mut i, tag) = map.place(h);
            loop {
                let s = map.slots[i];
                if s == 0 {
                    map.slots[i] = tag | id;
                    break;
                }
                if s & 0xFF00_0000 == tag && tokens.bytes(s & 0xFF_FFFF) == b {
                    duplicates.push(id);
                    break;
                }
                i = (i + 1) & map.mask;
            }
        }
        (map, duplicates)
    }

    /// The home slot of hash `h` and its tag (already shifted into place):
    /// the slot from the high bits, the tag from the 7 bits below.
    #[inline]
    fn place(&self, h: u64) -> (usize, u32) {
        ((h >> self.shift) as usize, (0x80 | ((h >> (self.shift - 7)) as u32 & 0x7F)) << 24)
    }

    /// The Bloom filter word of hash `h` and its two bits.
    #[inline]
    fn bloom_bits(&self, h: u64) -> (usize, u64) {
        let g = h.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        ((g >> self.bloom_shift) as usize, 1 << (g >> 20 & 63) | 1 << (g >> 26 & 63))
    }

    /// The id whose bytes are `key`.
    #[inline]
    pub(crate) fn get(&self, tokens: &Tokens, key: &[u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(hash(key), |id| bytes_eq(tokens.bytes(id), key))
    }

    /// [`ByteMap::get`] for keys that are rarely tokens: a Bloom filter
    /// answers most misses without touching the slots. `is_key(id)` must
    /// tell whether token `id`'s bytes are the key (the caller may know
    /// faster than the token buffer).
    #[inline]
    pub(crate) fn get_rare_by(&self, key: &[u8], is_key: impl Fn(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let h = hash(key);
        let (w, bits) = self.bloom_bits(h);
        if self.bloom[w] & bits != bits {
            return None;
        }
        self.probe(h, is_key)
    }

    #[inline]
    fn probe(&self, h: u64, is_key: impl Fn(u32) -> bool) -> Option<u32> {
        let (mut i, tag) = self.place(h);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s & 0xFF00_0000 == tag && is_key(s & 0xFF_FFFF) {
                return Some(s & 0xFF_FFFF);
            }
            i = (i + 1) & self.mask;
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4 + self.bloom.capacity() * 8
    }
}
