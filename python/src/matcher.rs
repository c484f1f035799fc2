//! `Matcher`: one sequence's masks and tokens under one grammar.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use structgen::toktrie::{TokenId, TokenKind};
use structgen::{Matcher, MatcherError, StopReason};

use crate::array::{Elem, View};
use crate::convert::{id_list, token_ids};
use crate::grammar::PyGrammar;
use crate::tokenizer::PyTokenizer;

/// A matcher, and the panic that stopped it if one did.
#[pyclass(name = "Matcher", module = "structgen")]
pub(crate) struct PyMatcher {
    pub(crate) m: Matcher,
    /// The message of a panic caught in a call (a bug in structgen). While
    /// set, the matcher behaves as stopped in an error: its rows allow its
    /// stop tokens only, it accepts no token, and only `reset` clears it.
    pub(crate) panicked: Option<String>,
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Writes the stop tokens of `m` into `row` (the row of a stopped matcher).
pub(crate) fn stop_row(m: &Matcher, row: &mut [u32]) {
    row.fill(0);
    for t in m.stop_tokens() {
        if let Some(w) = row.get_mut(t.index() / 32) {
            *w |= 1 << (t.index() % 32);
        }
    }
}

/// Fills `row` for `m`, or its stop tokens when `m` panicked before or
/// panics now (recorded in `panicked`). A matcher error leaves the stop
/// tokens in the row too and stays readable in `Matcher.error`.
pub(crate) fn fill_row(m: &mut Matcher, panicked: &mut Option<String>, row: &mut [u32]) {
    if panicked.is_some() {
        stop_row(m, row);
        return;
    }
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| m.fill_bitmask(row))) {
        *panicked = Some(panic_message(&*p));
        stop_row(m, row);
    }
}

/// Checks that `view` is a bitmask whose rows hold `need` words or more.
pub(crate) fn check_bitmask(view: &View<'_>, need: usize) -> PyResult<()> {
    if !matches!(view.elem(), Elem::I32 | Elem::U32) {
        return Err(PyTypeError::new_err(format!(
            "the bitmask must be int32 (or uint32), not {:?}",
            view.elem()
        )));
    }
    if view.cols() < need {
        return Err(PyValueError::new_err(format!(
            "the bitmask's rows have {} words; this vocabulary needs {need} (ceil(vocab_size / 32))",
            view.cols()
        )));
    }
    Ok(())
}

/// The length of the prefix of `tokens` whose ids name a token of the
/// vocabulary. The matcher treats an unknown id (a hole, an id past the
/// tokenizer's) as an error that stops it; validating is a question, so it
/// stops before such an id instead.
fn known_prefix(m: &Matcher, tokens: &[TokenId]) -> usize {
    let trie = m.vocabulary().trie();
    tokens
        .iter()
        .position(|&t| t.index() >= trie.vocab_size() || trie.kind(t) == TokenKind::Hole)
        .unwrap_or(tokens.len())
}

impl PyMatcher {
    /// Runs `f` on the matcher, unless it panicked before (`stopped` is
    /// the answer then); a panic now is recorded and answered the same way.
    fn guarded<R>(&mut self, stopped: R, f: impl FnOnce(&mut Matcher) -> R) -> R {
        if self.panicked.is_some() {
            return stopped;
        }
        match catch_unwind(AssertUnwindSafe(|| f(&mut self.m))) {
            Ok(r) => r,
            Err(p) => {
                self.panicked = Some(panic_message(&*p));
                stopped
            }
        }
    }
}

fn stop_reason_name(r: StopReason) -> &'static str {
    match r {
        StopReason::StopToken(_) => "stop_token",
        StopReason::NoExtension => "no_extension",
        StopReason::MaxTokens => "max_tokens",
        StopReason::Error => "error",
        _ => "stopped",
    }
}

#[pymethods]
impl PyMatcher {
    /// A matcher at the start of `grammar` over `tokenizer`'s vocabulary.
    #[new]
    #[pyo3(signature = (tokenizer, grammar, *, stop_tokens = None))]
    fn new(
        py: Python<'_>,
        tokenizer: &Bound<'_, PyTokenizer>,
        grammar: &Bound<'_, PyGrammar>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyMatcher> {
        let stop = stop_tokens.map(token_ids).transpose()?;
        let (vocab, grammar) = (&tokenizer.get().vocab, &grammar.get().grammar);
        let m = py
            .detach(|| catch_unwind(|| Matcher::new(vocab, grammar)))
            .map_err(|p| pyo3::exceptions::PyRuntimeError::new_err(panic_message(&*p)))?
            .map_err(|e| PyValueError::new_err(format!("cannot start a matcher: {e}")))?;
        let m = match stop {
            Some(stop) => {
                m.with_stop_tokens(&stop).map_err(|e| PyValueError::new_err(e.to_string()))?
            }
            None => m,
        };
        Ok(PyMatcher { m, panicked: None })
    }

    /// Writes the mask of the next token into row `index` of `bitmask`.
    #[pyo3(signature = (bitmask, index = 0))]
    fn fill_next_token_bitmask(
        &mut self,
        py: Python<'_>,
        bitmask: &Bound<'_, PyAny>,
        index: usize,
    ) -> PyResult<()> {
        let mut view = View::new(bitmask, "the bitmask")?;
        check_bitmask(&view, self.m.vocabulary().bitmask_words())?;
        let mut rows = view.rows_mut::<u32>(&[index])?;
        let row = &mut *rows[0];
        let (m, panicked) = (&mut self.m, &mut self.panicked);
        py.detach(|| fill_row(m, panicked, row));
        Ok(())
    }

    /// Consumes `token`: `True` when the grammar allows it; `False` stops
    /// the matcher in an error (see `error`).
    fn accept_token(&mut self, token: u32) -> bool {
        self.guarded(false, |m| m.consume_token(TokenId(token)).is_ok())
    }

    /// Consumes the longest prefix of `tokens` the grammar allows and
    /// returns its length; the matcher stays usable.
    fn accept_tokens(&mut self, tokens: &Bound<'_, PyAny>) -> PyResult<usize> {
        let tokens = token_ids(tokens)?;
        let tokens = &tokens[..known_prefix(&self.m, &tokens)];
        Ok(self.guarded(0, |m| {
            let n = m.validate_tokens(tokens).unwrap_or(0);
            match m.consume_tokens(&tokens[..n]) {
                Ok(()) => n,
                Err(_) => m.num_tokens(),
            }
        }))
    }

    /// How many of `tokens`, from the first, the grammar allows in a row
    /// (nothing is consumed, and the matcher stays usable).
    fn validate_tokens(&mut self, tokens: &Bound<'_, PyAny>) -> PyResult<usize> {
        let tokens = token_ids(tokens)?;
        let tokens = &tokens[..known_prefix(&self.m, &tokens)];
        Ok(self.guarded(0, |m| m.validate_tokens(tokens).unwrap_or(0)))
    }

    /// Undoes the last `n` consumed tokens.
    fn rollback(&mut self, n: usize) {
        self.guarded((), |m| m.rollback(n));
    }

    /// Back to the start of the grammar, errors cleared.
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.panicked.is_some() {
            // Rebuilt from the grammar: the old state is not trusted.
            let (vocab, grammar) = (self.m.vocabulary().clone(), self.m.grammar().clone());
            let stop = self.m.stop_tokens().to_vec();
            let fresh = py.detach(|| Matcher::new(&vocab, &grammar));
            let fresh = fresh.map_err(|e| PyValueError::new_err(format!("cannot restart: {e}")))?;
            self.m =
                fresh.with_stop_tokens(&stop).map_err(|e| PyValueError::new_err(e.to_string()))?;
            self.panicked = None;
            return Ok(());
        }
        let m = &mut self.m;
        let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(|| m.reset())));
        match outcome {
            // A failed restart leaves the matcher stopped in that error.
            Ok(_) => Ok(()),
            Err(p) => {
                self.panicked = Some(panic_message(&*p));
                Ok(())
            }
        }
    }

    /// An independent copy at the same position.
    fn fork(&self, py: Python<'_>) -> PyMatcher {
        let m = &self.m;
        PyMatcher { m: py.detach(|| m.clone()), panicked: self.panicked.clone() }
    }

    fn __copy__(&self, py: Python<'_>) -> PyMatcher {
        self.fork(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyMatcher {
        self.fork(py)
    }

    /// Whether the text so far is a sentence of the grammar (a stop token
    /// is allowed now).
    fn is_accepting(&self) -> bool {
        self.panicked.is_none() && self.m.is_accepting()
    }

    /// Whether the matcher accepts no more tokens at all: a stop token was
    /// consumed, or it is stopped in an error.
    fn is_terminated(&self) -> bool {
        self.panicked.is_some()
            || matches!(self.m.stop_reason(), Some(StopReason::StopToken(_) | StopReason::Error))
    }

    /// The tokens the grammar forces next, in the canonical tokenization.
    fn forced_tokens(&mut self, py: Python<'_>) -> Vec<u32> {
        let (m, panicked) = (&mut self.m, &mut self.panicked);
        if panicked.is_some() {
            return Vec::new();
        }
        let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(|| m.forced_tokens())));
        match outcome {
            Ok(Ok(f)) => id_list(f.tokens),
            Ok(Err(_)) => Vec::new(),
            Err(p) => {
                *panicked = Some(panic_message(&*p));
                Vec::new()
            }
        }
    }

    /// Why the matcher stopped, if it did.
    #[getter]
    fn error(&self) -> Option<String> {
        if let Some(p) = &self.panicked {
            let e = MatcherError::Panicked { message: p.clone() };
            return Some(e.to_string());
        }
        self.m.error().map(ToString::to_string)
    }

    /// `None` while text may still come, else why not.
    #[getter]
    fn stop_reason(&self) -> Option<&'static str> {
        if self.panicked.is_some() {
            return Some("error");
        }
        self.m.stop_reason().map(stop_reason_name)
    }

    /// The stop tokens of this matcher.
    #[getter]
    fn stop_tokens(&self) -> Vec<u32> {
        id_list(self.m.stop_tokens().iter().copied())
    }

    /// The number of tokens consumed.
    #[getter]
    fn num_tokens(&self) -> usize {
        self.m.num_tokens()
    }

    fn __repr__(&self) -> String {
        format!(
            "<structgen.Matcher {} tokens={} stop_reason={}>",
            self.m.grammar().kind_name(),
            self.m.num_tokens(),
            self.stop_reason().unwrap_or("None")
        )
    }
}
