//! Helpers: the shared data directory and cached tokenizers.

use std::sync::OnceLock;

use bpe::Tokenizer;

pub(crate) use testkit::data_dir_or_skip;

/// Reads a file under the data dir, gunzipping `.gz`.
pub(crate) fn read(dir: &std::path::Path, rel: &str) -> Vec<u8> {
    testkit::read(&dir.join(rel))
}

pub(crate) fn o200k() -> &'static Tokenizer {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    T.get_or_init(Tokenizer::o200k_base)
}

pub(crate) fn cl100k() -> &'static Tokenizer {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    T.get_or_init(Tokenizer::cl100k_base)
}
