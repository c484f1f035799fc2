//! `structgen validate`: check JSON documents against a JSON Schema (or a
//! grammar) token by token, answering like a JSON validator: exit 0 when
//! every document is accepted, 1 when one is not, with where and why (see
//! [`structgen_cli::validate`]).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use structgen_cli::validate::{Checker, Reason, Rejection, Verdict};

use super::common::{
    Defaults, LimitArgs, SchemaArgs, TokenizerSpec, WhitespaceArg, load_grammar, read_input,
};

/// Arguments of `structgen validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// The grammar instead of a schema: a .lark, .gbnf, .regex or .json
    /// (JSON Schema) file.
    #[arg(long)]
    pub(crate) grammar: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    /// The tokenizer the documents are walked with: o200k, cl100k,
    /// PATH.tiktoken, PATH/tokenizer.json[.gz] or a directory holding
    /// tokenizer.json.
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// Walk each document exactly as it is, without setting aside the
    /// whitespace before and after its value.
    #[arg(long)]
    pub(crate) exact: bool,
    /// Print one JSON object per document instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// The most schemas compiled to find the keyword that rejected a
    /// document.
    #[arg(long, default_value_t = 500, value_name = "N")]
    pub(crate) explain_limit: usize,
    /// The most seconds spent looking for that keyword, per rejected
    /// document (each try compiles a changed schema).
    #[arg(long, default_value_t = 5.0, value_name = "SECS", value_parser = seconds)]
    pub(crate) explain_time: f64,
    /// The documents (standard input when none is given).
    pub(crate) documents: Vec<PathBuf>,
}

pub(crate) fn run(args: ValidateArgs) -> Result<ExitCode> {
    // A validator accepts any JSON whitespace unless told otherwise.
    let defaults = Defaults {
        schema: SchemaArgs { whitespace: Some(WhitespaceArg::Unbounded), ..SchemaArgs::default() }
            .apply(jsonschema::Options::default()),
        ..Defaults::default()
    };
    let loaded = load_grammar(args.grammar.as_deref(), &args.schema, &args.limits, &defaults)?;
    let tok = Arc::new(args.tokenizer.load()?);
    // Masks without the slicer: each document is walked once.
    let vocab = super::common::vocabulary(&tok, true)?;
    let schema = loaded.schema.as_ref().map(|(s, o)| (s, o));
    let mut checker = Checker::new(&vocab, &tok, &loaded.grammar, schema);
    checker.trim = !args.exact;
    checker.explain_limit = args.explain_limit;
    checker.explain_time = std::time::Duration::from_secs_f64(args.explain_time);
    let docs: Vec<Option<PathBuf>> = if args.documents.is_empty() {
        vec![None]
    } else {
        args.documents.into_iter().map(Some).collect()
    };
    let mut all_valid = true;
    for path in &docs {
        let name = path.as_ref().map_or("<stdin>".to_string(), |p| p.display().to_string());
        let bytes = read_input(path.as_deref())?;
        let verdict = checker.check(&bytes)?;
        all_valid &= matches!(verdict, Verdict::Accepted { .. });
        if args.json {
            outln!("{}", record(&name, &verdict));
        } else {
            match &verdict {
                Verdict::Accepted { tokens } => outln!("{name}: valid ({tokens} tokens)"),
                Verdict::Rejected(r) => outln!("{}", describe(&name, &loaded.name, r)),
            }
        }
    }
    Ok(if all_valid { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Quoted for a message: JSON string syntax, so whitespace and control
/// characters show.
fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// A rejection as text: the place, then indented lines.
fn describe(name: &str, grammar: &str, r: &Rejection) -> String {
    let mut out = format!("{name}:{}:{}: invalid", r.line, r.column);
    match &r.token {
        Some(t) => out.push_str(&format!(
            " at byte {} (token {} {} from byte {})",
            r.offset,
            t.id,
            quoted(&t.text),
            t.offset
        )),
        None => out
            .push_str(&format!(": the text ends at byte {} before the grammar accepts", r.offset)),
    }
    if let Some(p) = &r.instance_pointer {
        out.push_str(&format!("\n  instance: {}", if p.is_empty() { "(the root)" } else { p }));
    }
    match &r.reason {
        Some(Reason::Keywords(k)) => {
            let first = &k[0];
            out.push_str(&format!(
                "\n  schema: `{}` at {}",
                first.keyword,
                if first.pointer.is_empty() { "(the root)" } else { &first.pointer }
            ));
            if k.len() > 1 {
                let more: Vec<String> = k[1..]
                    .iter()
                    .take(3)
                    .map(|k| format!("`{}` at {:?}", k.keyword, k.pointer))
                    .collect();
                out.push_str(&format!(" (also, removing any one of: {})", more.join(", ")));
            }
        }
        Some(Reason::NotJson) => out.push_str(
            "\n  not JSON in this layout (a syntax error, or whitespace or separators the \
             layout does not allow: see --whitespace, --item-separator, --key-separator)",
        ),
        Some(Reason::PropertyOrder) => out.push_str(
            "\n  the properties come in another order than the schema lists them; with \
             --any-order the document is valid",
        ),
        Some(Reason::Unknown { tried, cut_short }) => out.push_str(&if *cut_short {
            format!(
                "\n  schema: the keyword to blame was not found in {tried} tries \
                 (--explain-limit, --explain-time)"
            )
        } else {
            "\n  schema: no single keyword is to blame".to_string()
        }),
        Some(_) => {}
        None => out.push_str(&format!("\n  grammar: {grammar}")),
    }
    if !r.in_progress.is_empty() {
        out.push_str(&format!("\n  inside: {}", r.in_progress.join(", ")));
    }
    if !r.expected.is_empty() {
        out.push_str(&format!("\n  expected: {}", r.expected.join(", ")));
    }
    if !r.allowed.is_empty() {
        let a: Vec<String> = r.allowed.iter().map(|t| quoted(t)).collect();
        out.push_str(&format!("\n  allowed tokens (a few): {}", a.join(" ")));
    }
    if let Some(e) = &r.error {
        out.push_str(&format!("\n  stopped by a limit: {e}"));
    }
    out
}

/// A verdict as one JSON object.
fn record(name: &str, v: &Verdict) -> Value {
    match v {
        Verdict::Accepted { tokens } => json!({"document": name, "valid": true, "tokens": tokens}),
        Verdict::Rejected(r) => {
            let reason = match &r.reason {
                None => Value::Null,
                Some(Reason::NotJson) => json!({"kind": "not_json"}),
                Some(Reason::PropertyOrder) => json!({"kind": "property_order"}),
                Some(Reason::Keywords(k)) => json!({"kind": "keywords", "keywords":
                    k.iter().map(|k| json!({"keyword": k.keyword, "pointer": k.pointer})).collect::<Vec<_>>()}),
                Some(Reason::Unknown { tried, cut_short }) => {
                    json!({"kind": "unknown", "tried": tried, "cut_short": cut_short})
                }
                Some(_) => json!({"kind": "other"}),
            };
            json!({
                "document": name, "valid": false, "offset": r.offset, "line": r.line,
                "column": r.column, "at_end": r.at_end,
                "token": r.token.as_ref().map(|t| json!({"index": t.index, "id": t.id, "text": t.text, "offset": t.offset})),
                "instance_pointer": r.instance_pointer, "reason": reason,
                "in_progress": r.in_progress, "expected": r.expected, "allowed": r.allowed,
                "error": r.error,
            })
        }
    }
}

/// A number of seconds: finite, at least 0, and at most a day (what
/// `Duration::from_secs_f64` takes without panicking, with room to spare).
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=86_400.0).contains(&x) => Ok(x),
        Ok(_) => Err(format!("{s}: give a number of seconds from 0 to 86400")),
        Err(e) => Err(format!("{s}: {e}")),
    }
}
