//! Helpers shared by the subcommands: tokenizer names, input files,
//! grammar and schema loading with the JSON Schema flags, and standard
//! output that reports a closed pipe or a full disk instead of panicking.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use serde_json::Value;
use structgen::{CompileOptions, Grammar, GrammarSpec};

/// Which tokenizer a subcommand uses (defined beside its loader).
pub(crate) use structgen_cli::tokenizer::TokenizerSpec;

/// Reads a whole file, or standard input when `path` is `None`, byte for byte.
pub(crate) fn read_input(path: Option<&Path>) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    match path {
        Some(path) => {
            bytes = std::fs::read(path)
                .with_context(|| format!("cannot read input file `{}`", path.display()))?;
        }
        None => {
            std::io::stdin().read_to_end(&mut bytes).context("cannot read standard input")?;
        }
    }
    Ok(bytes)
}

/// Reads a file, decompressing it when its name ends in `.gz`.
pub(crate) fn read_maybe_gz(path: &Path) -> Result<Vec<u8>> {
    Ok(structgen_cli::io::read_maybe_gz(path)?)
}

/// The vocabulary of `tokenizer` with its JSON slicer (none with
/// `--no-slicer`), shared by every matcher of the command.
pub(crate) fn vocabulary(
    tokenizer: &std::sync::Arc<bpe::Tokenizer>,
    no_slicer: bool,
) -> Result<structgen::Vocabulary> {
    let mut b = structgen::Vocabulary::builder().tokenizer(tokenizer.clone());
    if no_slicer {
        b = b.slicer(None);
    } else {
        b = b.slicer(Some(slicer::SlicerConfig::json()));
    }
    b.build().context("cannot build the vocabulary")
}

/// The error of a failed write to standard output: a closed pipe (the
/// reader went away, as `head` does) or a full disk. `main` exits quietly
/// on the first, and reports the second.
pub(crate) fn stdout_error(e: std::io::Error) -> anyhow::Error {
    anyhow::Error::new(e).context("cannot write to standard output")
}

/// Whether `err` is a write to a closed pipe (see [`stdout_error`]).
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Resource limits from the command line (see [`structgen_cli::limits`];
/// `structgen limits` lists the keys and their defaults).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct LimitArgs {
    /// A JSON file of limits: `{"lexer": {"max_states": 250000}, …}` or
    /// `{"lexer.max_states": 250000, …}`.
    #[arg(long, value_name = "FILE.json")]
    pub(crate) limits: Option<PathBuf>,
    /// One limit, after the file (repeatable): `--limit lexer.max_states=250000`.
    #[arg(long = "limit", value_name = "SECTION.NAME=N", value_parser = parse_limit)]
    pub(crate) limit: Vec<(String, u64)>,
}

fn parse_limit(s: &str) -> Result<(String, u64), String> {
    structgen_cli::limits::parse_assignment(s).map_err(|e| e.to_string())
}

impl LimitArgs {
    /// Sets the file's limits, then the flags', on `grammar` and `schemas`.
    pub(crate) fn apply(
        &self,
        grammar: &mut grammar::Config,
        schemas: Vec<&mut jsonschema::Options>,
    ) -> Result<()> {
        let mut t = structgen_cli::limits::Targets { grammar, schemas };
        if let Some(path) = &self.limits {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read limits file `{}`", path.display()))?;
            let name = path.display().to_string();
            t.set_all(&structgen_cli::limits::parse_file(&text, &name)?)
                .with_context(|| format!("in limits file `{name}`"))?;
        }
        t.set_all(&self.limit)?;
        Ok(())
    }
}

/// `structgen limits`: every limit key and its default, one a line.
pub(crate) fn print_limits() -> Result<std::process::ExitCode> {
    let g = grammar::Config::default();
    let s = jsonschema::Options::default();
    for (key, value) in structgen_cli::limits::table(&g, &s) {
        outln!("{key:<28} {value}");
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `--whitespace` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WhitespaceArg {
    /// No whitespace between JSON tokens: `{"a":1}`.
    Compact,
    /// A few spaces or tabs, at most one line break and an indentation of
    /// at most 64, around each `{ } [ ] , :` (bounded: a sampler cannot
    /// loop on whitespace).
    Bounded,
    /// Any JSON whitespace (llguidance's default; what a JSON validator
    /// accepts).
    Unbounded,
}

/// How JSON Schemas are compiled (`--schema FILE.json`, a `.json`
/// `--grammar`, and the schemas Lark's `%json` embeds): the flags shared
/// by every subcommand that takes a grammar. A flag left out keeps the
/// subcommand's default; a schema's own top-level `"x-guidance"` settings
/// (llguidance's convention, plus `"property_order": "any"|"schema"`) have
/// the last word.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SchemaArgs {
    /// A JSON Schema file to compile (instead of --grammar).
    #[arg(long, value_name = "FILE.json")]
    pub(crate) schema: Option<PathBuf>,
    /// Object properties in any order (the default: the order the schema
    /// lists them in, as llguidance).
    #[arg(long)]
    pub(crate) any_order: bool,
    /// JSON whitespace between tokens.
    #[arg(long, value_enum)]
    pub(crate) whitespace: Option<WhitespaceArg>,
    /// A regex (derivre syntax) for the whitespace allowed around each
    /// `{ } [ ] , :`, instead of --whitespace.
    #[arg(long, value_name = "REGEX", conflicts_with = "whitespace")]
    pub(crate) whitespace_pattern: Option<String>,
    /// A regex between array items and between object members [default: ,].
    #[arg(long, value_name = "REGEX")]
    pub(crate) item_separator: Option<String>,
    /// A regex between an object key and its value [default: :].
    #[arg(long, value_name = "REGEX")]
    pub(crate) key_separator: Option<String>,
    /// The most characters of a string without maxLength (a stricter
    /// grammar; by default unbounded, as JSON Schema says).
    #[arg(long, value_name = "N")]
    pub(crate) max_string_length: Option<usize>,
    /// Ignore unsupported keywords and formats (each one a warning on
    /// standard error) instead of refusing the schema.
    #[arg(long)]
    pub(crate) lenient: bool,
    /// A directory of JSON Schema documents that `$ref`s may name
    /// (repeatable): every `.json` file below it is available under its
    /// path relative to DIR (`base.json`, `defs/a.json`, resolved against
    /// the compiled schema's base URI like a relative `$ref`) and under
    /// its own top-level `$id`. Nothing is fetched from the network.
    #[arg(long, value_name = "DIR")]
    pub(crate) ref_dir: Vec<PathBuf>,
    /// A JSON Schema document that `$ref`s may name (repeatable): available
    /// under its file name and its top-level `$id`.
    #[arg(long = "ref", value_name = "FILE.json")]
    pub(crate) refs: Vec<PathBuf>,
}

impl SchemaArgs {
    /// The documents of `--ref-dir` and `--ref`, read from disk; `None`
    /// when neither was given.
    pub(crate) fn documents(&self) -> Result<Option<jsonschema::Documents>> {
        if self.ref_dir.is_empty() && self.refs.is_empty() {
            return Ok(None);
        }
        let mut docs = jsonschema::Documents::new();
        let read = |path: &Path| -> Result<Value> {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read referenced document `{}`", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("referenced document `{}` is not JSON", path.display()))
        };
        for dir in &self.ref_dir {
            let mut files = Vec::new();
            json_files(dir, &mut files)
                .with_context(|| format!("cannot list --ref-dir `{}`", dir.display()))?;
            files.sort();
            for path in files {
                let key = path.strip_prefix(dir).unwrap_or(&path);
                let key: Vec<String> = key
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                docs.insert(&key.join("/"), read(&path)?);
            }
        }
        for path in &self.refs {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.with_context(|| format!("--ref `{}` names no file", path.display()))?;
            docs.insert(&name, read(path)?);
        }
        Ok(Some(docs))
    }

    /// `base` with the flags that were given.
    pub(crate) fn apply(&self, base: jsonschema::Options) -> jsonschema::Options {
        let mut o = base;
        if self.any_order {
            o.property_order = jsonschema::PropertyOrder::Any;
        }
        match self.whitespace {
            Some(WhitespaceArg::Compact) => o.whitespace = jsonschema::Whitespace::Compact,
            Some(WhitespaceArg::Bounded) => o.whitespace = jsonschema::Whitespace::bounded(),
            Some(WhitespaceArg::Unbounded) => o.whitespace = jsonschema::Whitespace::unbounded(),
            None => {}
        }
        if let Some(p) = &self.whitespace_pattern {
            o.whitespace = jsonschema::Whitespace::Pattern(p.clone());
        }
        if let Some(s) = &self.item_separator {
            o.item_separator = s.clone();
        }
        if let Some(s) = &self.key_separator {
            o.key_separator = s.clone();
        }
        if self.max_string_length.is_some() {
            o.max_string_length = self.max_string_length;
        }
        if self.lenient {
            o.lenient = true;
        }
        o
    }
}

/// Appends the `.json` files below `dir` (depth first) to `out`.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            json_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// The layouts a subcommand starts from before its flags: for schemas
/// (`--schema`, `.json` grammars) and for Lark's `%json`.
#[derive(Debug, Clone)]
pub(crate) struct Defaults {
    pub(crate) schema: jsonschema::Options,
    pub(crate) lark_json: jsonschema::Options,
}

impl Default for Defaults {
    /// The libraries' own defaults: bounded whitespace for schemas
    /// ([`jsonschema::Options::default`]), llguidance's for `%json`.
    fn default() -> Defaults {
        Defaults {
            schema: jsonschema::Options::default(),
            lark_json: jsonschema::Options::llguidance_compat(),
        }
    }
}

/// A compiled grammar and where it came from.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) grammar: Grammar,
    /// The schema and the options it compiled with (for schemas only).
    pub(crate) schema: Option<(Value, jsonschema::Options)>,
    /// The file, for messages.
    pub(crate) name: String,
    /// The time `Grammar::compile` took (reading the file excluded).
    pub(crate) compile_time: Duration,
}

/// Compiles the grammar a subcommand was given: `--grammar` (by its
/// extension: `.lark`, `.gbnf`, `.regex`, or `.json` for a JSON Schema) or
/// `--schema`, with the schema flags over `defaults`. Compile warnings
/// (lenient mode) go to standard error.
pub(crate) fn load_grammar(
    grammar: Option<&Path>,
    schema: &SchemaArgs,
    limits: &LimitArgs,
    defaults: &Defaults,
) -> Result<Loaded> {
    let (path, is_schema) = match (grammar, &schema.schema) {
        (Some(_), Some(_)) => bail!("give either --grammar or --schema, not both"),
        (Some(g), None) => (g, g.extension().is_some_and(|e| e == "json")),
        (None, Some(s)) => (s.as_path(), true),
        (None, None) => bail!("no grammar: give --grammar FILE or --schema FILE.json"),
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read grammar file `{}`", path.display()))?;
    let name = path.display().to_string();
    let at = |e: structgen::Error| anyhow::anyhow!("{name}:{e}");
    let mut options = CompileOptions::default();
    options.grammar.json = schema.apply(defaults.lark_json.clone());
    let mut schema_options = schema.apply(defaults.schema.clone());
    if let Some(docs) = schema.documents()? {
        schema_options = schema_options.with_documents(docs.clone());
        options.grammar.json = options.grammar.json.clone().with_documents(docs);
    }
    let mut lark_json = options.grammar.json.clone();
    limits.apply(&mut options.grammar, vec![&mut schema_options, &mut lark_json])?;
    options.grammar.json = lark_json;
    let (spec, kept) = if is_schema {
        let GrammarSpec::JsonSchema { schema: value, .. } =
            GrammarSpec::json_schema_str(&text).map_err(at)?
        else {
            bail!("{name}: not read as a JSON Schema");
        };
        let (value, opts) = grammar::x_guidance::split(&value, schema_options.clone())
            .map_err(|e| anyhow::anyhow!("{name}: \"{}\": {}", e.pointer(), e.message()))?;
        let spec = GrammarSpec::JsonSchema { schema: value.clone(), options: opts.clone() };
        (spec, Some((value, opts)))
    } else {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let spec = match ext {
            "regex" => GrammarSpec::Regex(text.trim_end_matches(['\n', '\r']).to_owned()),
            "lark" => GrammarSpec::Lark(text),
            "gbnf" => GrammarSpec::Gbnf(text),
            _ => bail!(
                "{name}: unknown grammar kind `.{ext}` (expected .lark, .gbnf, .regex, or .json \
                 for a JSON Schema; or give a schema with --schema)"
            ),
        };
        (spec, None)
    };
    let started = Instant::now();
    let grammar = Grammar::compile(&spec, &options).map_err(at)?;
    let compile_time = started.elapsed();
    for w in grammar.warnings() {
        eprintln!("warning: {name}: {w}");
    }
    Ok(Loaded { grammar, schema: kept, name, compile_time })
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

/// Compiles a structure file (`--structure`): a structural tag in
/// XGrammar's format, or a tool-call preset request `{"syntax": NAME,
/// "tools": [...], "tool_choice": ..., "reasoning": bool,
/// "parallel_tool_calls": bool}` (OpenAI's `tools` and `tool_choice`;
/// syntax names as `ToolSyntax::from_name` reads them). A preset matches
/// its markers as `tok`'s special tokens where `tok` has them.
pub(crate) fn load_structure(path: &Path, tok: &bpe::Tokenizer) -> Result<Loaded> {
    use structgen::structural_tag::presets;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read structure file `{}`", path.display()))?;
    let name = path.display().to_string();
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{name}: not JSON"))?;
    let spec = if v.get("type").is_some() {
        GrammarSpec::StructuralTag(v)
    } else {
        let syntax_name = v.get("syntax").and_then(Value::as_str).unwrap_or("");
        let Some(syntax) = presets::ToolSyntax::from_name(syntax_name) else {
            bail!(
                "{name}: expected a structural tag (`\"type\": \"structural_tag\"`) or a preset \
                 request with a known `syntax` (hermes, llama3_json, llama3_python_tag, mistral, \
                 deepseek)"
            );
        };
        let tools = presets::tools_from_openai(v.get("tools").unwrap_or(&serde_json::json!([])))
            .map_err(|e| anyhow::anyhow!("{name}: tools{e}"))?;
        let choice =
            presets::tool_choice_from_openai(v.get("tool_choice").unwrap_or(&"auto".into()))
                .map_err(|e| anyhow::anyhow!("{name}: tool_choice{e}"))?;
        let flag = |k: &str, d: bool| v.get(k).and_then(Value::as_bool).unwrap_or(d);
        let options = presets::PresetOptions::default()
            .with_reasoning(flag("reasoning", false))
            .with_parallel_tool_calls(flag("parallel_tool_calls", true))
            .with_special_tokens(tok.special_tokens().map(|(_, name)| name));
        let tag = presets::structural_tag(syntax, &tools, &choice, &options)
            .map_err(|e| anyhow::anyhow!("{name}:{e}"))?;
        GrammarSpec::StructuralTag(tag.to_json())
    };
    let started = Instant::now();
    let grammar = Grammar::compile(&spec, &CompileOptions::default())
        .map_err(|e| anyhow::anyhow!("{name}:{e}"))?;
    Ok(Loaded { grammar, schema: None, name, compile_time: started.elapsed() })
}
