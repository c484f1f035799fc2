//! `structgen maskbench`: JSON Schemas with valid and invalid instances.
//!
//! For each line `{name, schema, tests: [{valid, data}]}`: the schema is
//! compiled (JSON Schema → grammar → earley engine → matcher) and the first
//! mask computed, timed together as the time to first mask. Each instance is
//! serialized compactly, tokenized, and walked token by token: a token outside
//! the mask rejects it; a valid instance must pass every mask and end
//! accepting, an invalid one must be rejected at some step (or not end
//! accepting). Every mask computation is timed. With `--forced`, each
//! accepted valid instance is also replayed with forced tokens (see
//! `forced.rs`): the summary gains `tokens`, `forced_tokens`,
//! `non_canonical`, `model_calls` and `model_calls_without_coalescing`.
//!
//! Properties come in schema order (the compiler's default, as in
//! llguidance) unless `--any-order`. In schema order a rejected valid
//! instance is walked again on the schema compiled with any order, and
//! `valid_rejected_order_only` counts those it accepts: valid data whose
//! keys simply come in another order. Each record lists where its valid
//! instances were rejected (`valid_rejections`: offset, text around it, the
//! matcher's error if a limit stopped it), its slowest mask
//! (`mask_us_max`) and the lexer's `fuel_refusals`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

use super::common::{LimitArgs, TokenizerSpec, read_maybe_gz};
use structgen::{Grammar, Matcher, Vocabulary};
use structgen_cli::maskbench::{Rejection, Stats, records, walk as walk_tokens};

/// Arguments of `structgen maskbench`.
#[derive(Debug, Args)]
pub(crate) struct MaskbenchArgs {
    /// A JSON-lines file (optionally gzipped) of `{name, schema, tests}`.
    pub(crate) file: PathBuf,
    /// o200k, cl100k, PATH.tiktoken or PATH/tokenizer.json[.gz].
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// Print one JSON record per schema and a summary object last.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also count forced tokens and model calls saved by coalescing.
    #[arg(long)]
    pub(crate) forced: bool,
    /// Compute every mask with the plain trie walk (no precomputed slices).
    #[arg(long)]
    pub(crate) no_slicer: bool,
    /// Take object properties in any order (`PropertyOrder::Any`; the
    /// default is schema order, as in llguidance).
    #[arg(long)]
    pub(crate) any_order: bool,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// Walks one instance: where it stopped (`None` if every token is in its
/// mask and the matcher ends accepting), and the lexer's fuel refusals.
fn walk(
    vocab: &Vocabulary,
    slicer: &Slicing,
    grammar: &Grammar,
    tokens: &[u32],
    mask_us: &mut Vec<f64>,
) -> Result<(Option<Rejection>, u64)> {
    let mut m = Matcher::new(vocab, grammar)?.with_slicer(slicer.0.clone());
    let stopped = walk_tokens(&mut m, tokens, mask_us);
    if let Some(s) = m.slicer_stats() {
        let mut total = slicer.1.get();
        total.masks += s.masks;
        total.masks_sliced += s.masks_sliced;
        total.masks_partial += s.masks_partial;
        slicer.1.set(total);
    }
    Ok((stopped, m.fuel_refusals()))
}

/// The slicer (if on) and its counters summed over every walk.
type Slicing = (Option<Arc<slicer::Slicer>>, std::cell::Cell<structgen::SlicerStats>);

/// Where a valid instance was rejected, for the JSON record: the byte
/// offset of the rejected token (or the end), the text around it, and the
/// matcher's error if any.
fn rejection(tokenizer: &bpe::Tokenizer, text: &str, tokens: &[u32], r: &Rejection) -> Value {
    let offset: usize = tokens[..r.token.min(tokens.len())]
        .iter()
        .map(|&t| tokenizer.token_bytes(t).map_or(0, <[u8]>::len))
        .sum();
    let bytes = text.as_bytes();
    let before = String::from_utf8_lossy(&bytes[offset.saturating_sub(60)..offset]).into_owned();
    let after =
        String::from_utf8_lossy(&bytes[offset..(offset + 20).min(bytes.len())]).into_owned();
    json!({"offset": offset, "before": before, "after": after, "error": r.error})
}

pub(crate) fn run(args: MaskbenchArgs) -> Result<ExitCode> {
    let tokenizer = Arc::new(args.tokenizer.load().context("cannot load the tokenizer")?);
    let mut forced = args.forced.then(super::forced::Tally::default);
    let vocab = super::common::vocabulary(&tokenizer, args.no_slicer)?;
    let slicing: Slicing = (vocab.slicer().cloned(), Default::default());
    let bytes = read_maybe_gz(&args.file)?;
    let mut options = jsonschema::Options::default();
    if args.any_order {
        options.property_order = jsonschema::PropertyOrder::Any;
    }
    let mut config = grammar::Config::default();
    args.limits.apply(&mut config, vec![&mut options])?;
    let parser_limits = config.parser_limits;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut schemas, mut compiled) = (0usize, 0usize);
    let (mut valid, mut valid_rejected, mut invalid, mut invalid_accepted) = (0, 0, 0, 0);
    let mut mask_us = Vec::new();
    let mut ttfm_us = Vec::new();
    let mut fuel_refusals = 0u64;
    // In schema order, each rejected valid instance is walked again on the
    // schema compiled with any property order: the rejections that are only
    // a matter of order (the data is valid; its keys come in another order).
    let any_order = options.clone().with_property_order(jsonschema::PropertyOrder::Any);
    let unsliced: Slicing = (None, Default::default());
    let mut order_only = 0usize;
    for rec in records(&bytes) {
        let rec = rec?;
        schemas += 1;
        let (name, tests) = (rec.name.clone(), &rec.tests);
        let t0 = Instant::now();
        let built = jsonschema::compile(&rec.schema, &options)
            .map_err(|e| (e.kind().name().to_string(), e.to_string()))
            .and_then(|c| {
                c.grammar
                    .to_earley(parser_limits)
                    .map(Grammar::from_earley)
                    .map_err(|e| ("engine".to_string(), e.to_string()))
            })
            .and_then(|g| {
                let mut m =
                    Matcher::new(&vocab, &g).map_err(|e| ("engine".to_string(), e.to_string()))?;
                m.compute_mask().map_err(|e| ("engine".to_string(), e.to_string()))?;
                Ok(g)
            });
        let mut record = json!({"name": name, "tests": tests.len()});
        match built {
            Err((kind, message)) => {
                record["status"] = json!(kind);
                record["error"] = json!(message);
                *kinds.entry(kind).or_default() += 1;
            }
            Ok(g) => {
                let ttfm = t0.elapsed().as_secs_f64() * 1e6;
                ttfm_us.push(ttfm);
                compiled += 1;
                *kinds.entry("compiled".to_string()).or_default() += 1;
                record["status"] = json!("compiled");
                record["ttfm_us"] = json!(ttfm);
                let (mut vr, mut ia) = (0, 0);
                let mut rejections = Vec::new();
                let masks_before = mask_us.len();
                let mut refusals = 0;
                let mut in_any_order: Option<Option<Grammar>> = None;
                for t in tests {
                    let (is_valid, text) = (t.valid, &t.text);
                    let tokens =
                        structgen_cli::tokenizer::encode_document(&tokenizer, text.as_bytes());
                    let (rejected_at, r) = walk(&vocab, &slicing, &g, &tokens, &mut mask_us)?;
                    refusals += r;
                    let accepted = rejected_at.is_none();
                    if let Some(r) = rejected_at.as_ref().filter(|_| is_valid) {
                        let mut why = rejection(&tokenizer, text, &tokens, r);
                        if !args.any_order {
                            let g = in_any_order.get_or_insert_with(|| {
                                let c = jsonschema::compile(&rec.schema, &any_order).ok()?;
                                c.grammar.to_earley(parser_limits).ok().map(Grammar::from_earley)
                            });
                            if let Some(g) = g {
                                let (again, _) =
                                    walk(&vocab, &unsliced, g, &tokens, &mut Vec::new())?;
                                why["accepted_in_any_order"] = json!(again.is_none());
                                order_only += usize::from(again.is_none());
                            }
                        }
                        rejections.push(why);
                    }
                    if let Some(f) = forced.as_mut().filter(|_| is_valid && accepted) {
                        f.replay(&vocab, &g, &tokens)?;
                    }
                    if is_valid {
                        valid += 1;
                        vr += usize::from(!accepted);
                    } else {
                        invalid += 1;
                        ia += usize::from(accepted);
                    }
                }
                valid_rejected += vr;
                invalid_accepted += ia;
                record["valid_rejected"] = json!(vr);
                record["invalid_accepted"] = json!(ia);
                if !rejections.is_empty() {
                    record["valid_rejections"] = json!(rejections);
                }
                let slowest = mask_us[masks_before..].iter().copied().fold(0.0, f64::max);
                record["mask_us_max"] = json!(slowest);
                record["fuel_refusals"] = json!(refusals);
                fuel_refusals += refusals;
            }
        }
        if args.json {
            outln!("{record}");
        }
    }
    let mut summary = json!({
        "schemas": schemas, "compiled": compiled, "status": kinds,
        "valid": valid, "valid_rejected": valid_rejected,
        "valid_rejected_order_only": order_only,
        "invalid": invalid, "invalid_accepted": invalid_accepted,
        "mask_us": Stats::of(mask_us).to_json(), "ttfm_us": Stats::of(ttfm_us).to_json(),
        "fuel_refusals": fuel_refusals,
        "slicer": slicing.0.as_ref().map(|s| json!({
            "build_ms": s.build_time().as_secs_f64() * 1e3,
            "memory_bytes": s.memory_bytes(),
            "masks": slicing.1.get().masks,
            "masks_sliced": slicing.1.get().masks_sliced,
            "masks_partial": slicing.1.get().masks_partial,
        })),
    });
    if let Some(f) = &forced {
        f.add_to(&mut summary);
    }
    if args.json {
        outln!("{summary}");
    } else {
        outln!("schemas: {schemas}, compiled: {compiled}");
        for (k, n) in &kinds {
            outln!("  {k}: {n}");
        }
        outln!(
            "valid: {valid} ({valid_rejected} rejected, {order_only} of them accepted in any \
             property order); invalid: {invalid} ({invalid_accepted} accepted)"
        );
        outln!("mask µs: {}", summary["mask_us"]);
        outln!("time to first mask µs: {}", summary["ttfm_us"]);
        outln!("slicer: {}", summary["slicer"]);
        if forced.is_some() {
            outln!(
                "tokens: {}, forced: {}, non-canonical: {}, model calls: {} (without coalescing {})",
                summary["tokens"],
                summary["forced_tokens"],
                summary["non_canonical"],
                summary["model_calls"],
                summary["model_calls_without_coalescing"]
            );
            outln!("forced: {}", summary["forced"]);
        }
    }
    Ok(if invalid_accepted == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
