//! [`GrammarCache`]: each distinct grammar compiled once.

use std::collections::HashMap;
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
/// is the write-once matcher start (see [`Grammar`]), the same for every
/// request. An entry's size counts the compiled grammar twice: once for
/// itself, once for the matcher start it keeps (mostly a copy of the
/// grammar's lexer).
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
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<String, Entry>,
    /// Invariant: the sum of the entries' `bytes`.
    bytes: usize,
    /// A counter stamping uses, for least-recently-used eviction.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    result: Result<Grammar, Error>,
    bytes: usize,
    last_used: u64,
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
        let key = format!("{}\u{0}{options:?}", spec.cache_key());
        if let Some(r) = self.lookup(&key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return r;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let result = Grammar::compile(spec, options);
        let bytes = key.len()
            + 64
            + match &result {
                Ok(g) => 2 * g.earley().heap_size(),
                Err(e) => e.message().len(),
            };
        self.insert(key, result.clone(), bytes);
        result
    }

    /// The counters.
    pub fn stats(&self) -> CacheStats {
        let (entries, bytes) = match self.map.lock() {
            Ok(m) => (m.by_key.len(), m.bytes),
            Err(p) => (p.get_ref().by_key.len(), p.get_ref().bytes),
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
        m.by_key.clear();
        m.bytes = 0;
    }

    /// The entries; a panic in another thread while it held the lock left
    /// them consistent (every update is a few assignments), so the lock's
    /// poison is ignored.
    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lookup(&self, key: &str) -> Option<Result<Grammar, Error>> {
        let mut m = self.entries();
        m.clock += 1;
        let now = m.clock;
        let e = m.by_key.get_mut(key)?;
        e.last_used = now;
        Some(e.result.clone())
    }

    fn insert(&self, key: String, result: Result<Grammar, Error>, bytes: usize) {
        if bytes > self.max_bytes {
            return;
        }
        let mut m = self.entries();
        m.clock += 1;
        let now = m.clock;
        if let Some(old) = m.by_key.insert(key, Entry { result, bytes, last_used: now }) {
            m.bytes -= old.bytes;
        }
        m.bytes += bytes;
        // Least recently used out until within the bound: a scan per
        // eviction, which is rare next to compiling.
        while m.bytes > self.max_bytes {
            let Some(victim) =
                m.by_key.iter().min_by_key(|(_, e)| e.last_used).map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = m.by_key.remove(&victim) {
                m.bytes -= e.bytes;
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
