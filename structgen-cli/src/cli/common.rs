//! Helpers shared by the subcommands: tokenizer names, input files.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};

/// Which tokenizer a subcommand uses (defined beside its loader).
pub(crate) use structgen_cli::tokenizer::TokenizerSpec;

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

/// The vocabulary of `tokenizer` with its JSON slicer (none with
/// `--no-slicer`), shared by every matcher of the command.
pub(crate) fn vocabulary(
    tokenizer: &std::sync::Arc<bpe::Tokenizer>,
    no_slicer: bool,
) -> Result<structgen::Vocabulary> {
    let mut b = structgen::Vocabulary::builder().tokenizer(tokenizer.clone());
    if no_slicer {
        b = b.slicer(None);
    } else {
        b = b.slicer(Some(slicer::SlicerConfig::json()));
    }
    b.build().context("cannot build the vocabulary")
}
