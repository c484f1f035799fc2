//! `Grammar` and `GrammarError`: every constraint kind compiled through one
//! process-wide [`GrammarCache`], compile errors with their location as
//! exception attributes.

use std::sync::LazyLock;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use structgen::jsonschema::{Options, PropertyOrder, Whitespace};
use structgen::{CompileOptions, Error, Grammar, GrammarCache, GrammarSpec, Location};

use crate::convert::JsonInput;

create_exception!(
    structgen,
    GrammarError,
    PyValueError,
    "A grammar, schema or request that cannot be compiled, with where: \
     `kind`, `message`, `line`, `column`, `offset`, `pointer`, `keyword`, \
     `grammar_index`, `location` (each `None` when it does not apply)."
);

/// The bytes of compiled grammars the process keeps (least recently used
/// out first).
const CACHE_BYTES: usize = 256 << 20;

/// Every `Grammar.*` constructor compiles through this cache: a schema
/// sent again costs a look-up.
static CACHE: LazyLock<GrammarCache> = LazyLock::new(|| GrammarCache::new(CACHE_BYTES));

/// `e` as a `GrammarError` with its location as attributes.
pub(crate) fn grammar_error(py: Python<'_>, e: &Error) -> PyErr {
    let err = GrammarError::new_err(e.to_string());
    if let Err(set) = set_location(err.value(py), e) {
        return set;
    }
    err
}

fn set_location(v: &Bound<'_, pyo3::exceptions::PyBaseException>, e: &Error) -> PyResult<()> {
    let (line, column, offset) = match e.location() {
        Some(Location::Text { line, column, offset }) => {
            (Some(*line), Some(*column), Some(*offset))
        }
        _ => (None, None, None),
    };
    v.setattr("kind", e.kind().name())?;
    v.setattr("message", e.message())?;
    v.setattr("line", line)?;
    v.setattr("column", column)?;
    v.setattr("offset", offset)?;
    v.setattr("pointer", e.pointer())?;
    v.setattr("keyword", e.keyword())?;
    v.setattr("grammar_index", e.grammar_index())?;
    v.setattr("location", e.location().map(ToString::to_string))?;
    Ok(())
}

/// A compiled grammar: immutable, shared by every matcher made from it.
#[pyclass(name = "Grammar", module = "structgen", frozen)]
pub(crate) struct PyGrammar {
    pub(crate) grammar: Grammar,
}

/// `spec` compiled through the cache with the GIL released.
fn compile(py: Python<'_>, spec: PyResult<GrammarSpec>) -> PyResult<PyGrammar> {
    let spec = spec?;
    py.detach(|| CACHE.get_or_compile(&spec, &CompileOptions::default()))
        .map(|grammar| PyGrammar { grammar })
        .map_err(|e| grammar_error(py, &e))
}

/// A spec from JSON given as text or as Python values.
fn json_spec(
    py: Python<'_>,
    input: JsonInput,
    from_text: fn(&str) -> Result<GrammarSpec, Error>,
    from_value: fn(serde_json::Value) -> GrammarSpec,
) -> PyResult<GrammarSpec> {
    match input {
        JsonInput::Text(t) => from_text(&t).map_err(|e| grammar_error(py, &e)),
        JsonInput::Value(v) => Ok(from_value(v)),
    }
}

#[pymethods]
impl PyGrammar {
    /// A JSON Schema (a `dict` or its JSON text).
    #[staticmethod]
    #[pyo3(signature = (
        schema, *, whitespace = "bounded", whitespace_pattern = None, separators = None,
        any_order = false, forbid_additional_properties = false, max_string_length = None,
        max_number_length = None, max_key_length = None, max_additional_properties = None,
        integer_zero_fraction = true, coerce_one_of = false, lenient = false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn json_schema(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        whitespace: &str,
        whitespace_pattern: Option<String>,
        separators: Option<(String, String)>,
        any_order: bool,
        forbid_additional_properties: bool,
        max_string_length: Option<usize>,
        max_number_length: Option<usize>,
        max_key_length: Option<usize>,
        max_additional_properties: Option<usize>,
        integer_zero_fraction: bool,
        coerce_one_of: bool,
        lenient: bool,
    ) -> PyResult<PyGrammar> {
        let ws = match (whitespace, whitespace_pattern) {
            (_, Some(p)) => Whitespace::Pattern(p),
            ("bounded", None) => Whitespace::bounded(),
            ("unbounded", None) => Whitespace::unbounded(),
            ("compact", None) => Whitespace::Compact,
            (other, None) => {
                return Err(PyValueError::new_err(format!(
                    "whitespace must be \"bounded\", \"unbounded\" or \"compact\" (or give whitespace_pattern), not {other:?}"
                )));
            }
        };
        let mut options = Options::default().with_whitespace(ws);
        if let Some((item, key)) = separators {
            options = options.with_separators(&item, &key);
        }
        if any_order {
            options = options.with_property_order(PropertyOrder::Any);
        }
        options = options.with_integer_zero_fraction(integer_zero_fraction);
        options.forbid_additional_properties = forbid_additional_properties;
        options = options
            .with_length_caps(max_string_length, max_number_length)
            .with_member_caps(max_key_length, max_additional_properties);
        options.coerce_one_of = coerce_one_of;
        options.lenient = lenient;
        let input = JsonInput::extract(schema, "the schema")?;
        let spec = match input {
            JsonInput::Text(t) => {
                GrammarSpec::json_schema_str(&t).map_err(|e| grammar_error(py, &e))
            }
            JsonInput::Value(v) => Ok(GrammarSpec::json_schema(v)),
        }
        .map(|spec| match spec {
            GrammarSpec::JsonSchema { schema, .. } => GrammarSpec::JsonSchema { schema, options },
            other => other,
        });
        compile(py, spec)
    }

    /// A grammar in llguidance's Lark dialect.
    #[staticmethod]
    fn lark(py: Python<'_>, text: String) -> PyResult<PyGrammar> {
        compile(py, Ok(GrammarSpec::Lark(text)))
    }

    /// A grammar in llama.cpp's GBNF.
    #[staticmethod]
    fn gbnf(py: Python<'_>, text: String) -> PyResult<PyGrammar> {
        compile(py, Ok(GrammarSpec::Gbnf(text)))
    }

    /// An anchored regular expression.
    #[staticmethod]
    fn regex(py: Python<'_>, pattern: String) -> PyResult<PyGrammar> {
        compile(py, Ok(GrammarSpec::Regex(pattern)))
    }

    /// Exactly one of `options`.
    #[staticmethod]
    fn choice(py: Python<'_>, options: Vec<String>) -> PyResult<PyGrammar> {
        compile(py, Ok(GrammarSpec::Choice(options)))
    }

    /// A request in llguidance's top-level grammar format.
    #[staticmethod]
    fn from_llguidance(py: Python<'_>, request: &Bound<'_, PyAny>) -> PyResult<PyGrammar> {
        let input = JsonInput::extract(request, "the request")?;
        compile(py, json_spec(py, input, GrammarSpec::llguidance_str, GrammarSpec::Llguidance))
    }

    /// The kind it was compiled from.
    #[getter]
    fn kind(&self) -> &'static str {
        self.grammar.kind_name()
    }

    /// What compilation ignored and said so.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.grammar.warnings().to_vec()
    }

    /// The most tokens a matcher of this grammar may consume, if set.
    #[getter]
    fn max_tokens(&self) -> Option<usize> {
        self.grammar.max_tokens()
    }

    /// Whether the grammar accepts `text` (a `str` or `bytes`), byte by byte.
    fn accepts(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<bool> {
        let bytes: Vec<u8> = if let Ok(s) = text.cast::<PyString>() {
            s.to_cow()?.as_bytes().to_vec()
        } else if let Ok(b) = text.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err("text must be str or bytes"));
        };
        Ok(py.detach(|| self.grammar.accepts(&bytes)))
    }

    fn __repr__(&self) -> String {
        format!("<structgen.Grammar {}>", self.grammar.kind_name())
    }
}

/// The process-wide compile cache's counters.
#[pyfunction]
pub(crate) fn grammar_cache_stats<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let s = CACHE.stats();
    let d = PyDict::new(py);
    d.set_item("hits", s.hits)?;
    d.set_item("misses", s.misses)?;
    d.set_item("evictions", s.evictions)?;
    d.set_item("entries", s.entries)?;
    d.set_item("bytes", s.bytes)?;
    d.set_item("max_bytes", CACHE_BYTES)?;
    Ok(d)
}

/// Drops every grammar of the process-wide compile cache.
#[pyfunction]
pub(crate) fn clear_grammar_cache() {
    CACHE.clear();
}
