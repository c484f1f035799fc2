//! `structgen mask`: walk an input through a grammar, checking every mask.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use super::common::{TokenizerSpec, not_in_this_build};

/// Arguments of `structgen mask`.
#[derive(Debug, Args)]
pub(crate) struct MaskArgs {
    /// o200k, cl100k, PATH.tiktoken or PATH/tokenizer.json[.gz].
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The grammar: a .lark, .gbnf, .regex or .json (JSON Schema) file.
    #[arg(long)]
    pub(crate) grammar: PathBuf,
    /// The text to walk through the grammar.
    #[arg(long)]
    pub(crate) input: PathBuf,
    /// Print the popcount and time of every mask.
    #[arg(long)]
    pub(crate) verbose: bool,
}

pub(crate) fn run(args: MaskArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("mask", "the mask-engine issue")
}
