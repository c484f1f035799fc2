//! The embedded tiktoken rank files.
//!
//! Each file has one line per token, `BASE64(bytes) RANK\n`, ranks dense from
//! zero. They come from OpenAI's tiktoken (MIT), as shipped in the assets of
//! the `tiktoken-rs` crate; `data/LICENSE-tiktoken` carries the notice.
//! Each sits behind a default-on feature (`o200k`, `cl100k`): an engine
//! that loads its model's own `tokenizer.json` can leave them out of its
//! binary.

/// The `o200k_base` rank file (GPT-4o and later), 199,998 ranks.
#[cfg(feature = "o200k")]
pub const O200K_BASE_TIKTOKEN: &[u8] = include_bytes!("../data/o200k_base.tiktoken");

/// The `cl100k_base` rank file (GPT-4, GPT-3.5), 100,256 ranks.
#[cfg(feature = "cl100k")]
pub const CL100K_BASE_TIKTOKEN: &[u8] = include_bytes!("../data/cl100k_base.tiktoken");
