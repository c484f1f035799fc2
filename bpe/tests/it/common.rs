//! Helpers: the shared data directory and cached tokenizers.

use std::io::Read;
use std::path::PathBuf;
use std::sync::OnceLock;

use bpe::Tokenizer;

/// `../shared/data` beside the repository, or `None` after printing SKIPPED.
pub(crate) fn data_dir_or_skip(what: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIPPED {what}: ../shared/data is absent");
        None
    }
}

/// Reads a file under the data dir, gunzipping `.gz`.
pub(crate) fn read(dir: &std::path::Path, rel: &str) -> Vec<u8> {
    let raw = std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    if rel.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice()).read_to_end(&mut out).unwrap();
        out
    } else {
        raw
    }
}

pub(crate) fn o200k() -> &'static Tokenizer {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    T.get_or_init(Tokenizer::o200k_base)
}

pub(crate) fn cl100k() -> &'static Tokenizer {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    T.get_or_init(Tokenizer::cl100k_base)
}
