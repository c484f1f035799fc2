//! Loading a tokenizer from a `--tokenizer` spec: `o200k`, `cl100k`,
//! `PATH.tiktoken`, `PATH/tokenizer.json[.gz]`, a directory holding a
//! `tokenizer.json` (a Hugging Face model folder), or `PATH.gguf` (a model
//! file's tokenizer; only its metadata is read).
//!
//! This is the one place of the umbrella crate that reads vocabulary files;
//! the `bpe` library itself only takes bytes.

use std::fmt;
use std::path::{Path, PathBuf};

use bpe::{Pattern, Tokenizer};

/// Which tokenizer to use, as given by `--tokenizer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenizerSpec {
    /// The embedded `o200k_base` vocabulary.
    O200k,
    /// The embedded `cl100k_base` vocabulary.
    Cl100k,
    /// A tiktoken rank file (`*.tiktoken`). The split pattern and special
    /// tokens follow the file name (`o200k`, `cl100k`, `p50k`/`r50k`);
    /// other names get cl100k's pattern and no special tokens.
    Tiktoken(PathBuf),
    /// A Hugging Face `tokenizer.json`, optionally gzipped.
    HuggingFace(PathBuf),
    /// The tokenizer in a GGUF model file's metadata.
    Gguf(PathBuf),
}

/// A tokenizer could not be loaded from its spec.
#[derive(Debug)]
#[non_exhaustive]
pub enum TokenizerError {
    /// The file could not be read (or un-gzipped).
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file's contents are not a usable vocabulary.
    Load {
        /// The file.
        path: PathBuf,
        /// Why, naming the line, token or merge.
        source: bpe::LoadError,
    },
}

impl fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The cause is `source()`; error chains (`{:#}`) print it next.
            TokenizerError::Io { path, .. } => write!(f, "cannot read `{}`", path.display()),
            TokenizerError::Load { path, .. } => {
                write!(f, "bad tokenizer file `{}`", path.display())
            }
        }
    }
}

impl std::error::Error for TokenizerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TokenizerError::Io { source, .. } => Some(source),
            TokenizerError::Load { source, .. } => Some(source),
        }
    }
}

impl TokenizerSpec {
    /// Parses a `--tokenizer` value; used as clap's value parser.
    pub fn parse(value: &str) -> Result<TokenizerSpec, String> {
        match value {
            "o200k" | "o200k_base" => return Ok(TokenizerSpec::O200k),
            "cl100k" | "cl100k_base" => return Ok(TokenizerSpec::Cl100k),
            _ => {}
        }
        let path = PathBuf::from(value);
        if path.is_dir() {
            // A model folder: its `tokenizer.json` (or a gzipped one).
            return ["tokenizer.json", "tokenizer.json.gz"]
                .iter()
                .map(|f| path.join(f))
                .find(|f| f.is_file())
                .map(TokenizerSpec::HuggingFace)
                .ok_or_else(|| {
                    format!("directory `{value}` holds no tokenizer.json (nor tokenizer.json.gz)")
                });
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".tiktoken") {
            Ok(TokenizerSpec::Tiktoken(path))
        } else if name.ends_with(".json") || name.ends_with(".json.gz") {
            Ok(TokenizerSpec::HuggingFace(path))
        } else if name.ends_with(".gguf") {
            Ok(TokenizerSpec::Gguf(path))
        } else {
            Err(format!(
                "unknown tokenizer `{value}`: expected o200k, cl100k, \
                 a PATH.tiktoken file, a PATH/tokenizer.json[.gz] file, a directory \
                 holding tokenizer.json or a PATH.gguf model file"
            ))
        }
    }

    /// Loads the tokenizer (reading the file for path specs).
    pub fn load(&self) -> Result<Tokenizer, TokenizerError> {
        match self {
            TokenizerSpec::O200k => Ok(Tokenizer::o200k_base()),
            TokenizerSpec::Cl100k => Ok(Tokenizer::cl100k_base()),
            TokenizerSpec::Tiktoken(path) => {
                let bytes = read_maybe_gz(path)?;
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let (pattern, specials) = if name.contains("o200k") {
                    (Pattern::O200k, bpe::O200K_SPECIALS)
                } else if name.contains("p50k") || name.contains("r50k") {
                    (Pattern::Gpt2, bpe::P50K_SPECIALS)
                } else if name.contains("cl100k") {
                    (Pattern::Cl100k, bpe::CL100K_SPECIALS)
                } else {
                    (Pattern::Cl100k, &[][..])
                };
                Tokenizer::from_tiktoken(&bytes, pattern, specials)
                    .map_err(|source| TokenizerError::Load { path: path.clone(), source })
            }
            TokenizerSpec::HuggingFace(path) => {
                let bytes = read_maybe_gz(path)?;
                Tokenizer::from_tokenizer_json(&bytes)
                    .map_err(|source| TokenizerError::Load { path: path.clone(), source })
            }
            TokenizerSpec::Gguf(path) => {
                let io = |source| TokenizerError::Io { path: path.clone(), source };
                // The metadata comes first: read it and stop, leaving the
                // weights on disk.
                let file = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
                Tokenizer::from_gguf(file)
                    .map_err(|source| TokenizerError::Load { path: path.clone(), source })
            }
        }
    }
}

/// The tokens a grammar walks for a document: the text as generated text,
/// a continuation ([`Tokenizer::encode_continuation`]), so a SentencePiece
/// vocabulary (Llama-2, Mistral) adds no prefix space the grammar would
/// then refuse. Bytes that are not UTF-8 fall back to
/// [`Tokenizer::encode_bytes`] (each invalid sequence a piece of its own).
pub fn encode_document(tokenizer: &Tokenizer, bytes: &[u8]) -> Vec<u32> {
    match std::str::from_utf8(bytes) {
        Ok(text) => tokenizer.encode_continuation(text),
        Err(_) => tokenizer.encode_bytes(bytes),
    }
}

/// Reads a file, decompressing it when its name ends in `.gz`.
fn read_maybe_gz(path: &Path) -> Result<Vec<u8>, TokenizerError> {
    crate::io::read_maybe_gz(path)
        .map_err(|e| TokenizerError::Io { path: path.to_owned(), source: e.into_io_error() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_spec_parses_names_and_paths() {
        assert_eq!(TokenizerSpec::parse("o200k"), Ok(TokenizerSpec::O200k));
        assert_eq!(TokenizerSpec::parse("cl100k_base"), Ok(TokenizerSpec::Cl100k));
        assert_eq!(
            TokenizerSpec::parse("x/llama3.tokenizer.json.gz"),
            Ok(TokenizerSpec::HuggingFace("x/llama3.tokenizer.json.gz".into()))
        );
        assert_eq!(
            TokenizerSpec::parse("p50k_base.tiktoken"),
            Ok(TokenizerSpec::Tiktoken("p50k_base.tiktoken".into()))
        );
        assert_eq!(
            TokenizerSpec::parse("m/SmolLM2.Q4_1.gguf"),
            Ok(TokenizerSpec::Gguf("m/SmolLM2.Q4_1.gguf".into()))
        );
        assert!(TokenizerSpec::parse("gpt-17").unwrap_err().contains("unknown tokenizer"));
    }

    #[test]
    fn a_directory_means_its_tokenizer_json() {
        let dir = std::env::temp_dir().join(format!("structgen-tokdir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.to_str().unwrap();
        assert!(TokenizerSpec::parse(d).unwrap_err().contains("holds no tokenizer.json"));
        std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
        assert_eq!(
            TokenizerSpec::parse(d),
            Ok(TokenizerSpec::HuggingFace(dir.join("tokenizer.json")))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_and_bad_files_are_errors() {
        let missing = TokenizerSpec::Tiktoken("/nonexistent/x.tiktoken".into()).load().unwrap_err();
        assert!(missing.to_string().contains("cannot read"), "{missing}");
        let dir = std::env::temp_dir().join(format!("structgen-tok-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.tiktoken");
        std::fs::write(&bad, "not base64 at all\n").unwrap();
        let err = TokenizerSpec::Tiktoken(bad).load().unwrap_err();
        let cause = std::error::Error::source(&err).map(|s| s.to_string()).unwrap_or_default();
        assert!(
            err.to_string().contains("bad.tiktoken") && cause.contains("line 1"),
            "{err}: {cause}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
