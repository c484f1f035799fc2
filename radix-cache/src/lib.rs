//! A radix tree over token sequences for prefix KV-cache reuse.
//!
//! Requests that share a prefix share its KV cache: each edge holds a run of
//! tokens and their per-token KV handles, requests lock the path they use, and
//! unreferenced leaves are evicted when memory is needed.
//!
//! # What will live here (radix-cache issue)
//! `RadixCache<V>` with namespaces and page sizes, read-only `match_prefix`,
//! `insert`, `lock`/`unlock`, exact evictable/protected accounting, eviction
//! whose cost per leaf does not depend on the tree's size, KV-cache events,
//! cache-aware scheduling policies, and the trace simulator's engine.
//!
//! # Boundaries
//! Standalone: knows nothing about tokenizers, grammars or models.
#![forbid(unsafe_code)]
