//! `structgen demo`: generate a document under a grammar, token by token.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use super::common::not_in_this_build;

/// Arguments of `structgen demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// The grammar (.lark, .gbnf, .regex or .json); a bundled example when absent.
    #[arg(long)]
    pub(crate) grammar: Option<PathBuf>,
    /// The seed of the stand-in sampler.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
}

pub(crate) fn run(args: DemoArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("demo", "the mask-engine issue")
}
