//! `structgen tokenize | count | chunk`: BPE on a file or standard input.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::common::{TokenizerSpec, read_input, stdout_error};

/// Arguments of `structgen tokenize`.
#[derive(Debug, Args)]
pub(crate) struct TokenizeArgs {
    /// o200k, cl100k, PATH.tiktoken, PATH/tokenizer.json[.gz], a
    /// directory holding tokenizer.json, or PATH.gguf.
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
    /// o200k, cl100k, PATH.tiktoken, PATH/tokenizer.json[.gz], a
    /// directory holding tokenizer.json, or PATH.gguf.
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The input file, read byte for byte; standard input when absent.
    pub(crate) file: Option<PathBuf>,
}

/// Arguments of `structgen chunk`.
///
/// Each chunk is one JSON line: `start` and `end` are byte offsets into
/// the input (`end` exclusive; chunks are consecutive and cover it all),
/// `tokens` its token count encoded on its own, and with `--text` the
/// chunk's text.
#[derive(Debug, Args)]
pub(crate) struct ChunkArgs {
    /// o200k, cl100k, PATH.tiktoken, PATH/tokenizer.json[.gz], a
    /// directory holding tokenizer.json, or PATH.gguf.
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The largest number of tokens in one chunk.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tokens: u32,
    /// Where to prefer cutting, when a boundary of that kind fits.
    #[arg(long, value_enum, default_value = "sentence")]
    pub(crate) boundary: BoundaryArg,
    /// Add each chunk's text (`"text"`) to its line.
    #[arg(long)]
    pub(crate) text: bool,
    /// The input file, read byte for byte; standard input when absent.
    pub(crate) file: Option<PathBuf>,
}

/// `--boundary` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum BoundaryArg {
    /// The longest prefix that fits (may cut inside a word).
    Char,
    /// After the last whitespace that fits, else any char.
    Whitespace,
    /// After the last newline that fits, else whitespace, else any char.
    Newline,
    /// After the last sentence end (`.`, `!`, `?`, `…`, `。` …) that fits,
    /// else a newline, else whitespace, else any char.
    Sentence,
    /// After the last blank line that fits, else a sentence end, a
    /// newline, whitespace, any char.
    Paragraph,
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
        serde_json::to_writer(&mut out, &ids)
            .map_err(std::io::Error::from)
            .map_err(stdout_error)?;
        writeln!(out).map_err(stdout_error)?;
    } else {
        for id in ids {
            writeln!(out, "{id}").map_err(stdout_error)?;
        }
    }
    out.flush().map_err(stdout_error)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_count(args: CountArgs) -> Result<ExitCode> {
    let tok = load(&args.tokenizer)?;
    let input = read_input(args.file.as_deref())?;
    let n = match std::str::from_utf8(&input) {
        Ok(text) => tok.count(text),
        Err(_) => tok.encode_bytes(&input).len(),
    };
    outln!("{n}");
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
        BoundaryArg::Sentence => bpe::Boundary::Sentence,
        BoundaryArg::Paragraph => bpe::Boundary::Paragraph,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for c in tok.chunks(text, args.max_tokens as usize, boundary) {
        let mut line = serde_json::json!({ "start_byte": c.range.start, "end_byte": c.range.end, "tokens": c.tokens });
        if args.text {
            line["text"] = serde_json::json!(&text[c.range.clone()]);
        }
        writeln!(out, "{line}").map_err(stdout_error)?;
    }
    out.flush().map_err(stdout_error)?;
    Ok(ExitCode::SUCCESS)
}
