//! Helpers shared by the subcommands: tokenizer names, input files.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Which tokenizer a subcommand uses, as given by `--tokenizer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenizerSpec {
    /// The embedded `o200k_base` vocabulary.
    O200k,
    /// The embedded `cl100k_base` vocabulary.
    Cl100k,
    /// A tiktoken rank file (`*.tiktoken`).
    Tiktoken(PathBuf),
    /// A Hugging Face `tokenizer.json`, optionally gzipped.
    HuggingFace(PathBuf),
}

impl TokenizerSpec {
    /// Parses a `--tokenizer` value; used as clap's value parser.
    pub(crate) fn parse(value: &str) -> Result<TokenizerSpec, String> {
        match value {
            "o200k" | "o200k_base" => return Ok(TokenizerSpec::O200k),
            "cl100k" | "cl100k_base" => return Ok(TokenizerSpec::Cl100k),
            _ => {}
        }
        let path = PathBuf::from(value);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".tiktoken") {
            Ok(TokenizerSpec::Tiktoken(path))
        } else if name.ends_with(".json") || name.ends_with(".json.gz") {
            Ok(TokenizerSpec::HuggingFace(path))
        } else {
            Err(format!(
                "unknown tokenizer `{value}`: expected o200k, cl100k, \
                 a PATH.tiktoken file or a PATH/tokenizer.json[.gz] file"
            ))
        }
    }
}

/// Reads a whole file, or standard input when `path` is `None`, byte for byte.
pub(crate) fn read_input(path: Option<&Path>) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    match path {
        Some(path) => {
            bytes = std::fs::read(path)
                .with_context(|| format!("cannot read input file `{}`", path.display()))?;
        }
        None => {
            std::io::stdin().read_to_end(&mut bytes).context("cannot read standard input")?;
        }
    }
    Ok(bytes)
}

/// Reads a file, decompressing it when its name ends in `.gz`.
pub(crate) fn read_maybe_gz(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .with_context(|| format!("`{}` is not a valid gzip file", path.display()))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// The error for a subcommand whose engine has not landed in this build.
pub(crate) fn not_in_this_build(command: &str, issue: &str) -> Result<std::process::ExitCode> {
    bail!("`structgen {command}` is not available in this build yet: it arrives with {issue}")
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
        assert!(TokenizerSpec::parse("gpt-17").unwrap_err().contains("unknown tokenizer"));
    }
}
