//! Integration tests of `bpe`: pre-tokenization against a regex reference,
//! encoders against the brute-force oracle, vocabularies against golden
//! files in `../shared/data` (skipped, saying so, when absent).

// The tests name the crate as the rest of the workspace does (`bpe::`).
extern crate structgen_bpe as bpe;

mod chunk;
mod common;
mod continuation;
mod encode;
mod gaps;
mod gguf;
mod golden;
mod interval;
mod pretok;
