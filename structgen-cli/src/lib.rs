//! The library half of the `structgen` command: what the binary and the
//! benchmark harnesses of the `compare` crate share.
//!
//! - [`tokenizer`]: loading a tokenizer from a `--tokenizer` spec (the
//!   embedded vocabularies, tiktoken files, `tokenizer.json`, gzipped or
//!   not, or a model folder holding one).
//! - [`io`]: reading files, gunzipped when named `.gz` (the one gzip reader
//!   of the command and the benchmark harnesses).
//! - [`validate`]: checking a JSON text against a grammar or schema token
//!   by token, and explaining a rejection (the place, what was expected,
//!   and for schemas the keyword and pointer to blame).
//! - [`maskbench`]: MaskBench files (records, instances) and the token walk
//!   every MaskBench harness runs on our matcher.
//! - [`jsonsuite`]: the official JSON-Schema-Test-Suite (groups, outcomes,
//!   tallies) on our compiler.
//! - [`limits`]: resource limits from `--limit`/`--limits` onto the
//!   libraries' limit structs.
//! - [`replay`]: replaying a document with a stand-in sampler to count what
//!   forced tokens save.
//! - [`cache_sim`]: the prefix-cache simulator (workloads, Mooncake traces,
//!   the serving loop) of `structgen cache-sim` and `cargo xtask bench radix`.
//!
//! The `structgen` library under it does no file I/O; reading files and
//! gzip happens here.
#![forbid(unsafe_code)]

pub mod cache_sim;
mod explain;
pub mod io;
pub mod jsonsuite;
pub mod limits;
pub mod maskbench;
pub mod replay;
pub mod tokenizer;
pub mod validate;
