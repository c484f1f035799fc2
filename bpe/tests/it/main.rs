//! Integration tests of `bpe`: pre-tokenization against a regex reference,
//! encoders against the brute-force oracle, vocabularies against golden
//! files in `../shared/data` (skipped, saying so, when absent).

mod chunk;
mod common;
mod encode;
mod golden;
mod interval;
mod pretok;
