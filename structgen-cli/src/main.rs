//! The `structgen` command-line tool.
//!
//! Every subcommand lives in its own module under `cli/`, with its arguments
//! and its `run` function. Errors are printed with their context and exit with
//! status 2; a subcommand that checks something (such as `mask`) exits with 1
//! when the check fails.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Fast, exact structured generation for LLMs: token masks, forced tokens,
/// BPE counting and chunking, prefix-cache simulation.
#[derive(Debug, Parser)]
#[command(name = "structgen", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the token ids of a file (or standard input).
    Tokenize(cli::tokenize::TokenizeArgs),
    /// Print the number of tokens of a file (or standard input).
    Count(cli::tokenize::CountArgs),
    /// Cut a file into consecutive chunks of at most N tokens (JSON lines).
    Chunk(cli::tokenize::ChunkArgs),
    /// Walk an input token by token through a grammar, checking every mask.
    Mask(cli::mask::MaskArgs),
    /// Run the MaskBench JSON-Schema benchmark file.
    Maskbench(cli::maskbench::MaskbenchArgs),
    /// Run the official JSON-Schema-Test-Suite over a directory.
    JsonschemaSuite(cli::jsonschema_suite::SuiteArgs),
    /// Simulate a prefix KV cache on a generated workload or a trace.
    CacheSim(cli::cache_sim::CacheSimArgs),
    /// Generate a document under a grammar with a stand-in sampler.
    Demo(cli::demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tokenize(args) => cli::tokenize::run_tokenize(args),
        Command::Count(args) => cli::tokenize::run_count(args),
        Command::Chunk(args) => cli::tokenize::run_chunk(args),
        Command::Mask(args) => cli::mask::run(args),
        Command::Maskbench(args) => cli::maskbench::run(args),
        Command::JsonschemaSuite(args) => cli::jsonschema_suite::run(args),
        Command::CacheSim(args) => cli::cache_sim::run(args),
        Command::Demo(args) => cli::demo::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
