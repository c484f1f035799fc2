//! `structgen jsonschema-suite`: the official JSON-Schema-Test-Suite layout.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use super::common::not_in_this_build;

/// Arguments of `structgen jsonschema-suite`.
#[derive(Debug, Args)]
pub(crate) struct SuiteArgs {
    /// A directory of test files, such as `tests/draft2020-12`.
    pub(crate) dir: PathBuf,
    /// Print one JSON record per test group and a summary object last.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: SuiteArgs) -> Result<ExitCode> {
    let _ = args;
    not_in_this_build("jsonschema-suite", "the JSON Schema issue")
}
