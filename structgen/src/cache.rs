//! [`GrammarCache`]: each distinct grammar compiled once.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{CompileOptions, Error, Grammar, GrammarSpec};

/// A thread-safe cache of compiled grammars, keyed by the spec and the
/// compile options, bounded in bytes (least recently used first out).
///
/// A repeated schema costs a look-up instead of a compilation. Errors are
/// cached too, so a bad spec sent again costs a look-up as well. The lock
/// is held for look-ups and inserts only, never while compiling: two
/// threads that miss on the same spec at once both compile it (the second
/// result replaces the first; both are equal). The cache changes no answer:
/// a cached grammar is the grammar the spec compiles to, and its only state
/// is its matcher start (see [`Grammar`]), which holds exact answers only.
/// An entry's size counts the compiled grammar and the most its matcher
/// start may grow to (a copy of the grammar's lexer that learns, up to 4
/// times the grammar's size plus 64 KiB).
///
/// ```
/// use structgen::{GrammarCache, GrammarSpec};
///
/// let cache = GrammarCache::new(64 << 20);
/// let spec = GrammarSpec::json_schema(serde_json::json!({"type": "integer"}));
/// let a = cache.get_or_compile(&spec, &Default::default())?;
/// let b = cache.get_or_compile(&spec, &Default::default())?;
/// assert!(a.ptr_eq(&b));
/// assert_eq!((cache.stats().hits, cache.stats().misses), (1, 1));
/// # Ok::<(), structgen::Error>(())
/// ```
#[derive(Debug)]
pub struct GrammarCache {
    max_bytes: usize,
    map: Mutex<Entries>,
    /// Keyed per cache, so that nobody can aim specs at one bucket.
    hasher: RandomState,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

/// The entries, in buckets by the hash of their spec. A look-up hashes the
/// spec as it walks it (no key string is built: serializing a schema and
/// formatting the options cost more than the rest of a warm request) and
/// compares the bucket's few entries exactly ([`GrammarSpec::same`]).
#[derive(Debug, Default)]
struct Entries {
    buckets: HashMap<u64, Vec<Entry>>,
    /// Invariant: the number of entries in all buckets.
    len: usize,
    /// Invariant: the sum of the entries' `bytes`.
    bytes: usize,
    /// A counter stamping uses, for least-recently-used eviction.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    spec: GrammarSpec,
    options: CompileOptions,
    result: Result<Grammar, Error>,
    bytes: usize,
    last_used: u64,
}

impl Entry {
    /// Whether this entry holds what `spec` compiles to with `options`.
    fn is(&self, spec: &GrammarSpec, options: &CompileOptions) -> bool {
        self.options == *options && self.spec.same(spec)
    }
}

/// Counters of a [`GrammarCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Look-ups answered from the cache.
    pub hits: u64,
    /// Look-ups that compiled.
    pub misses: u64,
    /// Entries dropped to stay within the byte bound.
    pub evictions: u64,
    /// Entries held now.
    pub entries: usize,
    /// Estimated bytes held now (see [`earley::Grammar::heap_size`]).
    pub bytes: usize,
}

impl GrammarCache {
    /// An empty cache holding at most about `max_bytes` of compiled
    /// grammars (a single grammar larger than that is compiled and
    /// returned but not kept).
    pub fn new(max_bytes: usize) -> GrammarCache {
        GrammarCache {
            max_bytes,
            map: Mutex::new(Entries::default()),
            hasher: RandomState::new(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// The grammar `spec` compiles to with `options`: from the cache, or
    /// compiled (and kept) on a miss.
    ///
    /// # Errors
    /// The compile error of `spec` (cached like a grammar).
    pub fn get_or_compile(
        &self,
        spec: &GrammarSpec,
        options: &CompileOptions,
    ) -> Result<Grammar, Error> {
        let hash = {
            let mut h = self.hasher.build_hasher();
            spec.hash_into(&mut h);
            std::hash::Hasher::finish(&h)
        };
        if let Some(r) = self.lookup(hash, spec, options) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return r;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let result = Grammar::compile(spec, options);
        let bytes = spec.approx_bytes()
            + 2 * std::mem::size_of::<Entry>()
            + match &result {
                Ok(g) => {
                    let heap = g.earley().heap_size();
                    heap + crate::spec::start_budget(heap)
                }
                Err(e) => e.message().len(),
            };
        let entry = Entry {
            spec: spec.clone(),
            options: options.clone(),
            result: result.clone(),
            bytes,
            last_used: 0,
        };
        self.insert(hash, entry);
        result
    }

    /// The counters.
    pub fn stats(&self) -> CacheStats {
        let (entries, bytes) = match self.map.lock() {
            Ok(m) => (m.len, m.bytes),
            Err(p) => (p.get_ref().len, p.get_ref().bytes),
        };
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            entries,
            bytes,
        }
    }

    /// Drops every entry (the counters stay).
    pub fn clear(&self) {
        let mut m = self.entries();
        m.buckets.clear();
        m.len = 0;
        m.bytes = 0;
    }

    /// The entries; a panic in another thread while it held the lock left
    /// them consistent (every update is a few assignments), so the lock's
    /// poison is ignored.
    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lookup(
        &self,
        hash: u64,
        spec: &GrammarSpec,
        options: &CompileOptions,
    ) -> Option<Result<Grammar, Error>> {
        let mut m = self.entries();
        m.clock += 1;
        let now = m.clock;
        let e = m.buckets.get_mut(&hash)?.iter_mut().find(|e| e.is(spec, options))?;
        e.last_used = now;
        Some(e.result.clone())
    }

    fn insert(&self, hash: u64, mut entry: Entry) {
        if entry.bytes > self.max_bytes {
            return;
        }
        let mut m = self.entries();
        m.clock += 1;
        entry.last_used = m.clock;
        let bytes = entry.bytes;
        let bucket = m.buckets.entry(hash).or_default();
        // Another thread may have compiled the same spec meanwhile.
        let old = bucket
            .iter()
            .position(|e| e.is(&entry.spec, &entry.options))
            .map(|i| bucket.swap_remove(i).bytes);
        bucket.push(entry);
        if let Some(old) = old {
            m.bytes -= old;
            m.len -= 1;
        }
        m.bytes += bytes;
        m.len += 1;
        // Least recently used out until within the bound: a scan per
        // eviction, which is rare next to compiling.
        while m.bytes > self.max_bytes {
            let victim = m
                .buckets
                .iter()
                .flat_map(|(&h, b)| b.iter().enumerate().map(move |(i, e)| (e.last_used, h, i)))
                .min();
            let Some((_, h, i)) = victim else { break };
            let Some(bucket) = m.buckets.get_mut(&h) else { break };
            let e = bucket.swap_remove(i);
            if bucket.is_empty() {
                m.buckets.remove(&h);
            }
            m.bytes -= e.bytes;
            m.len -= 1;
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
    }
}
