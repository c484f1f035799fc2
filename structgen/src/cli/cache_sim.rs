//! `structgen cache-sim`: replay a workload or trace through the prefix cache.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use super::common::not_in_this_build;

/// Arguments of `structgen cache-sim`.
#[derive(Debug, Args)]
pub(crate) struct CacheSimArgs {
    /// A Mooncake-format trace (JSON lines, optionally gzipped); a generated
    /// shared-prefix workload when absent.
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// The cache capacity in tokens; unlimited when absent.
    #[arg(long)]
    pub(crate) capacity: Option<u64>,
    /// Print one JSON summary object.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: CacheSimArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("cache-sim", "the radix-cache issue")
}
