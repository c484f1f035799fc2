//! `structgen generate`: run a GGUF model on the CPU under a grammar (a JSON
//! Schema, a Lark or GBNF grammar, a regex, or an OpenAI-style chat
//! request), print the output and what each part of the steps cost; with
//! `--eval`, run a task file and check every output with an independent
//! JSON Schema validator (see `generate_eval.rs`).

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use generate::{ChatRequest, Format, Generation, Generator, Params, Weights};
use serde_json::{Value, json};

use super::common::read_maybe_gz;

/// Arguments of `structgen generate`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("constraint")
    .args(["schema", "grammar", "regex", "request", "eval"])))]
pub(crate) struct GenerateArgs {
    /// The model file (GGUF, LLaMA family; `cargo xtask model` fetches
    /// SmolLM2-135M-Instruct).
    #[arg(long)]
    pub(crate) model: PathBuf,
    /// Constrain the output to this JSON Schema (a file).
    #[arg(long)]
    pub(crate) schema: Option<PathBuf>,
    /// Constrain the output to this grammar (.lark or .gbnf file).
    #[arg(long)]
    pub(crate) grammar: Option<PathBuf>,
    /// Constrain the output to this regular expression.
    #[arg(long)]
    pub(crate) regex: Option<String>,
    /// Answer this OpenAI-style chat request (JSON file: messages,
    /// response_format, tools, tool_choice); prints a chat.completion.
    #[arg(long)]
    pub(crate) request: Option<PathBuf>,
    /// Run every task of this JSON-lines file ({"prompt" or "messages",
    /// "schema"}) and report validity, speed and forcing figures.
    #[arg(long)]
    pub(crate) eval: Option<PathBuf>,
    /// The user's message (rendered with the model's chat template).
    #[arg(long, conflicts_with = "messages")]
    pub(crate) prompt: Option<String>,
    /// A JSON file with the conversation (a list of {"role", "content"}).
    #[arg(long)]
    pub(crate) messages: Option<PathBuf>,
    /// Give --prompt to the model as is, without the chat template.
    #[arg(long, requires = "prompt")]
    pub(crate) raw: bool,
    /// Softmax temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) temperature: f32,
    /// Nucleus sampling mass.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) top_p: f32,
    /// The sampler's seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Repetition penalty, as llama.cpp's `--repeat-penalty`: recent tokens'
    /// logits are divided by it (multiplied when negative); 1 is off.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) repeat_penalty: f32,
    /// How many recent tokens the repetition penalty looks at.
    #[arg(long, default_value_t = 64)]
    pub(crate) repeat_last_n: usize,
    /// The most tokens to generate (forced tokens included).
    #[arg(long, default_value_t = 512)]
    pub(crate) max_tokens: usize,
    /// Sample every token, forced ones too (masks only).
    #[arg(long)]
    pub(crate) no_forcing: bool,
    /// How to hold the weights: as stored, or requantized to Q8_0 (about
    /// 3× faster on CPUs with AVX2, slightly different logits).
    #[arg(long, value_enum, default_value_t = WeightsArg::AsStored)]
    pub(crate) weights: WeightsArg,
    /// Print one JSON object (output and figures) instead of text; with
    /// --eval, one line per task as it ends, then the summary.
    #[arg(long)]
    pub(crate) json: bool,
    /// With --eval: also run each prompt without a grammar.
    #[arg(long, requires = "eval")]
    pub(crate) unconstrained: bool,
    /// With --eval: also run each task with forcing off and compare.
    #[arg(long, requires = "eval")]
    pub(crate) compare_forcing: bool,
    /// With --eval: only the first N tasks.
    #[arg(long, requires = "eval")]
    pub(crate) limit: Option<usize>,
}

/// `--weights`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WeightsArg {
    /// As stored in the file.
    AsStored,
    /// Requantized to Q8_0 when loading.
    Q8_0,
}

pub(crate) fn run(args: GenerateArgs) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let generator = load(&args)?;
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    if let Some(path) = &args.eval {
        return super::generate_eval::run(&generator, &args, path, load_ms);
    }
    let params = Params::default()
        .with_sampling(args.temperature, args.top_p, args.seed)
        .with_repeat_penalty(args.repeat_penalty, args.repeat_last_n)
        .with_max_tokens(args.max_tokens)
        .with_forcing(!args.no_forcing);
    if let Some(path) = &args.request {
        return run_request(&generator, &args, path, &params);
    }
    let spec = grammar_spec(&args)?;
    let grammar = spec.as_ref().map(Format::compile).transpose()?;
    let text = prompt_text(&generator, &args)?;
    let prompt = generator.encode_prompt(&text);
    let g = generator.generate(&prompt, grammar.as_ref(), &params)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = figures(&g);
        v["load_ms"] = json!(load_ms);
        writeln!(out, "{v}")?;
    } else {
        writeln!(out, "{}", g.output)?;
        eprintln!("{}", summary(&g));
    }
    Ok(if g.accepted == Some(false) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

pub(crate) fn load(args: &GenerateArgs) -> Result<Generator> {
    let file = std::fs::File::open(&args.model)
        .with_context(|| format!("cannot open the model `{}`", args.model.display()))?;
    let weights = match args.weights {
        WeightsArg::AsStored => Weights::AsStored,
        WeightsArg::Q8_0 => Weights::Q8_0,
    };
    Generator::load(&mut BufReader::new(file), weights)
        .with_context(|| format!("cannot load the model `{}`", args.model.display()))
}

/// The grammar the arguments name, if any.
fn grammar_spec(args: &GenerateArgs) -> Result<Option<Format>> {
    if let Some(path) = &args.schema {
        let schema: Value = serde_json::from_slice(&read_maybe_gz(path)?)
            .with_context(|| format!("`{}` is not JSON", path.display()))?;
        return Ok(Some(Format::JsonSchema(schema)));
    }
    if let Some(path) = &args.grammar {
        let src = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read `{}`", path.display()))?;
        return match path.extension().and_then(|e| e.to_str()) {
            Some("lark") => Ok(Some(Format::Lark(src))),
            Some("gbnf") => Ok(Some(Format::Gbnf(src))),
            _ => bail!("`{}`: expected a .lark or .gbnf grammar", path.display()),
        };
    }
    Ok(args.regex.clone().map(Format::Regex))
}

/// The prompt text: --prompt through the chat template (or raw), or the
/// conversation of --messages.
fn prompt_text(generator: &Generator, args: &GenerateArgs) -> Result<String> {
    if args.raw {
        return Ok(args.prompt.clone().unwrap_or_default());
    }
    let messages = match (&args.messages, &args.prompt) {
        (Some(path), _) => read_messages(path)?,
        (None, Some(p)) => vec![json!({"role": "user", "content": p})],
        (None, None) => bail!("give --prompt, --messages, --request or --eval"),
    };
    Ok(generator.chat_prompt(&messages, None)?)
}

fn read_messages(path: &Path) -> Result<Vec<Value>> {
    let v: Value = serde_json::from_slice(&read_maybe_gz(path)?)
        .with_context(|| format!("`{}` is not JSON", path.display()))?;
    let list = v.get("messages").cloned().unwrap_or(v);
    match list {
        Value::Array(m) => Ok(m),
        _ => bail!("`{}`: expected a list of messages", path.display()),
    }
}

fn run_request(
    generator: &Generator,
    args: &GenerateArgs,
    path: &Path,
    params: &Params,
) -> Result<ExitCode> {
    let v: Value = serde_json::from_slice(&read_maybe_gz(path)?)
        .with_context(|| format!("`{}` is not JSON", path.display()))?;
    let request = ChatRequest::parse(&v)?;
    let grammar = request.grammar().map(|g| g.compile()).transpose()?;
    let messages = request.prompt_messages();
    let text = generator.chat_prompt(&messages, None)?;
    let prompt = generator.encode_prompt(&text);
    let g = generator.generate(&prompt, grammar.as_ref(), &request.params(params))?;
    let name = args.model.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let mut answer = request.response(&g, name);
    if args.json {
        answer["structgen"] = figures(&g);
    } else {
        eprintln!("{}", summary(&g));
    }
    writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(&answer)?)?;
    Ok(if g.accepted == Some(false) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The `--json` object of one generation.
pub(crate) fn figures(g: &Generation) -> Value {
    json!({
        "output": g.output,
        "prompt_tokens": g.prompt_tokens,
        "generated_tokens": g.generated_tokens,
        "forward_passes": g.forward_passes,
        "forced_tokens": g.forced_tokens,
        "prefill_ms": g.prefill_ms,
        "forward_ms": g.forward_ms,
        "mask_ms": g.mask_ms,
        "forced_ms": g.forced_ms,
        "sample_ms": g.sample_ms,
        "total_ms": g.total_ms,
        "tokens_per_s": g.tokens_per_s,
        "stop_reason": g.stop_reason,
        "accepted": g.accepted,
    })
}

/// The human-readable figures of one generation (printed on stderr).
pub(crate) fn summary(g: &Generation) -> String {
    let sampled = g.generated_tokens - g.forced_tokens;
    let decode_passes = g.forward_passes.saturating_sub(1).max(1);
    let per_pass = (g.forward_ms - g.prefill_ms) / decode_passes as f64;
    let steps = (sampled + 1).max(1) as f64;
    format!(
        "-- {} prompt tokens; {} generated = {} sampled + {} forced ({:.0}%), in {} forward \
         passes ({} without forcing)\n\
         -- prompt {:.0} ms; per decoding pass {:.1} ms; per step: mask {:.3} ms, forced tokens \
         {:.3} ms, sampling {:.3} ms\n\
         -- total {:.0} ms, {:.1} tokens/s after the prompt; mask + forcing {:.2}% of the time; \
         stop: {}{}",
        g.prompt_tokens,
        g.generated_tokens,
        sampled,
        g.forced_tokens,
        100.0 * g.forced_tokens as f64 / g.generated_tokens.max(1) as f64,
        g.forward_passes,
        1 + g.generated_tokens,
        g.prefill_ms,
        per_pass,
        g.mask_ms / steps,
        g.forced_ms / steps,
        g.sample_ms / steps,
        g.total_ms,
        g.tokens_per_s,
        100.0 * (g.mask_ms + g.forced_ms) / g.total_ms.max(1e-9),
        match g.stop_reason {
            generate::StopReason::Stop => "stop token",
            generate::StopReason::MaxTokens => "max tokens",
            _ => "other",
        },
        match g.accepted {
            Some(true) => ", output complete under the grammar",
            Some(false) => ", OUTPUT INCOMPLETE under the grammar",
            None => "",
        },
    )
}
