//! The embedded tiktoken rank files.
//!
//! Each file has one line per token, `BASE64(bytes) RANK\n`, ranks dense from
//! zero. They come from OpenAI's tiktoken (MIT), as shipped in the assets of
//! the `tiktoken-rs` crate; `data/LICENSE-tiktoken` carries the notice.

/// The `o200k_base` rank file (GPT-4o and later), 199,998 ranks.
pub const O200K_BASE_TIKTOKEN: &[u8] = include_bytes!("../data/o200k_base.tiktoken");

/// The `cl100k_base` rank file (GPT-4, GPT-3.5), 100,256 ranks.
pub const CL100K_BASE_TIKTOKEN: &[u8] = include_bytes!("../data/cl100k_base.tiktoken");
