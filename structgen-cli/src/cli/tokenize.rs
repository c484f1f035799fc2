//! `structgen tokenize | count | chunk`: BPE on a file or standard input.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::common::{TokenizerSpec, read_input};

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
    /// Where to prefer cutting: at any char, after a newline, after whitespace.
    #[arg(long, value_enum, default_value = "char")]
    pub(crate) boundary: BoundaryArg,
    /// The input file, read byte for byte; standard input when absent.
    pub(crate) file: Option<PathBuf>,
}

/// `--boundary` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum BoundaryArg {
    /// The longest prefix that fits.
    Char,
    /// After the last newline that fits, else whitespace, else any char.
    Newline,
    /// After the last whitespace that fits, else any char.
    Whitespace,
}

fn load(spec: &TokenizerSpec) -> Result<bpe::Tokenizer> {
    Ok(spec.load()?)
}

pub(crate) fn run_tokenize(args: TokenizeArgs) -> Result<ExitCode> {
    let tok = load(&args.tokenizer)?;
    let input = read_input(args.file.as_deref())?;
    let ids = tok.encode_bytes(&input);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        serde_json::to_writer(&mut out, &ids)?;
        writeln!(out)?;
    } else {
        for id in ids {
            writeln!(out, "{id}")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_count(args: CountArgs) -> Result<ExitCode> {
    let tok = load(&args.tokenizer)?;
    let input = read_input(args.file.as_deref())?;
    let n = match std::str::from_utf8(&input) {
        Ok(text) => tok.count(text),
        Err(_) => tok.encode_bytes(&input).len(),
    };
    println!("{n}");
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_chunk(args: ChunkArgs) -> Result<ExitCode> {
    let tok = load(&args.tokenizer)?;
    let input = read_input(args.file.as_deref())?;
    let text = std::str::from_utf8(&input)
        .context("the input is not valid UTF-8 (chunks are cut at character boundaries)")?;
    let boundary = match args.boundary {
        BoundaryArg::Char => bpe::Boundary::Char,
        BoundaryArg::Newline => bpe::Boundary::Newline,
        BoundaryArg::Whitespace => bpe::Boundary::Whitespace,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for c in tok.chunks(text, args.max_tokens as usize, boundary) {
        let line =
            serde_json::json!({ "start": c.range.start, "end": c.range.end, "tokens": c.tokens });
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
