//! Exact byte-pair encoding in linear time.
//!
//! # What will live here (bpe issue)
//! Vocabularies (tiktoken rank files; Hugging Face `tokenizer.json`, byte-level
//! and SentencePiece-style), pre-tokenization equal to the built-in split
//! patterns, a backtracking encoder that is linear in the worst case, counting,
//! interval counting, appending and prependable encoders, exact
//! `count_till_limit`, `split_at_tokens` and a chunker. See `DESIGN.md` once
//! it lands.
//!
//! # Embedded vocabularies
//! [`data`] holds OpenAI's `o200k_base` and `cl100k_base` rank files (MIT;
//! see `data/LICENSE-tiktoken`), so the default tokenizers load with no
//! network and no files.
//!
//! # Boundaries
//! Knows nothing about grammars or tries; does no file I/O (callers hand it
//! bytes).
#![forbid(unsafe_code)]

pub mod data;
