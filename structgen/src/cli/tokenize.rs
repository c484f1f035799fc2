//! `structgen tokenize | count | chunk`: BPE on a file or standard input.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use super::common::{TokenizerSpec, not_in_this_build};

/// Arguments of `structgen tokenize`.
#[derive(Debug, Args)]
pub(crate) struct TokenizeArgs {
    /// o200k, cl100k, PATH.tiktoken or PATH/tokenizer.json[.gz].
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// Print one JSON array of ids instead of one id per line.
    #[arg(long)]
    pub(crate) json: bool,
    /// The input file, read byte for byte; standard input when absent.
    pub(crate) file: Option<PathBuf>,
}

/// Arguments of `structgen count`.
#[derive(Debug, Args)]
pub(crate) struct CountArgs {
    /// o200k, cl100k, PATH.tiktoken or PATH/tokenizer.json[.gz].
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The input file, read byte for byte; standard input when absent.
    pub(crate) file: Option<PathBuf>,
}

/// Arguments of `structgen chunk`.
#[derive(Debug, Args)]
pub(crate) struct ChunkArgs {
    /// o200k, cl100k, PATH.tiktoken or PATH/tokenizer.json[.gz].
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The largest number of tokens in one chunk.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tokens: u32,
    /// The input file, read byte for byte; standard input when absent.
    pub(crate) file: Option<PathBuf>,
}

pub(crate) fn run_tokenize(args: TokenizeArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("tokenize", "the bpe issue")
}

pub(crate) fn run_count(args: CountArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("count", "the bpe issue")
}

pub(crate) fn run_chunk(args: ChunkArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("chunk", "the bpe issue")
}
