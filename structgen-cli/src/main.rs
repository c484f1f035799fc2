//! The `structgen` command-line tool.
//!
//! Every subcommand lives in its own module under `cli/`, with its arguments
//! and its `run` function.
//!
//! Exit status: 0 on success; 1 when a subcommand that checks something
//! (`mask`, `validate`, `demo`, the harnesses) finds the check failed; 2 for
//! an error (a bad argument or file, a grammar that does not compile, a
//! failed write), printed as one `error: …` line with its causes, never a
//! backtrace. When standard output is a pipe whose reader went away (`|
//! head`), the command stops quietly with status 141 (128 + SIGPIPE, what a
//! shell reports for a C tool killed by the signal), whatever it was doing.

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
    /// Cut a file into consecutive chunks of at most N tokens: one JSON line
    /// per chunk, `{"start_byte", "end_byte", "tokens"}` (a half-open byte
    /// range of the file), with `"text"` under `--text`.
    Chunk(cli::tokenize::ChunkArgs),
    /// Walk an input token by token through a grammar or schema, checking
    /// every mask.
    Mask(cli::mask::MaskArgs),
    /// Check JSON documents against a JSON Schema (or a grammar), token by
    /// token: exit 0 when every one is accepted, 1 with the place and the
    /// reason when one is not.
    Validate(cli::validate::ValidateArgs),
    /// Run the MaskBench JSON-Schema benchmark file.
    Maskbench(cli::maskbench::MaskbenchArgs),
    /// Run the official JSON-Schema-Test-Suite over a directory.
    JsonschemaSuite(cli::jsonschema_suite::SuiteArgs),
    /// Simulate a prefix KV cache on a generated workload or a trace.
    CacheSim(cli::cache_sim::CacheSimArgs),
    /// Generate a document under a grammar or schema with a stand-in sampler.
    Demo(cli::demo::DemoArgs),
    /// List the resource limits `--limit`/`--limits` set, with their defaults.
    Limits,
    /// Run a GGUF model on the CPU under a schema, grammar, regex or chat
    /// request; or run a task file (--eval).
    #[cfg(feature = "generate")]
    Generate(Box<cli::generate::GenerateArgs>),
}

/// Exit status after a closed pipe on standard output.
const BROKEN_PIPE: u8 = 141;

/// Exit status after a panic no library caught (Rust's own for a panic).
const INTERNAL_ERROR: u8 = 101;

/// The message and place of the latest panic, kept by [`panic_hook`] for
/// `main` to report when the panic is not caught.
static LAST_PANIC: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Tokenize(args) => cli::tokenize::run_tokenize(args),
        Command::Count(args) => cli::tokenize::run_count(args),
        Command::Chunk(args) => cli::tokenize::run_chunk(args),
        Command::Mask(args) => cli::mask::run(args),
        Command::Validate(args) => cli::validate::run(args),
        Command::Maskbench(args) => cli::maskbench::run(args),
        Command::JsonschemaSuite(args) => cli::jsonschema_suite::run(args),
        Command::CacheSim(args) => cli::cache_sim::run(args),
        Command::Demo(args) => cli::demo::run(args),
        Command::Limits => cli::common::print_limits(),
        #[cfg(feature = "generate")]
        Command::Generate(args) => cli::generate::run(*args),
    }
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(panic_hook));
    let cli = Cli::parse();
    // A panic the libraries catch (derivre's known ones, retried or turned
    // into errors) is not the user's concern; one that reaches here is.
    let result = match std::panic::catch_unwind(move || run(cli.command)) {
        Ok(result) => result,
        Err(_) => {
            let msg = LAST_PANIC.lock().map(|m| m.clone()).unwrap_or_default();
            eprintln!("error: internal error (a bug; please report it): {msg}");
            return ExitCode::from(INTERNAL_ERROR);
        }
    };
    // What is still buffered must reach the reader too (or fail here).
    let result = result.and_then(|code| {
        use std::io::Write as _;
        std::io::stdout().flush().map_err(cli::common::stdout_error)?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(err) if cli::common::is_broken_pipe(&err) => ExitCode::from(BROKEN_PIPE),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Panics are bugs; still, the user gets one line, not a backtrace, and
/// only for a panic no library caught: the hook keeps the message for
/// `main`, which reports it when the panic reaches it (a library that
/// catches a known derivre panic and retries or returns an error has
/// handled it; printing "internal error" then, beside a correct answer,
/// misled). A `println!` that fails (in code that does not use the
/// subcommands' `outln!`) panics too: a closed pipe then exits quietly as
/// above, any other write error is reported like one.
fn panic_hook(info: &std::panic::PanicHookInfo<'_>) {
    let payload = info.payload();
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    if let Some(io) = msg.strip_prefix("failed printing to stdout: ") {
        if io.contains("Broken pipe") || io.contains("os error 32") {
            std::process::exit(i32::from(BROKEN_PIPE));
        }
        eprintln!("error: cannot write to standard output: {io}");
        std::process::exit(2);
    }
    let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
    if let Ok(mut last) = LAST_PANIC.lock() {
        *last = format!("{msg}{at}");
    }
}
