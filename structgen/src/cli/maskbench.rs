//! `structgen maskbench`: JSON Schemas with valid and invalid instances.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use super::common::{TokenizerSpec, not_in_this_build};

/// Arguments of `structgen maskbench`.
#[derive(Debug, Args)]
pub(crate) struct MaskbenchArgs {
    /// A JSON-lines file (optionally gzipped) of `{name, schema, tests}`.
    pub(crate) file: PathBuf,
    /// o200k, cl100k, PATH.tiktoken or PATH/tokenizer.json[.gz].
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// Print one JSON record per schema and a summary object last.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also count forced tokens and model calls saved by coalescing.
    #[arg(long)]
    pub(crate) forced: bool,
}

pub(crate) fn run(args: MaskbenchArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("maskbench", "the JSON Schema issue")
}
