//! The module functions on whole arrays: a batch's bitmask rows filled on
//! a thread pool with the GIL released, and a bitmask applied to logits.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use structgen::toktrie::TokenId;
use structgen::{BatchPool, Matcher};

use crate::array::{Elem, Plain, View};
use crate::matcher::{PyMatcher, check_bitmask, stop_row};

/// Batch pools by size, made on first use and kept for the process.
static POOLS: Mutex<Vec<Arc<BatchPool>>> = Mutex::new(Vec::new());

/// The batch pool of `n` threads, the calling thread's included (`None`:
/// as many as rayon's global pool has, one per core unless
/// `RAYON_NUM_THREADS` says otherwise).
fn pool(n: Option<usize>) -> PyResult<Arc<BatchPool>> {
    let n = match n {
        Some(0) => return Err(PyValueError::new_err("num_threads must be at least 1")),
        Some(n) => n,
        None => rayon::current_num_threads(),
    };
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.iter().find(|p| p.threads() == n) {
        return Ok(p.clone());
    }
    let p = BatchPool::new(n)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start {n} threads: {e}")))?;
    let p = Arc::new(p);
    pools.push(p.clone());
    Ok(p)
}

/// Fills row `indices[i]` of `bitmask` for `matchers[i]`, for every `i`,
/// on a thread pool with the GIL released.
#[pyfunction]
#[pyo3(signature = (matchers, bitmask, indices = None, *, num_threads = None))]
pub(crate) fn fill_next_token_bitmask_batch(
    py: Python<'_>,
    matchers: &Bound<'_, PyAny>,
    bitmask: &Bound<'_, PyAny>,
    indices: Option<Vec<usize>>,
    num_threads: Option<usize>,
) -> PyResult<()> {
    let list = matcher_list(matchers)?;
    let indices = indices.unwrap_or_else(|| (0..list.len()).collect());
    if indices.len() != list.len() {
        return Err(PyValueError::new_err(format!(
            "{} matchers but {} indices",
            list.len(),
            indices.len()
        )));
    }
    let mut view = View::new(bitmask, "the bitmask")?;
    let mut refs = borrow_all(&list)?;
    for r in &refs {
        check_bitmask(&view, r.m.vocabulary().bitmask_words())?;
    }
    if refs.is_empty() {
        check_bitmask(&view, 0)?;
    }
    let pool = pool(num_threads)?;
    let rows = view.rows_mut::<u32>(&indices)?;
    // Matchers that panicked in an earlier call get their stop tokens;
    // the others go to the pool.
    let mut jobs: Vec<(&mut Matcher, &mut [u32])> = Vec::with_capacity(rows.len());
    for (r, row) in refs.iter_mut().zip(rows) {
        let PyMatcher { m, panicked } = &mut **r;
        if panicked.is_some() {
            stop_row(m, row);
        } else {
            jobs.push((m, row));
        }
    }
    // Each row's outcome is its matcher's state already: an error (a
    // caught panic included, `MatcherError::Panicked`) is sticky and
    // `Matcher.error` shows it.
    py.detach(|| pool.fill_rows(&mut jobs));
    Ok(())
}

/// Consumes `tokens[i]` with `matchers[i]`, for every `i`, on a thread
/// pool with the GIL released; returns whether each was accepted.
#[pyfunction]
#[pyo3(signature = (matchers, tokens, *, num_threads = None))]
pub(crate) fn accept_token_batch(
    py: Python<'_>,
    matchers: &Bound<'_, PyAny>,
    tokens: Vec<u32>,
    num_threads: Option<usize>,
) -> PyResult<Vec<bool>> {
    let list = matcher_list(matchers)?;
    if tokens.len() != list.len() {
        return Err(PyValueError::new_err(format!(
            "{} matchers but {} tokens",
            list.len(),
            tokens.len()
        )));
    }
    let mut refs = borrow_all(&list)?;
    let pool = pool(num_threads)?;
    let ids: Vec<[TokenId; 1]> = tokens.iter().map(|&t| [TokenId(t)]).collect();
    // Matchers that panicked in an earlier call refuse, as `accept_token`
    // does; the others go to the pool.
    let mut accepted = vec![false; refs.len()];
    let mut jobs: Vec<(&mut Matcher, &[TokenId])> = Vec::with_capacity(refs.len());
    let mut at = Vec::with_capacity(refs.len());
    for (i, (r, id)) in refs.iter_mut().zip(&ids).enumerate() {
        let PyMatcher { m, panicked } = &mut **r;
        if panicked.is_none() {
            jobs.push((m, &id[..]));
            at.push(i);
        }
    }
    let outcomes = py.detach(|| pool.consume_batch(&mut jobs));
    for (i, outcome) in at.into_iter().zip(outcomes) {
        accepted[i] = outcome.is_ok();
    }
    Ok(accepted)
}

/// `matchers` as structgen matchers, or a `TypeError` naming the first
/// that is not one.
fn matcher_list<'py>(matchers: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyMatcher>>> {
    matchers
        .try_iter()?
        .enumerate()
        .map(|(i, m)| {
            let m = m?;
            m.cast_into::<PyMatcher>().map_err(|e| {
                PyTypeError::new_err(format!(
                    "matchers[{i}] is a {}, not a structgen.Matcher",
                    crate::array::type_name(e.into_inner().as_any())
                ))
            })
        })
        .collect()
}

/// Every matcher of `list` borrowed for writing, or a `RuntimeError`
/// naming the first in use (listed twice, or used by another thread).
fn borrow_all<'py>(list: &[Bound<'py, PyMatcher>]) -> PyResult<Vec<PyRefMut<'py, PyMatcher>>> {
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            m.try_borrow_mut().map_err(|_| {
                PyRuntimeError::new_err(format!(
                    "matchers[{i}] is in use: listed twice, or used by another thread right now"
                ))
            })
        })
        .collect()
}

/// Sets `logits[b, i]` to negative infinity wherever bit `i` of bitmask
/// row `b` is 0.
#[pyfunction]
#[pyo3(signature = (logits, bitmask, indices = None))]
pub(crate) fn apply_token_bitmask_inplace(
    py: Python<'_>,
    logits: &Bound<'_, PyAny>,
    bitmask: &Bound<'_, PyAny>,
    indices: Option<Vec<usize>>,
) -> PyResult<()> {
    let mut logits = View::new(logits, "the logits")?;
    let mask = View::new(bitmask, "the bitmask")?;
    check_bitmask(&mask, 0)?;
    let rows = logits.rows();
    if mask.rows() != rows {
        return Err(PyValueError::new_err(format!(
            "the logits have {rows} rows but the bitmask {}",
            mask.rows()
        )));
    }
    let indices = indices.unwrap_or_else(|| (0..rows).collect());
    let masks = mask.all_rows::<u32>();
    match logits.elem() {
        Elem::F32 => {
            apply(py, logits.rows_mut::<f32>(&indices)?, &masks, &indices, f32::NEG_INFINITY)
        }
        Elem::F64 => {
            apply(py, logits.rows_mut::<f64>(&indices)?, &masks, &indices, f64::NEG_INFINITY)
        }
        // IEEE half: sign, all-ones exponent, zero fraction.
        Elem::F16 => apply(py, logits.rows_mut::<u16>(&indices)?, &masks, &indices, 0xFC00u16),
        // bfloat16: the top half of an f32 negative infinity.
        Elem::Bf16 => apply(py, logits.rows_mut::<u16>(&indices)?, &masks, &indices, 0xFF80u16),
        other => {
            return Err(PyTypeError::new_err(format!(
                "the logits must be float16, bfloat16, float32 or float64, not {other:?}"
            )));
        }
    }
    Ok(())
}

/// Masks each logits row with its bitmask row, with the GIL released.
fn apply<T: Plain>(
    py: Python<'_>,
    mut rows: Vec<&mut [T]>,
    masks: &[&[u32]],
    indices: &[usize],
    neg_inf: T,
) {
    py.detach(|| {
        for (row, &i) in rows.iter_mut().zip(indices) {
            mask_row(row, masks[i], neg_inf);
        }
    });
}

/// `logits[i] = neg_inf` where bit `i` of `mask` is 0, and past the
/// mask's `32 * mask.len()` bits.
fn mask_row<T: Copy>(logits: &mut [T], mask: &[u32], neg_inf: T) {
    for (chunk, &word) in logits.chunks_mut(32).zip(mask) {
        match word {
            u32::MAX => {}
            0 => chunk.fill(neg_inf),
            _ => {
                let mut zeros = !word;
                while zeros != 0 {
                    let j = zeros.trailing_zeros() as usize;
                    if let Some(x) = chunk.get_mut(j) {
                        *x = neg_inf;
                    }
                    zeros &= zeros - 1;
                }
            }
        }
    }
    let covered = (mask.len() * 32).min(logits.len());
    logits[covered..].fill(neg_inf);
}

/// Panics, on this thread or on a pool thread with the GIL released: the
/// tests show that either way Python gets an exception, not an abort.
#[pyfunction]
#[pyo3(name = "_test_panic")]
pub(crate) fn test_panic(py: Python<'_>, in_pool: bool) -> PyResult<usize> {
    let message = if in_pool { "a test panic on a pool thread" } else { "a test panic" };
    let boom = move || -> usize { panic!("{message}") };
    if !in_pool {
        boom();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start 2 threads: {e}")))?;
    let (n, ()) = py.detach(|| pool.install(|| rayon::join(boom, || ())));
    Ok(n)
}
