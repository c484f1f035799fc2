//! Batch mask filling: many matchers' rows of one engine-owned bitmask,
//! computed in parallel.
//!
//! Engines keep one `(batch, words)` array of 32-bit words for a decoding
//! step (`words = ceil(vocab / 32)`) and fill one row per structured
//! request. The rows are independent (each matcher owns its state), so they
//! are filled on rayon's thread pool: the calling thread's pool when called
//! inside `ThreadPool::install`, the global pool otherwise. One failing
//! matcher never affects another: its row allows its stop tokens only and
//! its error comes back in its own slot.

use std::fmt;

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use super::{Matcher, MatcherError};

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
    #[cfg(feature = "parallel")]
    let outcomes = work.into_par_iter().map(|(m, words)| m.fill_bitmask(words)).collect();
    #[cfg(not(feature = "parallel"))]
    let outcomes = work.into_iter().map(|(m, words)| m.fill_bitmask(words)).collect();
    Ok(outcomes)
}
