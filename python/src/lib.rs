//! The `structgen` Python package's extension module, `structgen._lib`:
//! the front door of the `structgen` crate (tokenizers, grammars, matchers,
//! batch bitmask filling) for Python inference engines and applications.
//!
//! The Python side (`structgen/__init__.py`) re-exports these classes and
//! adds `allocate_token_bitmask` and the integrations (`structgen.hf`,
//! `structgen.llama_cpp`); `structgen/_lib.pyi` holds the typed signatures
//! and the user documentation.
//!
//! | Python | Rust |
//! | --- | --- |
//! | `Tokenizer` | [`structgen::Vocabulary`] (with its [`structgen::bpe::Tokenizer`] when there is one) |
//! | `Grammar` | [`structgen::Grammar`], compiled through one process-wide [`structgen::GrammarCache`] |
//! | `GrammarError` (a `ValueError`) | [`structgen::Error`], its location as attributes |
//! | `Matcher` | [`structgen::Matcher`] |
//! | `fill_next_token_bitmask_batch` | [`structgen::BatchPool::fill_rows`], GIL released |
//! | `accept_token_batch` | [`structgen::BatchPool::consume_batch`], GIL released |
//! | `apply_token_bitmask_inplace` | `bitmask::apply`, GIL released |
//!
//! # Arrays
//! Bitmasks and logits come in as numpy arrays or CPU torch tensors through
//! DLPack (`__dlpack__`), which both implement; the limited C API of
//! CPython 3.9 that one abi3 wheel targets has no buffer protocol. Shapes,
//! dtypes, devices, alignment and strides are checked before anything is
//! written (see `array.rs`).
//!
//! # Unsafe
//! Reading a DLPack tensor is reading a C struct through a raw pointer, and
//! writing its rows is writing foreign memory: `array.rs` holds every
//! `unsafe` block, each with its `// SAFETY:` argument. Nothing else is
//! unsafe.
//!
//! # Panics
//! None are expected. Should one happen, it never aborts the interpreter:
//! PyO3 turns a panic in a call into a Python exception, a matcher method
//! catches it and leaves that matcher stopped in an error (as
//! [`structgen::fill_bitmask_rows`] does for a batch's rows), so one failed
//! matcher never affects another.
//!
//! # The GIL
//! Compiling a grammar, building a tokenizer's vocabulary, creating a
//! matcher and filling bitmasks run with the GIL released (`Python::detach`),
//! so other Python threads make progress meanwhile.

use pyo3::prelude::*;

mod array;
mod batch;
mod convert;
mod grammar;
mod matcher;
mod tokenizer;

/// The extension module.
#[pymodule]
#[pyo3(name = "_lib")]
fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tokenizer::PyTokenizer>()?;
    m.add_class::<grammar::PyGrammar>()?;
    m.add_class::<matcher::PyMatcher>()?;
    m.add("GrammarError", m.py().get_type::<grammar::GrammarError>())?;
    m.add_function(wrap_pyfunction!(batch::fill_next_token_bitmask_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::accept_token_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::apply_token_bitmask_inplace, m)?)?;
    m.add_function(wrap_pyfunction!(grammar::grammar_cache_stats, m)?)?;
    m.add_function(wrap_pyfunction!(grammar::clear_grammar_cache, m)?)?;
    m.add_function(wrap_pyfunction!(batch::test_panic, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
