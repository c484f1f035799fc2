//! `Tokenizer`: a tokenizer's vocabulary as matchers see it (a
//! [`Vocabulary`]), from a `tokenizer.json`, a transformers fast tokenizer,
//! a tiktoken rank file, the embedded OpenAI vocabularies, or a plain list
//! of token bytes.

use std::sync::Arc;

use base64::Engine as _;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use structgen::bpe::{self, Pattern};
use structgen::toktrie::{TokenId, TokenKind};
use structgen::{DEFAULT_STOP_NAMES, Vocabulary};

use crate::convert::{id_list, token_ids};

/// A vocabulary that matchers share: built once (trie, stop tokens, the
/// model's vocabulary size, the JSON slicer, forced tokens), immutable.
#[pyclass(name = "Tokenizer", module = "structgen", frozen)]
pub(crate) struct PyTokenizer {
    pub(crate) vocab: Vocabulary,
}

/// The settings every constructor takes.
struct Settings {
    vocab_size: Option<usize>,
    stop_tokens: Option<Vec<TokenId>>,
}

impl Settings {
    fn new(
        vocab_size: Option<usize>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Settings> {
        let stop_tokens = stop_tokens.map(token_ids).transpose()?;
        Ok(Settings { vocab_size, stop_tokens })
    }
}

fn vocab_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The vocabulary of `tokenizer` with `settings`, built with the GIL
/// released (the slicer takes tens of milliseconds on large vocabularies).
fn from_bpe(
    py: Python<'_>,
    tokenizer: bpe::Tokenizer,
    settings: Settings,
) -> PyResult<PyTokenizer> {
    py.detach(|| {
        let mut b = Vocabulary::builder().tokenizer(Arc::new(tokenizer));
        if let Some(n) = settings.vocab_size {
            b = b.model_vocab_size(n);
        }
        if let Some(stop) = settings.stop_tokens {
            b = b.stop_tokens(stop);
        }
        b.build()
    })
    .map(|vocab| PyTokenizer { vocab })
    .map_err(vocab_error)
}

/// A file's bytes, or the bytes given; `what` names it in errors.
fn read_source(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    let path: std::path::PathBuf = obj.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a path (str or os.PathLike) or bytes, not {}",
            crate::array::type_name(obj)
        ))
    })?;
    std::fs::read(&path).map_err(|e| {
        pyo3::exceptions::PyOSError::new_err(format!("cannot read {}: {e}", path.display()))
    })
}

/// A split pattern by name (`cl100k`, `o200k`, `qwen2`, `gpt2`) or by its
/// regular expression (one of those four, as tiktoken and Hugging Face
/// spell them).
fn pattern(spec: &str) -> PyResult<Pattern> {
    let by_name = match spec.trim_end_matches("_base") {
        "cl100k" | "llama3" => Some(Pattern::Cl100k),
        "o200k" => Some(Pattern::O200k),
        "qwen2" => Some(Pattern::Qwen2),
        "gpt2" | "r50k" | "p50k" => Some(Pattern::Gpt2),
        _ => None,
    };
    by_name.or_else(|| Pattern::from_regex(spec)).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unsupported split pattern {spec:?}: structgen's exact BPE implements the cl100k (Llama-3), \
             o200k, Qwen2 and GPT-2 patterns; give one of their names or regexes"
        ))
    })
}

#[pymethods]
impl PyTokenizer {
    /// A Hugging Face `tokenizer.json`, as its text or a path to it.
    #[staticmethod]
    #[pyo3(signature = (text_or_path, *, vocab_size = None, stop_tokens = None))]
    fn from_json(
        py: Python<'_>,
        text_or_path: &Bound<'_, PyAny>,
        vocab_size: Option<usize>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTokenizer> {
        let json = match text_or_path.cast::<PyString>() {
            Ok(s) if s.to_cow()?.trim_start().starts_with('{') => s.to_cow()?.as_bytes().to_vec(),
            _ => read_source(text_or_path, "text_or_path")?,
        };
        let settings = Settings::new(vocab_size, stop_tokens)?;
        let tok = py.detach(|| bpe::Tokenizer::from_tokenizer_json(&json)).map_err(vocab_error)?;
        from_bpe(py, tok, settings)
    }

    /// A transformers fast tokenizer (`PreTrainedTokenizerFast`), read
    /// through its `backend_tokenizer`.
    #[staticmethod]
    #[pyo3(signature = (tokenizer, *, vocab_size = None, stop_tokens = None))]
    fn from_hf(
        py: Python<'_>,
        tokenizer: &Bound<'_, PyAny>,
        vocab_size: Option<usize>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTokenizer> {
        let backend = tokenizer.getattr("backend_tokenizer").map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a transformers fast tokenizer (with backend_tokenizer), not {}",
                crate::array::type_name(tokenizer)
            ))
        })?;
        let json: String = backend.call_method0("to_str")?.extract()?;
        let tok = py.detach(|| bpe::Tokenizer::from_tokenizer_json(json.as_bytes()));
        let tok = tok.map_err(vocab_error)?;
        let mut settings = Settings::new(vocab_size, stop_tokens)?;
        if settings.stop_tokens.is_none() {
            // The default stop set, and the tokenizer's own end-of-sequence
            // token when it names another one.
            let mut stop: Vec<TokenId> = tok
                .special_tokens()
                .filter(|(_, n)| DEFAULT_STOP_NAMES.contains(n))
                .map(|(id, _)| TokenId(id))
                .collect();
            if let Ok(Some(eos)) =
                tokenizer.getattr("eos_token_id").and_then(|e| e.extract::<Option<u32>>())
                && !stop.contains(&TokenId(eos))
            {
                stop.push(TokenId(eos));
            }
            settings.stop_tokens = Some(stop);
        }
        from_bpe(py, tok, settings)
    }

    /// A tiktoken vocabulary: a rank file (path or bytes) or a `dict` of
    /// token bytes to rank, its split pattern, and its special tokens.
    #[staticmethod]
    #[pyo3(signature = (path_or_ranks, pattern, specials = None, *, vocab_size = None, stop_tokens = None))]
    fn from_tiktoken(
        py: Python<'_>,
        path_or_ranks: &Bound<'_, PyAny>,
        pattern: &str,
        specials: Option<&Bound<'_, PyDict>>,
        vocab_size: Option<usize>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTokenizer> {
        let file = if let Ok(ranks) = path_or_ranks.cast::<PyDict>() {
            // The rank file tiktoken would read: `base64 rank` lines.
            let mut text = Vec::new();
            for (token, rank) in ranks.iter() {
                let token: Vec<u8> = token.extract().map_err(|_| {
                    PyTypeError::new_err("the ranks' keys must be bytes (the tokens)")
                })?;
                let rank: u32 = rank.extract()?;
                text.extend(base64::engine::general_purpose::STANDARD.encode(&token).bytes());
                text.extend(format!(" {rank}\n").bytes());
            }
            text
        } else {
            read_source(path_or_ranks, "path_or_ranks")?
        };
        let pattern = self::pattern(pattern)?;
        let specials: Vec<(String, u32)> = match specials {
            Some(d) => {
                d.iter().map(|(k, v)| Ok((k.extract()?, v.extract()?))).collect::<PyResult<_>>()?
            }
            None => Vec::new(),
        };
        let settings = Settings::new(vocab_size, stop_tokens)?;
        let tok = py.detach(|| {
            let named: Vec<(&str, u32)> =
                specials.iter().map(|(n, id)| (n.as_str(), *id)).collect();
            bpe::Tokenizer::from_tiktoken(&file, pattern, &named)
        });
        from_bpe(py, tok.map_err(vocab_error)?, settings)
    }

    /// OpenAI's `o200k_base` (embedded).
    #[staticmethod]
    #[pyo3(signature = (*, vocab_size = None, stop_tokens = None))]
    fn o200k_base(
        py: Python<'_>,
        vocab_size: Option<usize>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTokenizer> {
        let settings = Settings::new(vocab_size, stop_tokens)?;
        let tok = py.detach(bpe::Tokenizer::o200k_base);
        from_bpe(py, tok, settings)
    }

    /// OpenAI's `cl100k_base` (embedded).
    #[staticmethod]
    #[pyo3(signature = (*, vocab_size = None, stop_tokens = None))]
    fn cl100k_base(
        py: Python<'_>,
        vocab_size: Option<usize>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTokenizer> {
        let settings = Settings::new(vocab_size, stop_tokens)?;
        let tok = py.detach(bpe::Tokenizer::cl100k_base);
        from_bpe(py, tok, settings)
    }

    /// A vocabulary from its token bytes, indexed by id (no BPE: no
    /// `encode`, no forced tokens).
    #[staticmethod]
    #[pyo3(signature = (tokens, stop_tokens = None, special_tokens = None, *, vocab_size = None))]
    fn from_vocab(
        py: Python<'_>,
        tokens: &Bound<'_, PyAny>,
        stop_tokens: Option<&Bound<'_, PyAny>>,
        special_tokens: Option<&Bound<'_, PyAny>>,
        vocab_size: Option<usize>,
    ) -> PyResult<PyTokenizer> {
        let mut bytes: Vec<Vec<u8>> = Vec::new();
        for t in tokens.try_iter()? {
            let t = t?;
            bytes.push(match t.cast::<PyString>() {
                Ok(s) => s.to_cow()?.as_bytes().to_vec(),
                Err(_) => t.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "token {} is a {}, not bytes or str",
                        bytes.len(),
                        crate::array::type_name(&t)
                    ))
                })?,
            });
        }
        // Specials: a dict id -> name, or ids whose entry in `tokens` is the name.
        let mut specials: Vec<(u32, String)> = Vec::new();
        if let Some(s) = special_tokens {
            if let Ok(d) = s.cast::<PyDict>() {
                for (id, name) in d.iter() {
                    specials.push((id.extract()?, name.extract()?));
                }
            } else {
                for id in token_ids(s)? {
                    let name = bytes.get(id.index()).ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "special token {} is past the {} tokens given; pass a dict {{id: name}}",
                            id.0,
                            bytes.len()
                        ))
                    })?;
                    specials.push((id.0, String::from_utf8_lossy(name).into_owned()));
                }
            }
        }
        let settings = Settings::new(vocab_size, stop_tokens)?;
        let vocab = py.detach(move || {
            let mut b = Vocabulary::builder();
            for (id, token) in bytes.iter().enumerate() {
                let id = id as u32;
                if !token.is_empty() && !specials.iter().any(|s| s.0 == id) {
                    b = b.token(TokenId(id), token);
                }
            }
            for (id, name) in &specials {
                b = b.special(TokenId(*id), name);
            }
            // Trailing empty tokens count (ids the model has), unless the
            // caller says how many ids there are.
            let given = specials.iter().map(|s| s.0 as usize + 1).fold(bytes.len(), usize::max);
            b = b.model_vocab_size(settings.vocab_size.unwrap_or(given));
            if let Some(stop) = settings.stop_tokens {
                b = b.stop_tokens(stop);
            }
            b.build()
        });
        vocab.map(|vocab| PyTokenizer { vocab }).map_err(vocab_error)
    }

    /// The number of ids a bitmask row covers: the model's vocabulary size.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab.model_vocab_size()
    }

    /// The default stop tokens of matchers over this vocabulary.
    #[getter]
    fn stop_tokens(&self) -> Vec<u32> {
        id_list(self.vocab.stop_tokens().iter().copied())
    }

    /// The special tokens, name to id.
    #[getter]
    fn special_tokens(&self) -> Vec<(String, u32)> {
        self.vocab.trie().specials().map(|(id, n)| (n.to_owned(), id.0)).collect()
    }

    /// Whether matchers over this vocabulary compute forced tokens (a BPE
    /// tokenizer whose canonical tokenization structgen reproduces).
    #[getter]
    fn supports_forced_tokens(&self) -> bool {
        self.vocab.supports_forced_tokens()
    }

    /// The ids of `text` in the canonical BPE tokenization (special-token
    /// names in `text` are ordinary text).
    fn encode(&self, py: Python<'_>, text: &str) -> PyResult<Vec<u32>> {
        let tok = self.bpe()?;
        Ok(py.detach(|| tok.encode(text)))
    }

    /// The number of tokens of `text` (as `len(encode(text))`).
    fn count(&self, py: Python<'_>, text: &str) -> PyResult<usize> {
        let tok = self.bpe()?;
        Ok(py.detach(|| tok.count(text)))
    }

    /// The text of `ids` (invalid UTF-8 replaced by U+FFFD); special
    /// tokens as their names unless `skip_special_tokens`.
    #[pyo3(signature = (ids, *, skip_special_tokens = false))]
    fn decode(&self, ids: &Bound<'_, PyAny>, skip_special_tokens: bool) -> PyResult<String> {
        let bytes = self.decode_ids(&token_ids(ids)?, skip_special_tokens)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The bytes of `ids`; special tokens as their names unless
    /// `skip_special_tokens`.
    #[pyo3(signature = (ids, *, skip_special_tokens = false))]
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        skip_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.decode_ids(&token_ids(ids)?, skip_special_tokens)?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self) -> String {
        format!(
            "<structgen.Tokenizer vocab_size={} stop_tokens={:?}>",
            self.vocab.model_vocab_size(),
            id_list(self.vocab.stop_tokens().iter().copied())
        )
    }
}

impl PyTokenizer {
    fn bpe(&self) -> PyResult<&Arc<bpe::Tokenizer>> {
        self.vocab.tokenizer().ok_or_else(|| {
            PyValueError::new_err(
                "this Tokenizer was made from a token list (Tokenizer.from_vocab): it has no BPE to encode with",
            )
        })
    }

    fn decode_ids(&self, ids: &[TokenId], skip_special: bool) -> PyResult<Vec<u8>> {
        let trie = self.vocab.trie();
        let mut out = Vec::with_capacity(ids.len() * 4);
        for (i, &id) in ids.iter().enumerate() {
            if id.index() >= trie.vocab_size() {
                return Err(PyValueError::new_err(format!(
                    "token {} (at {i}) is past the vocabulary ({} ids)",
                    id.0,
                    trie.vocab_size()
                )));
            }
            match trie.kind(id) {
                TokenKind::Ordinary => out.extend_from_slice(trie.token_bytes(id).unwrap_or(&[])),
                TokenKind::Special if skip_special => {}
                TokenKind::Special => {
                    out.extend_from_slice(trie.special_name(id).unwrap_or("").as_bytes())
                }
                // A hole (an id no token has, such as model padding).
                _ => {}
            }
        }
        Ok(out)
    }
}
