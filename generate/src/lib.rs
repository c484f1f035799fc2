//! Constrained generation with a real model: a GGUF LLaMA-family
//! checkpoint (SmolLM2-135M-Instruct is the one the project tests with) run
//! on the CPU, every token drawn from structgen's mask, forced tokens fed
//! to the model in one forward pass, and each part of a step timed.
//!
//! This crate is apart from `structgen` so that an engine that brings its
//! own model never compiles the model runtime.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use structgen_generate::{Format, Generator, Params, Weights};
//!
//! let mut file = std::io::BufReader::new(std::fs::File::open("SmolLM2-135M-Instruct.Q4_1.gguf")?);
//! let generator = Generator::load(&mut file, Weights::AsStored)?;
//! let messages = [serde_json::json!({"role": "user", "content": "A cat, as JSON."})];
//! let prompt = generator.encode_prompt(&generator.chat_prompt(&messages, None)?);
//! let schema = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}},
//!                                 "required": ["name"]});
//! let grammar = Format::JsonSchema(schema).compile()?;
//! let g = generator.generate(&prompt, Some(&grammar), &Params::default())?;
//! println!("{} ({} forward passes, {} forced tokens)", g.output, g.forward_passes, g.forced_tokens);
//! # Ok(()) }
//! ```
//!
//! # Pieces
//! - [`Generator`] (`generator.rs`): loads the file (tokenizer by `bpe`'s
//!   GGUF loader, chat template, weights) and runs the decoding loop; its
//!   manual describes the loop and what each figure of a [`Generation`]
//!   measures.
//! - [`Model`], [`Session`] (`model.rs`): the forward pass (candle); a
//!   session is one sequence's KV cache.
//! - [`ChatTemplate`] (`template.rs`): the file's Jinja template rendered by
//!   `minijinja` as Hugging Face renders it.
//! - [`Format`], [`Constraint`] (`constraint.rs`): the only module that
//!   uses structgen's front door; generation takes any
//!   [`structgen::Grammar`] and runs it through a [`structgen::Matcher`]
//!   over the model's [`structgen::Vocabulary`] (the file's tokenizer and
//!   stop tokens, the model's padded vocabulary size).
//! - [`ChatRequest`] (`request.rs`): OpenAI-style requests
//!   (`response_format`, `tools`) to a prompt and a grammar, and the
//!   `chat.completion` answer.
//! - [`sampler::sample`]: greedy, or temperature and top-p from a seed.
//!
//! # Why candle
//! Writing quantized matrix code is not this project's job; Hugging Face's
//! `candle-core`/`candle-transformers` (0.11) are kept up to date, pure Rust
//! (no C++ toolchain, unlike llama.cpp bindings), and their quantized LLaMA
//! loads GGUF files with Q4_1 weights on the CPU, falling back to the token
//! embedding when the file has no `output.weight` (tied embeddings, as in
//! SmolLM2). The cost: about 140 more crates and 3 minutes of a cold
//! release build on two cores, ~450 MB of `target/`. Q4_1 has no SIMD
//! kernel in candle 0.11 (about 37 ms per token for SmolLM2-135M on the
//! project's 2-core machine); [`Weights::Q8_0`] requantizes when loading
//! (about 3× faster, twice the memory, slightly different logits). See
//! `DESIGN.md` for the measurements and the choices.
//!
//! # Complexity and memory
//! Per step: one forward pass (the model's cost, linear in the context for
//! attention), one mask (`structgen`'s trie walk, O(trie nodes visited)),
//! and for forced tokens one canonical BPE of the forced bytes. Memory: the
//! weights (~100 MB for SmolLM2-135M Q4_1, ~200 MB as Q8_0) plus the KV
//! cache, `2 × layers × kv_heads × head_dim × 4` bytes per token (23 KB for
//! SmolLM2-135M).
//!
//! # Errors and panics
//! Every failure is an [`Error`]: model, tokenizer, grammar, template,
//! request, or a full context (candle's rotary table holds 4,096
//! positions). A chat template from the file runs on a fuel budget. No
//! input panics.
//!
//! # Features
//! None.
#![forbid(unsafe_code)]

mod constraint;
mod error;
mod generator;
mod model;
mod request;
pub mod sampler;
mod template;

pub use constraint::{
    Constraint, Format, MAX_ADDITIONAL_MEMBERS, MAX_KEY_CHARS, MAX_NUMBER_CHARS, MAX_STRING_CHARS,
};
pub use error::Error;
pub use generator::{Generation, Generator, Params, Prefilled, Step, StopReason};
pub use model::{Model, Session, Weights};
pub use request::{
    Answer, ChatRequest, TOOL_CALL_CLOSE, TOOL_CALL_OPEN, Tool, json_dumps, parse_tool_calls,
};
pub use template::{CHATML, ChatTemplate, DEFAULT_FUEL};

#[cfg(test)]
mod tests {
    #[test]
    fn public_types_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<super::Generator>();
        check::<super::Constraint>();
        check::<super::Error>();
        check::<super::Generation>();
    }
}
