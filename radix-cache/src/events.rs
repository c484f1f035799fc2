//! KV-cache events in the vLLM/SGLang schema, and the chained block hash.
//!
//! A cluster router that wants to follow which prefixes a worker holds reads
//! three kinds of events: a run of blocks stored (with the hash of the block
//! before them, so the router can chain them), blocks removed, and everything
//! cleared. The cache reports its contents in fixed-size **blocks** of
//! `block_size` tokens aligned to absolute positions from the start of the
//! sequence: block `i` covers tokens `[i*B, (i+1)*B)`. A block is stored when
//! its last token enters the cache and removed when that token leaves; a
//! trailing partial block is never reported (it has no hash yet). Splitting a
//! node moves blocks between nodes without events.
//!
//! # The block hash
//! `hash(i) = SipHash-2-4(k0, k1; m)` where the message `m` is, in order:
//! one byte `1` followed by `hash(i-1)` as 8 little-endian bytes when `i > 0`
//! (one byte `0` alone for the first block), the namespace as 8 little-endian
//! bytes, then the block's token ids as 4 little-endian bytes each. The
//! chain makes a hash stand for the whole prefix, as in vLLM. The key
//! `(k0, k1)` is `(0, 0)` by default, which anyone can reproduce (so anyone can
//! also search for collisions); give a secret key with
//! [`EventConfig::hash_key`] to make collisions unpredictable to clients who
//! choose the token ids (prefix-cache poisoning), as vLLM does with a random
//! hash seed.

use crate::Namespace;

/// One change to the cache's contents, in the vLLM/SGLang KV-event schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheEvent {
    /// Consecutive blocks of one sequence entered the cache.
    BlockStored {
        /// The chained hash of each block, in sequence order.
        block_hashes: Vec<u64>,
        /// The hash of the block just before the first one, `None` when the
        /// first block starts the sequence.
        parent_block_hash: Option<u64>,
        /// The token ids of all the blocks, `block_size` per block.
        token_ids: Vec<u32>,
        /// Tokens per block.
        block_size: usize,
        /// The namespace (LoRA adapter, cache salt) the blocks belong to.
        namespace: Namespace,
    },
    /// Blocks left the cache (evicted).
    BlockRemoved {
        /// The hashes of the removed blocks.
        block_hashes: Vec<u64>,
    },
    /// The cache was reset: every block is gone.
    AllBlocksCleared,
}

/// Whether and how the cache reports [`CacheEvent`]s:
/// `EventConfig::default()` (16-token blocks, the public key), then the
/// `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct EventConfig {
    /// Tokens per reported block (vLLM's `block_size`): a positive multiple
    /// of the cache's page size.
    pub block_size: usize,
    /// The SipHash key; `None` means the public key `(0, 0)`.
    pub hash_key: Option<[u64; 2]>,
}

impl Default for EventConfig {
    fn default() -> EventConfig {
        EventConfig { block_size: 16, hash_key: None }
    }
}

impl EventConfig {
    /// Sets [`block_size`](Self::block_size).
    pub fn with_block_size(mut self, block_size: usize) -> EventConfig {
        self.block_size = block_size;
        self
    }

    /// Sets [`hash_key`](Self::hash_key).
    pub fn with_hash_key(mut self, hash_key: Option<[u64; 2]>) -> EventConfig {
        self.hash_key = hash_key;
        self
    }
}

/// The chained block hash described in the module docs.
pub fn block_hash(key: [u64; 2], parent: Option<u64>, namespace: Namespace, tokens: &[u32]) -> u64 {
    let mut h = SipHasher24::new(key[0], key[1]);
    match parent {
        Some(p) => {
            h.write(&[1]);
            h.write(&p.to_le_bytes());
        }
        None => h.write(&[0]),
    }
    h.write(&namespace.0.to_le_bytes());
    // The token bytes go through a stack buffer, so that SipHash eats them
    // a word at a time instead of one 4-byte write per token.
    let mut buf = [0u8; 256];
    for chunk in tokens.chunks(buf.len() / 4) {
        for (b, t) in buf.chunks_exact_mut(4).zip(chunk) {
            b.copy_from_slice(&t.to_le_bytes());
        }
        h.write(&buf[..4 * chunk.len()]);
    }
    h.finish()
}

/// SipHash-2-4 (Aumasson and Bernstein, 2012) over a byte stream, written
/// here because `std` does not expose a keyed SipHash with a caller's key.
#[derive(Debug, Clone)]
pub(crate) struct SipHasher24 {
    v: [u64; 4],
    tail: u64,
    ntail: usize,
    length: usize,
}

impl SipHasher24 {
    pub(crate) fn new(k0: u64, k1: u64) -> SipHasher24 {
        SipHasher24 {
            v: [
                k0 ^ 0x736f_6d65_7073_6575,
                k1 ^ 0x646f_7261_6e64_6f6d,
                k0 ^ 0x6c79_6765_6e65_7261,
                k1 ^ 0x7465_6462_7974_6573,
            ],
            tail: 0,
            ntail: 0,
            length: 0,
        }
    }

    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13);
        v[1] ^= v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16);
        v[3] ^= v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21);
        v[3] ^= v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17);
        v[1] ^= v[2];
        v[2] = v[2].rotate_left(32);
    }

    fn compress(&mut self, m: u64) {
        self.v[3] ^= m;
        Self::round(&mut self.v);
        Self::round(&mut self.v);
        self.v[0] ^= m;
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        self.length += bytes.len();
        let mut bytes = bytes;
        // Complete a partial word first, then whole words, then keep the rest.
        while self.ntail != 0 {
            let Some((&b, rest)) = bytes.split_first() else { return };
            self.push_byte(b);
            bytes = rest;
        }
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut m = [0u8; 8];
            m.copy_from_slice(w);
            self.compress(u64::from_le_bytes(m));
        }
        for &b in words.remainder() {
            self.push_byte(b);
        }
    }

    /// Adds one byte to the partial word, compressing it when full.
    fn push_byte(&mut self, b: u8) {
        self.tail |= u64::from(b) << (8 * self.ntail);
        self.ntail += 1;
        if self.ntail == 8 {
            let m = self.tail;
            self.compress(m);
            self.tail = 0;
            self.ntail = 0;
        }
    }

    pub(crate) fn finish(&self) -> u64 {
        let mut v = self.v;
        let b = ((self.length as u64 & 0xff) << 56) | self.tail;
        v[3] ^= b;
        Self::round(&mut v);
        Self::round(&mut v);
        v[0] ^= b;
        v[2] ^= 0xff;
        for _ in 0..4 {
            Self::round(&mut v);
        }
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference vectors of the SipHash paper (appendix A): key
    /// 00 01 .. 0f, messages 00 01 .. (n-1).
    #[test]
    fn siphash_matches_the_paper() {
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let msg: Vec<u8> = (0u8..15).collect();
        let mut h = SipHasher24::new(k0, k1);
        h.write(&msg);
        assert_eq!(h.finish(), 0xa129_ca61_49be_45e5);
        let mut h = SipHasher24::new(k0, k1);
        assert_eq!(h.finish(), 0x726f_db47_dd0e_0e31);
        // Split writes give the same hash as one write, wherever they split.
        h.write(&msg[..3]);
        h.write(&msg[3..]);
        assert_eq!(h.finish(), 0xa129_ca61_49be_45e5);
        let long: Vec<u8> = (0u8..64).collect();
        let mut one = SipHasher24::new(k0, k1);
        one.write(&long);
        // The paper's vector for the 63-byte prefix.
        let mut h = SipHasher24::new(k0, k1);
        h.write(&long[..63]);
        assert_eq!(h.finish(), 0x958a_324c_eb06_4572);
        for cut in 0..64 {
            for cut2 in cut..64 {
                let mut h = SipHasher24::new(k0, k1);
                h.write(&long[..cut]);
                h.write(&long[cut..cut2]);
                h.write(&long[cut2..]);
                assert_eq!(h.finish(), one.finish());
            }
        }
    }

    #[test]
    fn block_hash_chains_and_keys() {
        let a = block_hash([0, 0], None, Namespace::NONE, &[1, 2, 3]);
        let b = block_hash([0, 0], Some(a), Namespace::NONE, &[1, 2, 3]);
        assert_ne!(a, b);
        assert_ne!(a, block_hash([0, 0], None, Namespace(7), &[1, 2, 3]));
        assert_ne!(a, block_hash([1, 2], None, Namespace::NONE, &[1, 2, 3]));
        assert_eq!(a, block_hash([0, 0], None, Namespace::NONE, &[1, 2, 3]));
    }
}
