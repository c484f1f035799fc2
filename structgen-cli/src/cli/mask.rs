//! `structgen mask`: walk an input through a grammar, checking every mask.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use toktrie::TokenId;

use super::common::{TokenizerSpec, read_maybe_gz};
use structgen::{CompileOptions, Grammar, GrammarSpec, Matcher};

/// Arguments of `structgen mask`.
#[derive(Debug, Args)]
pub(crate) struct MaskArgs {
    /// o200k, cl100k, PATH.tiktoken or PATH/tokenizer.json[.gz].
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The grammar: a .lark, .gbnf, .regex or .json (JSON Schema) file.
    #[arg(long, required_unless_present = "structure", conflicts_with = "structure")]
    pub(crate) grammar: Option<PathBuf>,
    /// A structural tag (`{"type": "structural_tag", "format": …}`) or a
    /// tool-call preset request (`{"syntax": "hermes", "tools": […],
    /// "tool_choice": "auto", "reasoning": true}`), as a JSON file.
    #[arg(long)]
    pub(crate) structure: Option<PathBuf>,
    /// The text to walk through the grammar.
    #[arg(long)]
    pub(crate) input: PathBuf,
    /// Print the popcount and time of every mask.
    #[arg(long)]
    pub(crate) verbose: bool,
    /// Compute every mask with the plain trie walk (no precomputed slices).
    #[arg(long)]
    pub(crate) no_slicer: bool,
}

/// Compiles a grammar file, choosing the front-end by its extension.
pub(crate) fn load_grammar(path: &Path) -> Result<Grammar> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read grammar file `{}`", path.display()))?;
    let name = path.display();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let spec = match ext {
        "regex" => GrammarSpec::Regex(text.trim_end_matches(['\n', '\r']).to_owned()),
        "lark" => GrammarSpec::Lark(text),
        "gbnf" => GrammarSpec::Gbnf(text),
        "json" => GrammarSpec::json_schema_str(&text).map_err(|e| anyhow::anyhow!("{name}:{e}"))?,
        _ => bail!(
            "{name}: unknown grammar kind `.{ext}` (expected .lark, .gbnf, .regex or .json \
             for a JSON Schema)"
        ),
    };
    Grammar::compile(&spec, &CompileOptions::default()).map_err(|e| anyhow::anyhow!("{name}:{e}"))
}

/// Compiles a structure file: a structural tag in XGrammar's format, or a
/// preset request `{"syntax": NAME, "tools": [...], "tool_choice": ...,
/// "reasoning": bool, "parallel_tool_calls": bool}` (OpenAI's `tools` and
/// `tool_choice`; syntax names as `ToolSyntax::from_name` reads them).
pub(crate) fn load_structure(path: &Path) -> Result<Grammar> {
    use structgen::structural_tag::presets;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read structure file `{}`", path.display()))?;
    let name = path.display();
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{name}: not JSON"))?;
    if v.get("type").is_some() {
        let spec = GrammarSpec::StructuralTag(v);
        return Grammar::compile(&spec, &CompileOptions::default())
            .map_err(|e| anyhow::anyhow!("{name}:{e}"));
    }
    let syntax_name = v.get("syntax").and_then(|s| s.as_str()).unwrap_or("");
    let Some(syntax) = presets::ToolSyntax::from_name(syntax_name) else {
        bail!(
            "{name}: expected a structural tag (`\"type\": \"structural_tag\"`) or a preset request with a known `syntax` (hermes, llama3_json, llama3_python_tag, mistral, deepseek)"
        );
    };
    let tools = presets::tools_from_openai(v.get("tools").unwrap_or(&serde_json::json!([])))
        .map_err(|e| anyhow::anyhow!("{name}: tools{e}"))?;
    let choice = presets::tool_choice_from_openai(v.get("tool_choice").unwrap_or(&"auto".into()))
        .map_err(|e| anyhow::anyhow!("{name}: tool_choice{e}"))?;
    let flag = |k: &str, d: bool| v.get(k).and_then(serde_json::Value::as_bool).unwrap_or(d);
    let options = presets::PresetOptions::default()
        .with_reasoning(flag("reasoning", false))
        .with_parallel_tool_calls(flag("parallel_tool_calls", true));
    let tag = presets::structural_tag(syntax, &tools, &choice, &options)
        .map_err(|e| anyhow::anyhow!("{name}:{e}"))?;
    let spec = GrammarSpec::StructuralTag(tag.to_json());
    Grammar::compile(&spec, &CompileOptions::default()).map_err(|e| anyhow::anyhow!("{name}:{e}"))
}

/// The grammar of `--grammar` or `--structure` (`None` when neither).
pub(crate) fn load_either(
    grammar: Option<&Path>,
    structure: Option<&Path>,
) -> Result<Option<Grammar>> {
    match (grammar, structure) {
        (_, Some(s)) => load_structure(s).map(Some),
        (Some(g), None) => load_grammar(g).map(Some),
        (None, None) => Ok(None),
    }
}

/// Per-mask times in microseconds: mean, p50, p99, max.
pub(crate) fn summary(times: &mut [f64]) -> String {
    if times.is_empty() {
        return "no masks".to_string();
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    format!(
        "{} masks: mean {mean:.1} µs, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        times.len(),
        pct(0.5),
        pct(0.99),
        times[times.len() - 1]
    )
}

pub(crate) fn run(args: MaskArgs) -> Result<ExitCode> {
    let tok = std::sync::Arc::new(args.tokenizer.load()?);
    let Some(grammar) = load_either(args.grammar.as_deref(), args.structure.as_deref())? else {
        bail!("give --grammar or --structure");
    };
    let input = read_maybe_gz(&args.input)?;
    let tokens: Vec<TokenId> = tok.encode_bytes(&input).into_iter().map(TokenId).collect();
    let vocab = super::common::vocabulary(&tok, args.no_slicer)?;
    let mut m = Matcher::new(&vocab, &grammar)?;
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
            let shown = if last {
                "(end)".to_string()
            } else {
                let bytes = tok.token_bytes(t.0).unwrap_or(b"<special>");
                format!("{} {:?}", t.0, String::from_utf8_lossy(bytes))
            };
            println!("step {step}: {popcount} allowed, {micros:.1} µs; next {shown}");
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
    println!("{}", summary(&mut times));
    if let Some(s) = m.slicer_stats() {
        println!("slicer: {} of {} masks answered in part by slices", s.masks_sliced, s.masks);
    }
    if let Some(step) = rejected {
        let consumed = tok.decode(&tokens[..step].iter().map(|t| t.0).collect::<Vec<_>>());
        let consumed = consumed.map(|b| b.len()).unwrap_or(0);
        println!(
            "rejected: token {} (step {step}, byte offset {consumed}) is not allowed",
            tokens[step].0
        );
        return Ok(ExitCode::from(1));
    }
    if m.is_accepting() {
        println!("accepted: {} tokens", tokens.len());
        Ok(ExitCode::SUCCESS)
    } else {
        println!("rejected: the input is a proper prefix; the grammar does not accept at its end");
        Ok(ExitCode::from(1))
    }
}
