//! The reference: a vLLM-style hash-of-blocks prefix cache (block size 16),
//! written here from vLLM's design docs (automatic prefix caching).
//!
//! A prompt's full blocks get chained hashes (each block's hash covers its
//! parent's hash and its tokens); a lookup walks them until the first block
//! not in the hash map. Blocks live in a fixed pool; a block whose request
//! finished goes to the tail of a free queue (a request's blocks in reverse
//! order, so tails go first) but keeps its hash until it is reused from the
//! head of the queue (LRU). Only whole blocks are ever reused.

use std::hash::Hasher;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHasher};
use structgen_cli::cache_sim::Workload;

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Block {
    hash: Option<u64>,
    refs: u32,
    prev: u32,
    next: u32,
    free: bool,
}

/// The hash-of-blocks cache.
#[derive(Debug)]
pub(super) struct BlockCache {
    block: usize,
    /// `None`: grow the pool on demand (unlimited capacity).
    capacity: Option<usize>,
    map: FxHashMap<u64, u32>,
    blocks: Vec<Block>,
    head: u32,
    tail: u32,
    evicted_tokens: u64,
}

/// What a replay measured.
#[derive(Debug, Default)]
pub(super) struct RefReport {
    pub(super) hit_rate: f64,
    pub(super) evicted_tokens: u64,
    pub(super) requests: u64,
    pub(super) lookup_ns: u64,
    pub(super) insert_ns: u64,
    pub(super) lookup_p50_ns: u64,
    pub(super) insert_p50_ns: u64,
    pub(super) lookup_p99_ns: u64,
    pub(super) insert_p99_ns: u64,
    pub(super) bytes_per_token: f64,
}

impl RefReport {
    pub(super) fn lookup_ops_per_sec(&self) -> f64 {
        self.requests as f64 * 1e9 / self.lookup_ns.max(1) as f64
    }

    pub(super) fn insert_ops_per_sec(&self) -> f64 {
        self.requests as f64 * 1e9 / self.insert_ns.max(1) as f64
    }
}

/// The `q` quantile of `v` (sorted in place).
fn quantile(v: &mut [u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[((v.len() - 1) as f64 * q).round() as usize]
}

impl BlockCache {
    fn new(capacity_tokens: Option<usize>, block: usize) -> BlockCache {
        let mut c = BlockCache {
            block,
            capacity: capacity_tokens.map(|t| t / block),
            map: FxHashMap::default(),
            blocks: Vec::new(),
            head: NONE,
            tail: NONE,
            evicted_tokens: 0,
        };
        for _ in 0..c.capacity.unwrap_or(0) {
            let id = c.new_block();
            c.push_free(id);
        }
        c
    }

    fn new_block(&mut self) -> u32 {
        self.blocks.push(Block { hash: None, refs: 0, prev: NONE, next: NONE, free: false });
        (self.blocks.len() - 1) as u32
    }

    fn push_free(&mut self, id: u32) {
        let tail = self.tail;
        let b = &mut self.blocks[id as usize];
        b.free = true;
        b.prev = tail;
        b.next = NONE;
        if tail == NONE {
            self.head = id;
        } else {
            self.blocks[tail as usize].next = id;
        }
        self.tail = id;
    }

    fn unlink_free(&mut self, id: u32) {
        let b = &mut self.blocks[id as usize];
        if !b.free {
            return;
        }
        b.free = false;
        let (prev, next) = (b.prev, b.next);
        if prev == NONE {
            self.head = next
        } else {
            self.blocks[prev as usize].next = next
        }
        if next == NONE { self.tail = prev } else { self.blocks[next as usize].prev = prev }
    }

    /// A block for new tokens: the least recently freed one (dropping its
    /// cached hash), or a new one when the pool is unlimited.
    fn allocate(&mut self) -> Option<u32> {
        if self.capacity.is_none() {
            // Unlimited: never reuse (and so never evict) a cached block.
            return Some(self.new_block());
        }
        if self.head == NONE {
            return None;
        }
        let id = self.head;
        self.unlink_free(id);
        if let Some(h) = self.blocks[id as usize].hash.take()
            && self.map.get(&h) == Some(&id)
        {
            self.map.remove(&h);
            self.evicted_tokens += self.block as u64;
        }
        Some(id)
    }

    fn hashes(&self, tokens: &[u32], out: &mut Vec<u64>) {
        out.clear();
        let mut parent = 0u64;
        for chunk in tokens.chunks_exact(self.block) {
            let mut h = FxHasher::default();
            h.write_u64(parent);
            for &t in chunk {
                h.write_u32(t);
            }
            parent = h.finish();
            out.push(parent);
        }
    }

    /// Replays `w` one request at a time: look up, allocate, cache, free.
    pub(super) fn run(w: &Workload, capacity_tokens: Option<usize>, block: usize) -> RefReport {
        let mut c = BlockCache::new(capacity_tokens, block);
        let (mut hits, mut total) = (0u64, 0u64);
        let mut lookups = Vec::with_capacity(w.requests.len());
        let mut inserts = Vec::with_capacity(w.requests.len());
        let mut tokens = Vec::new();
        let mut hashes = Vec::new();
        let mut held: Vec<u32> = Vec::new();
        let mut peak_bytes = (0usize, 1usize);
        for r in &w.requests {
            tokens.clear();
            r.prompt.expand_into(&mut tokens);
            total += tokens.len() as u64;
            let start = Instant::now();
            c.hashes(&tokens, &mut hashes);
            held.clear();
            for h in &hashes {
                match c.map.get(h) {
                    Some(&id) => held.push(id),
                    None => break,
                }
            }
            lookups.push(start.elapsed().as_nanos() as u64);
            let hit = held.len();
            hits += (hit * block) as u64;
            let start = Instant::now();
            for &id in &held {
                c.unlink_free(id);
                c.blocks[id as usize].refs += 1;
            }
            let needed = tokens.len().div_ceil(block);
            for k in hit..needed {
                let Some(id) = c.allocate() else { break };
                c.blocks[id as usize].refs += 1;
                if k < hashes.len() {
                    let h = hashes[k];
                    c.blocks[id as usize].hash = Some(h);
                    c.map.entry(h).or_insert(id);
                }
                held.push(id);
            }
            for &id in held.iter().rev() {
                let b = &mut c.blocks[id as usize];
                b.refs -= 1;
                if b.refs == 0 {
                    c.push_free(id);
                }
            }
            inserts.push(start.elapsed().as_nanos() as u64);
            let cached = c.map.len() * block;
            if cached >= peak_bytes.1 {
                peak_bytes = (c.memory_bytes(), cached);
            }
        }
        let (lookup_ns, insert_ns) = (lookups.iter().sum(), inserts.iter().sum());
        RefReport {
            hit_rate: if total == 0 { 0.0 } else { hits as f64 / total as f64 },
            evicted_tokens: c.evicted_tokens,
            requests: w.requests.len() as u64,
            lookup_ns,
            insert_ns,
            lookup_p50_ns: quantile(&mut lookups, 0.5),
            insert_p50_ns: quantile(&mut inserts, 0.5),
            lookup_p99_ns: quantile(&mut lookups, 0.99),
            insert_p99_ns: quantile(&mut inserts, 0.99),
            bytes_per_token: peak_bytes.0 as f64 / peak_bytes.1 as f64,
        }
    }

    fn memory_bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<(u64, u32)>() + 1)
            + self.blocks.capacity() * std::mem::size_of::<Block>()
    }
}
