//! Batch mask filling: many matchers' rows of one engine-owned bitmask,
//! computed in parallel.
//!
//! Engines keep one `(batch, words)` array of 32-bit words for a decoding
//! step (`words = ceil(vocab / 32)`) and fill one row per structured
//! request. The rows are independent (each matcher owns its state), so they
//! are filled on rayon's thread pool: the calling thread's pool when called
//! inside `ThreadPool::install`, the global pool otherwise. One failing
//! matcher never affects another: its row allows its stop tokens only and
//! its error comes back in its own slot. That holds for a panic too (a bug
//! in structgen): it is caught per row, so the other rows are still filled
//! and the batch's caller (an engine, or a Python binding whose caller must
//! not abort) gets [`MatcherError::Panicked`] in that row's slot.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use super::{Matcher, MatcherError};
#[cfg(feature = "parallel")]
use toktrie::TokenId;

/// Why a batch could not be filled at all (a caller's mistake: nothing is
/// written).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchError {
    /// `bitmask.len()` is not a multiple of the row width, or the width is 0.
    Shape {
        /// The bitmask's length in words.
        len: usize,
        /// The row width in words.
        row_words: usize,
    },
    /// A row index past the bitmask's rows.
    RowOutOfRange {
        /// The index.
        row: usize,
        /// The number of rows.
        rows: usize,
    },
    /// Two matchers given the same row.
    DuplicateRow {
        /// The index.
        row: usize,
    },
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::Shape { len, row_words } => {
                write!(f, "a bitmask of {len} words does not split into rows of {row_words} words")
            }
            BatchError::RowOutOfRange { row, rows } => {
                write!(f, "row {row} is out of range: the bitmask has {rows} rows")
            }
            BatchError::DuplicateRow { row } => write!(f, "row {row} is given to two matchers"),
        }
    }
}

impl std::error::Error for BatchError {}

/// Fills row `row` of `bitmask` (row-major, `row_words` 32-bit words per
/// row) with the mask of its matcher, for every `(matcher, row)` of `jobs`,
/// in parallel (with the default `parallel` feature; in order without
/// it). Returns each job's outcome in the order of `jobs`: an error row
/// allows its matcher's stop tokens only (see [`Matcher::fill_bitmask`]).
/// Rows not named in `jobs` are left untouched.
///
/// ```
/// use structgen::{Grammar, Matcher, Vocabulary, fill_bitmask_batch, toktrie::TokenId};
///
/// let vocab = Vocabulary::builder().token_list(&["a", "b", "c"]).build()?;
/// let (ga, gb) = (Grammar::regex("a+")?, Grammar::regex("b+")?);
/// let (mut ma, mut mb) = (Matcher::new(&vocab, &ga)?, Matcher::new(&vocab, &gb)?);
/// let words = vocab.bitmask_words();
/// let mut bitmask = vec![0u32; 2 * words];
/// let outcomes = fill_bitmask_batch(&mut [(&mut mb, 1), (&mut ma, 0)], &mut bitmask, words)?;
/// assert!(outcomes.iter().all(Result::is_ok));
/// assert_eq!(bitmask, [0b001, 0b010]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`BatchError`] for a bitmask whose length is not a multiple of
/// `row_words`, a row out of range, or a row given twice (nothing is
/// written). A row narrower than a matcher's vocabulary is that job's
/// [`MatcherError::BitmaskTooSmall`].
pub fn fill_bitmask_batch(
    jobs: &mut [(&mut Matcher, usize)],
    bitmask: &mut [u32],
    row_words: usize,
) -> Result<Vec<Result<(), MatcherError>>, BatchError> {
    let mut work = split_rows(jobs, bitmask, row_words)?;
    Ok(fill_bitmask_rows(&mut work))
}

/// Each job's matcher with its row of `bitmask`, checked.
fn split_rows<'a>(
    jobs: &'a mut [(&mut Matcher, usize)],
    bitmask: &'a mut [u32],
    row_words: usize,
) -> Result<Vec<(&'a mut Matcher, &'a mut [u32])>, BatchError> {
    if row_words == 0 || !bitmask.len().is_multiple_of(row_words) {
        return Err(BatchError::Shape { len: bitmask.len(), row_words });
    }
    let rows = bitmask.len() / row_words;
    let mut slots: Vec<Option<&mut [u32]>> = bitmask.chunks_mut(row_words).map(Some).collect();
    let mut work: Vec<(&mut Matcher, &mut [u32])> = Vec::with_capacity(jobs.len());
    for (matcher, row) in jobs.iter_mut() {
        let row = *row;
        let Some(slot) = slots.get_mut(row) else {
            return Err(BatchError::RowOutOfRange { row, rows });
        };
        let Some(words) = slot.take() else {
            return Err(BatchError::DuplicateRow { row });
        };
        work.push((&mut **matcher, words));
    }
    Ok(work)
}

/// Fills each job's row with its matcher's mask (as
/// [`Matcher::fill_bitmask`]), in parallel with the default `parallel`
/// feature; returns each job's outcome in the order of `jobs`.
///
/// The rows are separate slices, so they may live anywhere: rows of one
/// engine-owned bitmask split by the caller (a binding that must not make
/// one `&mut` over memory that other threads write), or rows of different
/// arrays. [`fill_bitmask_batch`] is this function on the rows of one
/// bitmask.
///
/// A panic while filling a row (a bug in structgen) is caught: that row
/// allows its matcher's stop tokens only, its slot is
/// [`MatcherError::Panicked`], and the matcher stays stopped in that error
/// until [`Matcher::reset`]; the other rows are filled as usual.
///
/// ```
/// use structgen::{Grammar, Matcher, Vocabulary, fill_bitmask_rows};
///
/// let vocab = Vocabulary::builder().token_list(&["a", "b", "c"]).build()?;
/// let (mut ma, mut mc) =
///     (Matcher::new(&vocab, &Grammar::regex("a+")?)?, Matcher::new(&vocab, &Grammar::regex("c")?)?);
/// let (mut row_a, mut row_c) = ([0u32; 1], [0u32; 1]);
/// let outcomes = fill_bitmask_rows(&mut [(&mut ma, &mut row_a[..]), (&mut mc, &mut row_c[..])]);
/// assert!(outcomes.iter().all(Result::is_ok));
/// assert_eq!((row_a, row_c), ([0b001], [0b100]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fill_bitmask_rows(jobs: &mut [(&mut Matcher, &mut [u32])]) -> Vec<Result<(), MatcherError>> {
    #[cfg(feature = "parallel")]
    let outcomes = jobs.par_iter_mut().map(|(m, row)| fill_one(m, row)).collect();
    #[cfg(not(feature = "parallel"))]
    let outcomes = jobs.iter_mut().map(|(m, row)| fill_one(m, row)).collect();
    outcomes
}

/// A thread pool for batch fills on which the calling thread works too.
///
/// [`fill_bitmask_rows`] hands the whole batch to rayon's pool and waits:
/// each call pays a worker's wake-up before any row is filled, and another
/// before the caller resumes. At the batch sizes engines run (tens of rows
/// of a few microseconds each) those wake-ups are a large share of the
/// call. A `BatchPool` of `threads` keeps `threads - 1` helper workers: the
/// caller starts on the first row at once, the helpers join as they wake,
/// and each thread takes the next unfilled row from a shared counter (so a
/// slow row delays only the thread that took it). With one thread no
/// worker is involved at all. [`consume_batch`](BatchPool::consume_batch)
/// runs a step's consumes the same way. What bounds the speed-up is in
/// structgen/DESIGN.md ("Batch fills on two threads").
///
/// ```
/// use structgen::{BatchPool, Grammar, Matcher, Vocabulary};
///
/// let vocab = Vocabulary::builder().token_list(&["a", "b", "c"]).build()?;
/// let (ga, gb) = (Grammar::regex("a+")?, Grammar::regex("b+")?);
/// let (mut ma, mut mb) = (Matcher::new(&vocab, &ga)?, Matcher::new(&vocab, &gb)?);
/// let pool = BatchPool::new(2)?;
/// let words = vocab.bitmask_words();
/// let mut bitmask = vec![0u32; 2 * words];
/// let outcomes = pool.fill_batch(&mut [(&mut mb, 1), (&mut ma, 0)], &mut bitmask, words)?;
/// assert!(outcomes.iter().all(Result::is_ok));
/// assert_eq!(bitmask, [0b001, 0b010]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "parallel")]
pub struct BatchPool {
    /// The helper workers (`None` for one thread).
    helpers: Option<rayon::ThreadPool>,
}

#[cfg(feature = "parallel")]
impl fmt::Debug for BatchPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchPool").field("threads", &self.threads()).finish()
    }
}

#[cfg(feature = "parallel")]
impl BatchPool {
    /// A pool filling rows on `threads` threads: the caller's and
    /// `threads - 1` helpers (named `structgen-batch-K`), started now.
    ///
    /// # Errors
    /// When `threads` is 0, or the helper threads cannot be started (the
    /// operating system's message).
    pub fn new(threads: usize) -> Result<BatchPool, std::io::Error> {
        if threads == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a batch pool needs at least one thread",
            ));
        }
        let helpers = if threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .thread_name(|i| format!("structgen-batch-{i}"))
                .build()
                .map_err(std::io::Error::other)?;
            Some(pool)
        } else {
            None
        };
        Ok(BatchPool { helpers })
    }

    /// The threads a fill runs on, the caller's included.
    pub fn threads(&self) -> usize {
        self.helpers.as_ref().map_or(1, |h| h.current_num_threads() + 1)
    }

    /// [`fill_bitmask_rows`] on this pool's threads.
    pub fn fill_rows(
        &self,
        jobs: &mut [(&mut Matcher, &mut [u32])],
    ) -> Vec<Result<(), MatcherError>> {
        self.run(jobs, |(m, row)| fill_one(m, row))
    }

    /// Consumes each job's tokens with its matcher (as
    /// [`Matcher::consume_tokens`]) on this pool's threads; returns each
    /// job's outcome in the order of `jobs`.
    ///
    /// An engine's step is a fill, sampling, then a consume per sequence:
    /// this takes the consumes off the caller's thread as
    /// [`fill_rows`](BatchPool::fill_rows) takes the fills (what
    /// XGrammar's batch matcher offers as a batch accept). A panic (a bug
    /// in structgen) is caught as in a fill: the job's outcome is
    /// [`MatcherError::Panicked`] and its matcher stays stopped in that
    /// error.
    ///
    /// ```
    /// use structgen::{BatchPool, Grammar, Matcher, Vocabulary, toktrie::TokenId};
    ///
    /// let vocab = Vocabulary::builder().token_list(&["a", "b"]).build()?;
    /// let g = Grammar::regex("a+b")?;
    /// let (mut m1, mut m2) = (Matcher::new(&vocab, &g)?, Matcher::new(&vocab, &g)?);
    /// let pool = BatchPool::new(2)?;
    /// let a = [TokenId(0)];
    /// let b = [TokenId(1)];
    /// let out = pool.consume_batch(&mut [(&mut m1, &a[..]), (&mut m2, &b[..])]);
    /// assert!(out[0].is_ok() && out[1].is_err(), "`b` cannot come first");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn consume_batch(
        &self,
        jobs: &mut [(&mut Matcher, &[TokenId])],
    ) -> Vec<Result<(), MatcherError>> {
        self.run(jobs, |(m, tokens)| {
            guarded(m, |m| {
                #[cfg(test)]
                tests::maybe_panic(m);
                m.consume_tokens(tokens)
            })
        })
    }

    /// Runs `f` on every job, on this pool's threads: each thread takes
    /// the next job from a shared counter (so a slow job delays only the
    /// thread that took it).
    fn run<J, F>(&self, jobs: &mut [J], f: F) -> Vec<Result<(), MatcherError>>
    where
        J: Send,
        F: Fn(&mut J) -> Result<(), MatcherError> + Sync,
    {
        let n = jobs.len();
        let helpers = match &self.helpers {
            Some(h) if n > 1 => h,
            _ => return jobs.iter_mut().map(f).collect(),
        };
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Mutex, PoisonError};
        // Each job is taken by exactly one thread (the counter hands out
        // each index once), so its lock is never contended.
        type Slot<'a, J> = Mutex<(&'a mut J, Option<Result<(), MatcherError>>)>;
        let slots: Vec<Slot<'_, J>> = jobs.iter_mut().map(|j| Mutex::new((j, None))).collect();
        let next = AtomicUsize::new(0);
        let work = || {
            while let Some(slot) = slots.get(next.fetch_add(1, Ordering::Relaxed)) {
                let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
                let (job, outcome) = &mut *slot;
                *outcome = Some(f(job));
            }
        };
        helpers.in_place_scope(|scope| {
            for _ in 0..helpers.current_num_threads().min(n - 1) {
                scope.spawn(|_| work());
            }
            work();
        });
        slots
            .into_iter()
            .map(|slot| {
                let (_, outcome) = slot.into_inner().unwrap_or_else(PoisonError::into_inner);
                // The scope returns after every thread's loop ran out of
                // jobs, so every slot holds its outcome; were one empty,
                // its job would be reported, not a panic.
                outcome.unwrap_or_else(|| {
                    Err(MatcherError::Panicked { message: "the job was not run".to_owned() })
                })
            })
            .collect()
    }

    /// [`fill_bitmask_batch`] on this pool's threads.
    ///
    /// # Errors
    /// As [`fill_bitmask_batch`].
    pub fn fill_batch(
        &self,
        jobs: &mut [(&mut Matcher, usize)],
        bitmask: &mut [u32],
        row_words: usize,
    ) -> Result<Vec<Result<(), MatcherError>>, BatchError> {
        let mut work = split_rows(jobs, bitmask, row_words)?;
        Ok(self.fill_rows(&mut work))
    }
}

/// One row of a batch, with a panic caught and turned into the matcher's
/// sticky error.
fn fill_one(m: &mut Matcher, row: &mut [u32]) -> Result<(), MatcherError> {
    let outcome = guarded(m, |m| {
        #[cfg(test)]
        tests::maybe_panic(m);
        m.fill_bitmask(&mut *row)
    });
    if let Err(MatcherError::Panicked { .. }) = outcome {
        // The row allows the stop tokens only, as after any error (a
        // sticky panic from before has written it so already).
        m.write_stop_row(row);
    }
    outcome
}

/// `f(m)`, with a panic caught: the matcher is stopped in
/// [`MatcherError::Panicked`], which is returned.
fn guarded(
    m: &mut Matcher,
    f: impl FnOnce(&mut Matcher) -> Result<(), MatcherError>,
) -> Result<(), MatcherError> {
    // A panic leaves the matcher's parser in an unknown state: it is never
    // used again (every entry point checks the sticky error first, and
    // `reset` rebuilds the matcher from its grammar), so observing it
    // after the unwind is sound.
    let outcome = catch_unwind(AssertUnwindSafe(|| f(m)));
    outcome.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        Err(m.fail(MatcherError::Panicked { message }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Grammar, Vocabulary};
    use toktrie::TokenId;

    /// The stop token that makes a matcher panic in a batch (an id no
    /// other test uses).
    const PANIC_STOP: TokenId = TokenId(41);

    pub(super) fn maybe_panic(m: &Matcher) {
        if m.stop_tokens().contains(&PANIC_STOP) {
            panic!("injected by the test");
        }
    }

    /// A pool's consumes and fills, step by step over matchers of several
    /// grammars, equal each matcher's own calls; a rejected token is that
    /// job's error only.
    #[cfg(feature = "parallel")]
    #[test]
    fn a_pool_consumes_and_fills_as_each_matcher_alone() {
        let vocab = Vocabulary::builder()
            .token_list(&["a", "b", "ab", "ba", "c"])
            .special(TokenId(40), "<eos>")
            .stop_tokens([TokenId(40)])
            .build()
            .unwrap();
        let grammars =
            ["(ab)+c", "a*b*c", "(a|b)*", "ba(ab)*c"].map(|r| Grammar::regex(r).unwrap());
        let words = vocab.bitmask_words();
        let new = || -> Vec<Matcher> {
            (0..24).map(|i| Matcher::new(&vocab, &grammars[i % 4]).unwrap()).collect()
        };
        let (mut pooled, mut alone) = (new(), new());
        let pool = BatchPool::new(2).unwrap();
        for step in 0..6u32 {
            let mut bitmask = vec![0u32; pooled.len() * words];
            let mut jobs: Vec<(&mut Matcher, usize)> =
                pooled.iter_mut().enumerate().map(|(i, m)| (m, i)).collect();
            let out = pool.fill_batch(&mut jobs, &mut bitmask, words).unwrap();
            for ((m, row), got) in alone.iter_mut().zip(bitmask.chunks(words)).zip(out) {
                let mut want = vec![0u32; words];
                assert_eq!(m.fill_bitmask(&mut want), got);
                assert_eq!(row, &want[..]);
            }
            // Each matcher's next token: one of its grammar's, or a token
            // some reject (an error in that job only).
            let tokens: Vec<[TokenId; 1]> =
                (0..pooled.len() as u32).map(|i| [TokenId((i * 7 + step * 3) % 5)]).collect();
            let mut jobs: Vec<(&mut Matcher, &[TokenId])> =
                pooled.iter_mut().zip(&tokens).map(|(m, t)| (m, &t[..])).collect();
            let out = pool.consume_batch(&mut jobs);
            for ((m, t), got) in alone.iter_mut().zip(&tokens).zip(out) {
                assert_eq!(m.consume_tokens(t), got);
            }
        }
    }

    /// Two matchers of `a+`: one as usual, one that panics in a batch.
    fn good_and_bad() -> (Matcher, Matcher) {
        let vocab = Vocabulary::builder()
            .token_list(&["a", "b"])
            .special(TokenId(40), "<eos>")
            .special(PANIC_STOP, "<boom>")
            .stop_tokens([TokenId(40)])
            .build()
            .unwrap();
        let g = Grammar::regex("a+").unwrap();
        let good = Matcher::new(&vocab, &g).unwrap();
        let bad = Matcher::new(&vocab, &g).unwrap().with_stop_tokens(&[PANIC_STOP]).unwrap();
        (good, bad)
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn a_panicking_consume_spares_the_others_and_stays_failed() {
        let (mut good, mut bad) = good_and_bad();
        let a = [TokenId(0)];
        let out = BatchPool::new(2).unwrap().consume_batch(&mut [(&mut bad, &a), (&mut good, &a)]);
        assert!(matches!(&out[0], Err(MatcherError::Panicked { .. })));
        assert_eq!(out[1], Ok(()));
        assert!(matches!(bad.error(), Some(MatcherError::Panicked { .. })));
        assert!(good.is_accepting());
    }

    #[test]
    fn a_panicking_row_spares_the_others_and_stays_failed() {
        let (mut good, mut bad) = good_and_bad();
        let mut buf = vec![7u32; 4];
        let out = fill_bitmask_batch(&mut [(&mut bad, 0), (&mut good, 1)], &mut buf, 2).unwrap();
        assert!(
            matches!(&out[0], Err(MatcherError::Panicked { message }) if message == "injected by the test")
        );
        assert_eq!(out[1], Ok(()));
        assert_eq!(buf, [0, 1 << 9, 0b001, 0], "the stop token only; the good row as usual");
        // Sticky: every entry point reports it, and rollback touches nothing.
        assert!(matches!(bad.error(), Some(MatcherError::Panicked { .. })));
        assert!(bad.consume_token(TokenId(0)).is_err());
        bad.rollback(1);
        assert!(bad.compute_mask().is_err());
        // A reset rebuilds the matcher from its grammar, with its settings.
        bad.reset().unwrap();
        assert!(bad.error().is_none());
        assert_eq!(bad.stop_tokens(), [PANIC_STOP]);
    }
}
