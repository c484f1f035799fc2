//! `structgen mask`: walk an input through a grammar or schema, checking
//! every mask.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use toktrie::TokenId;

use super::common::{
    Defaults, LimitArgs, SchemaArgs, TokenizerSpec, load_grammar, read_maybe_gz, summary,
};
use structgen::Matcher;

/// Arguments of `structgen mask`.
#[derive(Debug, Args)]
pub(crate) struct MaskArgs {
    /// o200k, cl100k, PATH.tiktoken, PATH/tokenizer.json[.gz] or a
    /// directory holding tokenizer.json.
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The grammar: a .lark, .gbnf, .regex or .json (JSON Schema) file.
    #[arg(long)]
    pub(crate) grammar: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
    /// A structural tag (XGrammar's JSON format) or a tool-call preset
    /// request `{"syntax": "hermes"|"llama3_json"|"llama3_python_tag"|
    /// "mistral"|"deepseek", "tools": [...], "tool_choice": ..., "reasoning":
    /// bool}`, instead of --grammar or --schema.
    #[arg(long, conflicts_with_all = ["grammar", "schema"])]
    pub(crate) structure: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    /// The text to walk through the grammar (gunzipped when named .gz).
    #[arg(long)]
    pub(crate) input: PathBuf,
    /// Print the popcount and time of every mask.
    #[arg(long)]
    pub(crate) verbose: bool,
    /// Compute every mask with the plain trie walk (no precomputed slices).
    #[arg(long)]
    pub(crate) no_slicer: bool,
}

/// The text of token `t` for messages.
fn shown(tok: &bpe::Tokenizer, t: u32) -> String {
    let bytes = tok.token_bytes(t).unwrap_or(b"<special>");
    format!("{t} {:?}", String::from_utf8_lossy(bytes))
}

pub(crate) fn run(args: MaskArgs) -> Result<ExitCode> {
    let tok = std::sync::Arc::new(args.tokenizer.load()?);
    let loaded = match &args.structure {
        Some(s) => super::common::load_structure(s, &tok)?,
        None => {
            load_grammar(args.grammar.as_deref(), &args.schema, &args.limits, &Defaults::default())?
        }
    };
    let input = read_maybe_gz(&args.input)?;
    let tokens: Vec<TokenId> =
        structgen_cli::tokenizer::encode_document(&tok, &input).into_iter().map(TokenId).collect();
    let vocab = super::common::vocabulary(&tok, args.no_slicer)?;
    let mut m = Matcher::new(&vocab, &loaded.grammar)?;
    let mut times = Vec::with_capacity(tokens.len() + 1);
    let mut rejected = None;
    for (step, &t) in tokens.iter().chain(std::iter::once(&TokenId(u32::MAX))).enumerate() {
        let start = Instant::now();
        let mask = m.compute_mask()?;
        let micros = start.elapsed().as_secs_f64() * 1e6;
        times.push(micros);
        let popcount = mask.count();
        let last = step == tokens.len();
        if args.verbose {
            let next = if last { "(end)".to_string() } else { shown(&tok, t.0) };
            outln!("step {step}: {popcount} allowed, {micros:.1} µs; next {next}");
        }
        if last {
            break;
        }
        if !mask.contains(t) {
            rejected = Some(step);
            break;
        }
        m.consume_token(t)?;
    }
    outln!("{}", summary(&mut times));
    if let Some(s) = m.slicer_stats() {
        outln!("slicer: {} of {} masks answered in part by slices", s.masks_sliced, s.masks);
    }
    if let Some(step) = rejected {
        let offset: usize =
            tokens[..step].iter().map(|t| tok.token_bytes(t.0).map_or(0, <[u8]>::len)).sum();
        let (line, column) = structgen_cli::validate::line_column(&input, offset);
        outln!(
            "rejected: token {} (step {step}, byte offset {offset}, line {line}, column {column}) \
             is not allowed; `structgen validate` says why",
            shown(&tok, tokens[step].0)
        );
        return Ok(ExitCode::from(1));
    }
    if m.is_accepting() {
        outln!("accepted: {} tokens", tokens.len());
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("rejected: the input is a proper prefix; the grammar does not accept at its end");
        Ok(ExitCode::from(1))
    }
}
