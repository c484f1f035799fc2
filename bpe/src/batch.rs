//! Batch encoding on rayon's thread pool (feature `rayon`, on by default).

use rayon::prelude::*;

use crate::tokenizer::Tokenizer;

impl Tokenizer {
    /// [`Tokenizer::encode`] of every text, in parallel on the current
    /// rayon thread pool (the global one, or the one of an enclosing
    /// `ThreadPool::install`); the result is in input order.
    ///
    /// Texts are the unit of work: a batch of one huge text runs on one
    /// thread. Each thread keeps its own cache of pair answers (128 KiB), so
    /// threads share nothing mutable but the per-token facts the embedded
    /// vocabularies fill on first use (atomics, written with the same value
    /// by any thread).
    pub fn encode_batch<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<Vec<u32>> {
        texts.par_iter().map(|t| self.encode(t.as_ref())).collect()
    }

    /// [`Tokenizer::count`] of every text, in parallel like
    /// [`Tokenizer::encode_batch`].
    pub fn count_batch<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<usize> {
        texts.par_iter().map(|t| self.count(t.as_ref())).collect()
    }
}
