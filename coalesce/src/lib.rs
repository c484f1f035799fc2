//! Forced tokens without model calls, always in the canonical tokenization.
//!
//! When the grammar allows exactly one continuation for the next bytes, those
//! bytes can be emitted without asking the model. They must be emitted as the
//! tokenizer would tokenize them (the canonical tokenization), and trailing
//! tokens that a later byte could merge into a different token are held back
//! (token healing), so the model never sees a sequence it was not trained on.
//!
//! # What will live here (coalesce issue)
//! Forced bytes from the parser, forced tokens via `bpe`, prompt-boundary
//! healing, and a replaying sampler that counts saved model calls.
//!
//! # Boundaries
//! Depends on `bpe` (canonical tokenization) and `toktrie` (token ids).
#![forbid(unsafe_code)]
