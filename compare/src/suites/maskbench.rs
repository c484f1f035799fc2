//! `cargo xtask bench maskbench [FILE] [--limit N] [--stride K] [--keyword K]`: MaskBench
//! JSON Schemas on our engine and llguidance 1.9.1, side by side, on the
//! Llama-3 tokenizer.
//!
//! Every schema of the file (the dev split `../shared/data/maskbench/dev.jsonl.gz`
//! by default; any file of lines `{name, schema, tests: [{valid, data}]}`,
//! optionally gzipped) is compiled by each engine configuration in
//! [`configs`]: ours with llguidance-compatible options, llguidance with its
//! default slicer and with slicing off. The time to first mask (compile +
//! matcher + first mask) is measured per schema. Each instance is serialized
//! compactly, tokenized, and walked token by token on every configuration
//! that compiled the schema: each mask is timed, a token outside its mask
//! rejects the instance, and after the last token the mask is computed once
//! more and the matcher must be accepting. A valid instance must be accepted,
//! an invalid one rejected. On valid instances, each of our masks is
//! compared bit for bit with llguidance's (slicer off), as a count of
//! mismatched steps (the differential test `compare/tests/it/maskbench.rs`
//! shows the tokens).
//!
//! Timing ratios compare the same work: time to first mask over the schemas
//! every configuration compiles, mask times over the steps every
//! configuration computed; each engine's own steps (every step it computed)
//! are summed up in a note, which is what `--keyword uniqueItems` (only the
//! schemas using that keyword, which llguidance refuses) reports on.
//! Per-schema outcomes go to
//! `target/bench/maskbench-schemas.jsonl` (errors, rejected valid instances),
//! the table to `target/bench/maskbench.{md,json}`.

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use structgen::{Grammar, Vocabulary};
use structgen::{Matcher, MatcherError};
use toktrie::{TokenId, TokenSet};

use compare::report::Report;

/// Builds our matcher for a compiled grammar (so that a configuration can
/// add, say, a slicer).
type MatcherBuilder = Box<dyn Fn(&Vocabulary, &Grammar) -> Result<Matcher, MatcherError>>;

/// One engine configuration: one column of the comparison.
enum Config {
    /// Our JSON Schema compiler, earley engine and matcher; `compare_masks`
    /// when the options keep llguidance's language (its masks must be equal).
    Ours {
        name: &'static str,
        /// Boxed: the options are several times larger than llguidance's factory.
        options: Box<jsonschema::Options>,
        matcher: MatcherBuilder,
        compare_masks: bool,
    },
    /// llguidance with this parser factory (which fixes its slices).
    Llg { name: &'static str, factory: llguidance::ParserFactory },
}

impl Config {
    fn name(&self) -> &'static str {
        match self {
            Config::Ours { name, .. } | Config::Llg { name, .. } => name,
        }
    }

    fn is_ours(&self) -> bool {
        matches!(self, Config::Ours { .. })
    }

    fn compares_masks(&self) -> bool {
        matches!(self, Config::Ours { compare_masks: true, .. })
    }
}

/// The configurations measured, ours first. A new configuration of ours
/// (a slicer, another whitespace setting) is one more entry here.
fn configs(peer_env: &peer_toktrie::TokEnv, plain: Vocabulary) -> Result<Vec<Config>> {
    // The shared vocabulary holds the JSON slicer; `plain` is the same
    // tokenizer without it, so that no-slicer matchers are plain from
    // their first mask.
    let with_slicer = || -> MatcherBuilder { Box::new(Matcher::new) };
    let llg = |name, slices: &[String]| -> Result<Config> {
        Ok(Config::Llg { name, factory: compare::peer::llg_factory(peer_env, slices)? })
    };
    Ok(vec![
        Config::Ours {
            name: "ours",
            options: Box::new(jsonschema::Options::llguidance_compat()),
            matcher: Box::new(move |_, g| Matcher::new(&plain, g)),
            compare_masks: true,
        },
        Config::Ours {
            name: "ours slicer",
            options: Box::new(jsonschema::Options::llguidance_compat()),
            matcher: with_slicer(),
            compare_masks: true,
        },
        // Any property order (objects are permutation phrases), with the
        // slicer: more valid instances accepted, in a language that
        // differs from llguidance's (no mask comparison).
        Config::Ours {
            name: "ours any order",
            options: Box::new(
                jsonschema::Options::llguidance_compat()
                    .with_property_order(jsonschema::PropertyOrder::Any),
            ),
            matcher: with_slicer(),
            compare_masks: false,
        },
        llg("llg", &llguidance::earley::SlicedBiasComputer::general_slices())?,
        llg("llg no slicer", &[])?,
    ])
}

/// A schema compiled by one configuration, ready to start instances.
enum Compiled {
    Ours(Grammar),
    /// A matcher that has computed no mask yet (so its mask cache is cold).
    Llg(Box<llguidance::Matcher>),
}

/// One instance being walked on one configuration.
enum Session {
    Ours(Box<Matcher>),
    Llg(Box<llguidance::Matcher>),
}

/// A computed mask.
enum Mask<'a> {
    Ours(&'a TokenSet),
    Llg(peer_toktrie::SimpleVob),
}

impl Mask<'_> {
    fn allows(&self, t: u32) -> bool {
        match self {
            Mask::Ours(m) => m.contains(TokenId(t)),
            Mask::Llg(m) => (t as usize) < m.len() && m.is_allowed(t),
        }
    }

    /// The first `n` bits as `u64` words (bit `i` of word `i / 64` is id `i`).
    fn words(&self, n: usize, out: &mut Vec<u64>) {
        out.clear();
        let k = n.div_ceil(64);
        match self {
            Mask::Ours(m) => out.extend_from_slice(&m.as_words()[..k]),
            Mask::Llg(m) => {
                let s = m.as_slice();
                let w = |i: usize| s.get(i).copied().unwrap_or(0) as u64;
                out.extend((0..k).map(|i| w(2 * i) | w(2 * i + 1) << 32));
            }
        }
        if !n.is_multiple_of(64)
            && let Some(last) = out.last_mut()
        {
            *last &= (1u64 << (n % 64)) - 1;
        }
    }
}

fn compile(config: &Config, vocab: &Vocabulary, schema: &Value) -> Result<(Compiled, f64), String> {
    match config {
        Config::Ours { options, matcher, .. } => {
            let t0 = Instant::now();
            let built = catch_unwind(AssertUnwindSafe(|| {
                let c = jsonschema::compile(schema, options).map_err(|e| e.to_string())?;
                let g =
                    c.grammar.to_earley(earley::Limits::default()).map_err(|e| e.to_string())?;
                let g = Grammar::from_earley(g);
                let mut m = matcher(vocab, &g).map_err(|e| e.to_string())?;
                m.compute_mask().map_err(|e| e.to_string())?;
                Ok(g)
            }))
            .unwrap_or_else(|_| Err("panic".to_string()))?;
            Ok((Compiled::Ours(built), t0.elapsed().as_secs_f64() * 1e6))
        }
        Config::Llg { factory, .. } => {
            let grammar = llguidance::api::TopLevelGrammar::from_json_schema(schema.clone());
            let t0 = Instant::now();
            let mut m = llguidance::Matcher::new(factory.create_parser(grammar));
            let t_create = t0.elapsed();
            if let Some(e) = m.get_error() {
                return Err(e);
            }
            // The template keeps a cold mask cache; the clone is not timed.
            let template = m.deep_clone();
            let t1 = Instant::now();
            m.compute_mask().map_err(|e| e.to_string())?;
            let ttfm = (t_create + t1.elapsed()).as_secs_f64() * 1e6;
            Ok((Compiled::Llg(Box::new(template)), ttfm))
        }
    }
}

impl Session {
    fn start(config: &Config, compiled: &Compiled, vocab: &Vocabulary) -> Option<Session> {
        match (config, compiled) {
            (Config::Ours { matcher, .. }, Compiled::Ours(g)) => {
                matcher(vocab, g).ok().map(|m| Session::Ours(Box::new(m)))
            }
            (_, Compiled::Llg(m)) => Some(Session::Llg(Box::new(m.deep_clone()))),
            _ => None,
        }
    }

    fn mask(&mut self) -> Option<Mask<'_>> {
        match self {
            Session::Ours(m) => m.compute_mask().ok().map(Mask::Ours),
            Session::Llg(m) => m.compute_mask_or_eos().ok().map(Mask::Llg),
        }
    }

    fn consume(&mut self, t: u32) -> bool {
        match self {
            Session::Ours(m) => m.consume_token(TokenId(t)).is_ok(),
            Session::Llg(m) => m.consume_token(t).is_ok(),
        }
    }

    fn slicer_stats(&self) -> Option<structgen::SlicerStats> {
        match self {
            Session::Ours(m) => m.slicer_stats(),
            Session::Llg(_) => None,
        }
    }

    fn accepting(&mut self) -> bool {
        match self {
            Session::Ours(m) => m.is_accepting(),
            Session::Llg(m) => m.is_accepting().unwrap_or(false),
        }
    }
}

/// What one configuration did over the whole file.
#[derive(Default)]
struct Tally {
    compiled: usize,
    valid: usize,
    valid_rejected: usize,
    /// Valid instances rejected in schemas that every configuration compiled.
    valid_rejected_common: usize,
    schemas_with_valid_rejected: usize,
    invalid: usize,
    invalid_accepted: usize,
    /// Per schema, time to first mask in µs (NaN when not compiled).
    ttfm_us: Vec<f64>,
    /// Per step of every walk, mask time in µs (NaN when not computed).
    mask_us: Vec<f32>,
}

/// Mean and percentiles.
#[derive(Clone, Copy)]
struct Stats {
    n: usize,
    mean: f64,
    p50: f64,
    p99: f64,
    max: f64,
}

fn stats(xs: impl Iterator<Item = f64>) -> Stats {
    let mut v: Vec<f64> = xs.collect();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return Stats { n: 0, mean: 0.0, p50: 0.0, p99: 0.0, max: 0.0 };
    }
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Stats { n: v.len(), mean, p50: q(0.5), p99: q(0.99), max: v[v.len() - 1] }
}

fn stats_json(s: Stats) -> Value {
    json!({"n": s.n, "mean": s.mean, "p50": s.p50, "p99": s.p99, "max": s.max})
}

struct Args {
    file: Option<PathBuf>,
    limit: usize,
    stride: usize,
    /// Only schemas with this keyword somewhere (not set to `false`).
    keyword: Option<String>,
}

/// Whether some object in `v` has the member `keyword`, not `false`.
fn has_keyword(v: &Value, keyword: &str) -> bool {
    match v {
        Value::Object(m) => {
            m.get(keyword).is_some_and(|x| x != &Value::Bool(false))
                || m.values().any(|x| has_keyword(x, keyword))
        }
        Value::Array(a) => a.iter().any(|x| has_keyword(x, keyword)),
        _ => false,
    }
}

fn parse_args(args: &[String]) -> Result<Args> {
    let mut out = Args { file: None, limit: usize::MAX, stride: 1, keyword: None };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| -> Result<usize> {
            let v = it.next().with_context(|| format!("{flag} needs a value"))?;
            v.parse().with_context(|| format!("{flag} {v}: not a number"))
        };
        match a.as_str() {
            "--limit" => out.limit = value("--limit")?,
            "--stride" => out.stride = value("--stride")?.max(1),
            "--keyword" => {
                out.keyword = Some(it.next().context("--keyword needs a value")?.clone());
            }
            s if s.starts_with("--") => bail!(
                "unknown flag {s} (usage: maskbench [FILE] [--limit N] [--stride K] \
                 [--keyword K])"
            ),
            s if out.file.is_none() => out.file = Some(PathBuf::from(s)),
            s => bail!("unexpected argument {s}"),
        }
    }
    Ok(out)
}

/// The MaskBench file's name and bytes (gunzipped): `file`, or the shared
/// dev split when none is given. Also used by the `ttfm` suite.
pub(crate) fn read_lines(file: &Option<PathBuf>) -> Result<(String, Vec<u8>)> {
    match file {
        Some(p) => Ok((p.display().to_string(), structgen_cli::io::read_maybe_gz(p)?)),
        None => {
            if compare::shared::data_dir().is_none() {
                bail!(
                    "../shared/data is absent (see the README's \"Where the corpora come from\"; \
                     STRUCTGEN_SHARED points at a copy): pass a MaskBench file"
                );
            }
            let rel = "maskbench/dev.jsonl.gz";
            Ok((format!("../shared/data/{rel}"), compare::shared::read(rel)?))
        }
    }
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let args = parse_args(args)?;
    let (source, bytes) = read_lines(&args.file)?;
    let json = compare::shared::read("tokenizers/llama3.tokenizer.json.gz")
        .context("the Llama-3 tokenizer from ../shared/data/tokenizers")?;
    let tokenizer = Arc::new(bpe::Tokenizer::from_tokenizer_json(&json)?);
    let (vocab, eos) = compare::peer::vocabulary(&tokenizer, true)?;
    let peer_env = compare::peer::llg_tok_env(&tokenizer, eos);
    let (plain, _) = compare::peer::vocabulary(&tokenizer, false)?;
    let configs = configs(&peer_env, plain)?;
    let reference = configs
        .iter()
        .position(|c| c.name() == "llg no slicer")
        .context("the reference configuration")?;
    let vocab_size = tokenizer.vocab_size();

    let mut tallies: Vec<Tally> = configs.iter().map(|_| Tally::default()).collect();
    let (mut schemas, mut mismatched_steps, mut compared_steps) = (0usize, 0usize, 0usize);
    let mut mismatched_schemas = vec![0usize; configs.len()];
    let dir = compare::report::bench_dir();
    std::fs::create_dir_all(&dir)?;
    let mut per_schema =
        std::io::BufWriter::new(std::fs::File::create(dir.join("maskbench-schemas.jsonl"))?);
    let (mut words, mut ref_words) = (Vec::new(), Vec::new());
    // `MASKBENCH_STEPS=FILE`: per step of the slicer configuration, the
    // slicer's work, written with every configuration's time (profiling).
    let mut steps_dump =
        std::env::var_os("MASKBENCH_STEPS").map(|p| (PathBuf::from(p), Vec::new()));
    let started = Instant::now();
    let wanted = |r: &Result<structgen_cli::maskbench::Record, _>| match (r, &args.keyword) {
        (Ok(r), Some(k)) => has_keyword(&r.schema, k),
        _ => true,
    };
    let records = structgen_cli::maskbench::records(&bytes).filter(wanted);
    for rec in records.step_by(args.stride).take(args.limit) {
        let rec = rec.with_context(|| source.clone())?;
        schemas += 1;
        let name = rec.name.clone();
        let tests = &rec.tests;
        let mut record = json!({"name": name});
        let mut compiled: Vec<Option<Compiled>> = Vec::new();
        for (c, tally) in configs.iter().zip(&mut tallies) {
            match compile(c, &vocab, &rec.schema) {
                Ok((x, us)) => {
                    tally.compiled += 1;
                    tally.ttfm_us.push(us);
                    record[c.name()] = json!({"status": "compiled", "ttfm_us": us});
                    compiled.push(Some(x));
                }
                Err(e) => {
                    tally.ttfm_us.push(f64::NAN);
                    record[c.name()] = json!({"status": "error", "error": e});
                    compiled.push(None);
                }
            }
        }
        let mut mismatch_here = vec![0usize; configs.len()];
        for (ti, t) in tests.iter().enumerate() {
            let (valid, text) = (t.valid, &t.text);
            let tokens = structgen_cli::tokenizer::encode_document(&tokenizer, text.as_bytes());
            let mut sessions: Vec<Option<Session>> = configs
                .iter()
                .zip(&compiled)
                .map(|(c, x)| x.as_ref().and_then(|x| Session::start(c, x, &vocab)))
                .collect();
            let mut accepted = vec![false; configs.len()];
            for step in 0..=tokens.len() {
                ref_words.clear();
                let mut ours_words: Vec<(usize, Vec<u64>)> = Vec::new();
                for (k, s) in sessions.iter_mut().enumerate() {
                    let Some(sess) = s else {
                        tallies[k].mask_us.push(f32::NAN);
                        continue;
                    };
                    let before = steps_dump.is_some().then(|| sess.slicer_stats()).flatten();
                    let t0 = Instant::now();
                    let mask = sess.mask();
                    let us = t0.elapsed().as_secs_f64() * 1e6;
                    let Some(mask) = mask else {
                        tallies[k].mask_us.push(f32::NAN);
                        *s = None;
                        continue;
                    };
                    tallies[k].mask_us.push(us as f32);
                    if valid && (k == reference || configs[k].compares_masks()) {
                        mask.words(vocab_size, &mut words);
                        if k == reference {
                            ref_words.clone_from(&words);
                        } else {
                            ours_words.push((k, words.clone()));
                        }
                    }
                    let ok = match tokens.get(step) {
                        Some(&tok) => mask.allows(tok),
                        None => {
                            drop(mask);
                            accepted[k] = sess.accepting();
                            false
                        }
                    };
                    if let (Some((_, dump)), Some(a)) = (steps_dump.as_mut(), before) {
                        let at = tallies[k].mask_us.len() - 1;
                        dump.push(step_info(at, [rec.index, ti, step], a, sess.slicer_stats()));
                    }
                    if !ok || !sess.consume(tokens[step]) {
                        *s = None;
                    }
                }
                if !ref_words.is_empty() {
                    for (k, w) in &ours_words {
                        compared_steps += 1;
                        if *w != ref_words {
                            mismatched_steps += 1;
                            mismatch_here[*k] += 1;
                        }
                    }
                }
                if sessions.iter().all(Option::is_none) {
                    break;
                }
            }
            let all_compiled = compiled.iter().all(Option::is_some);
            for (k, tally) in tallies.iter_mut().enumerate() {
                if compiled[k].is_none() {
                    continue;
                }
                let name = configs[k].name();
                if valid {
                    tally.valid += 1;
                    if !accepted[k] {
                        tally.valid_rejected += 1;
                        tally.valid_rejected_common += usize::from(all_compiled);
                        push(&mut record[name]["valid_rejected"], ti);
                    }
                } else {
                    tally.invalid += 1;
                    if accepted[k] {
                        tally.invalid_accepted += 1;
                        push(&mut record[name]["invalid_accepted"], ti);
                    }
                }
            }
        }
        for (k, tally) in tallies.iter_mut().enumerate() {
            if record[configs[k].name()]["valid_rejected"].is_array() {
                tally.schemas_with_valid_rejected += 1;
            }
            if mismatch_here[k] > 0 {
                mismatched_schemas[k] += 1;
                record[configs[k].name()]["mismatched_steps"] = json!(mismatch_here[k]);
            }
        }
        writeln!(per_schema, "{record}")?;
        if schemas % 500 == 0 {
            eprintln!("{schemas} schemas, {:.0} s", started.elapsed().as_secs_f64());
        }
    }
    per_schema.flush()?;
    if let Some((path, infos)) = &steps_dump {
        write_steps(path, infos, &configs, &tallies)?;
    }
    report(&configs, &tallies, reference, &source, schemas, &args)?;
    let ours_invalid: usize = configs
        .iter()
        .zip(&tallies)
        .filter(|(c, _)| c.is_ours())
        .map(|(_, t)| t.invalid_accepted)
        .sum();
    println!(
        "mask mismatches: {mismatched_steps} of {compared_steps} compared steps; schemas per config: {:?}",
        configs.iter().map(Config::name).zip(&mismatched_schemas).collect::<Vec<_>>()
    );
    ensure!(ours_invalid == 0, "ours accepted {ours_invalid} invalid instances");
    Ok(())
}

/// One mask step of the slicer configuration (`MASKBENCH_STEPS`): where it
/// was and what the slicer did (`[schema, instance, step, slices proven,
/// slices walked]`), in step order.
type StepInfo = [u64; 5];

fn step_info(
    at: usize,
    [schema, instance, step]: [usize; 3],
    a: structgen::SlicerStats,
    b: Option<structgen::SlicerStats>,
) -> (usize, StepInfo) {
    let b = b.unwrap_or(a);
    let info = [
        schema as u64,
        instance as u64,
        step as u64,
        b.slices_proven - a.slices_proven,
        b.slices_walked - a.slices_walked,
    ];
    (at, info)
}

/// Writes the steps of the slicer configuration, one JSON array a line:
/// the [`StepInfo`] then each configuration's mask time in µs.
fn write_steps(
    path: &std::path::Path,
    infos: &[(usize, StepInfo)],
    configs: &[Config],
    tallies: &[Tally],
) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "{}", json!(configs.iter().map(Config::name).collect::<Vec<_>>()))?;
    for &(at, info) in infos {
        let times: Vec<f32> = tallies.iter().map(|t| t.mask_us[at]).collect();
        writeln!(out, "{}", json!([info, times]))?;
    }
    out.flush()?;
    Ok(())
}

/// Appends `i` to a JSON array (created when absent).
fn push(v: &mut Value, i: usize) {
    if !v.is_array() {
        *v = json!([]);
    }
    if let Value::Array(a) = v {
        a.push(json!(i));
    }
}

fn report(
    configs: &[Config],
    tallies: &[Tally],
    reference: usize,
    source: &str,
    schemas: usize,
    args: &Args,
) -> Result<()> {
    let mut report = Report::new(
        "maskbench",
        &[
            "engine",
            "compiled",
            "valid rejected",
            "valid rejected where all compile",
            "invalid accepted",
            "TTFM mean ms",
            "TTFM p99 ms",
            "mask mean µs",
            "mask p50 µs",
            "mask p99 µs",
            "mask max µs",
        ],
    );
    // Timings on the common ground: schemas every configuration compiled,
    // steps every configuration computed.
    let n_steps = tallies[0].mask_us.len();
    let n_schemas = tallies[0].ttfm_us.len();
    let common_schema = |i: usize| tallies.iter().all(|t| !t.ttfm_us[i].is_nan());
    let common_step = |i: usize| tallies.iter().all(|t| !t.mask_us[i].is_nan());
    let schema_ix: Vec<usize> = (0..n_schemas).filter(|&i| common_schema(i)).collect();
    let step_ix: Vec<usize> = (0..n_steps).filter(|&i| common_step(i)).collect();
    let mut summary = Vec::new();
    let mut own_notes = Vec::new();
    for (c, t) in configs.iter().zip(tallies) {
        let ttfm = stats(schema_ix.iter().map(|&i| t.ttfm_us[i] / 1e3));
        let mask = stats(step_ix.iter().map(|&i| t.mask_us[i] as f64));
        let own_mask = stats(t.mask_us.iter().filter(|x| !x.is_nan()).map(|&x| x as f64));
        let own_ttfm = stats(t.ttfm_us.iter().filter(|x| !x.is_nan()).map(|&x| x / 1e3));
        report.row(vec![
            json!(c.name()),
            json!(t.compiled),
            json!(format!(
                "{} of {} ({} schemas)",
                t.valid_rejected, t.valid, t.schemas_with_valid_rejected
            )),
            json!(t.valid_rejected_common),
            json!(format!("{} of {}", t.invalid_accepted, t.invalid)),
            json!(ttfm.mean),
            json!(ttfm.p99),
            json!(mask.mean),
            json!(mask.p50),
            json!(mask.p99),
            json!(mask.max),
        ]);
        summary.push((c.name(), ttfm, mask));
        own_notes.push(format!(
            "{}: {} masks, mean {:.1} µs, p50 {:.1}, p99 {:.1}, max {:.1}; TTFM mean {:.3} ms",
            c.name(),
            own_mask.n,
            own_mask.mean,
            own_mask.p50,
            own_mask.p99,
            own_mask.max,
            own_ttfm.mean
        ));
        report.extra(
            c.name(),
            json!({
                "compiled": t.compiled, "valid": t.valid, "valid_rejected": t.valid_rejected,
                "schemas_with_valid_rejected": t.schemas_with_valid_rejected,
                "valid_rejected_where_all_compile": t.valid_rejected_common,
                "invalid": t.invalid, "invalid_accepted": t.invalid_accepted,
                "ttfm_ms_common": stats_json(ttfm), "mask_us_common": stats_json(mask),
                "ttfm_ms_own": stats_json(own_ttfm), "mask_us_own": stats_json(own_mask),
            }),
        );
    }
    // One ratio row per (ours, llguidance) pair.
    for (a, ca) in configs.iter().enumerate().filter(|(_, c)| c.is_ours()) {
        for (b, cb) in configs.iter().enumerate().filter(|(_, c)| !c.is_ours()) {
            let (sa, sb) = (&summary[a], &summary[b]);
            report.row(vec![
                json!(format!("ratio {} / {}", ca.name(), cb.name())),
                json!(format!("{} / {}", tallies[a].compiled, tallies[b].compiled)),
                json!(format!("{} / {}", tallies[a].valid_rejected, tallies[b].valid_rejected)),
                json!(format!(
                    "{} / {}",
                    tallies[a].valid_rejected_common, tallies[b].valid_rejected_common
                )),
                json!(format!("{} / {}", tallies[a].invalid_accepted, tallies[b].invalid_accepted)),
                json!(sa.1.mean / sb.1.mean),
                json!(sa.1.p99 / sb.1.p99),
                json!(sa.2.mean / sb.2.mean),
                json!(sa.2.p50 / sb.2.p50),
                json!(sa.2.p99 / sb.2.p99),
                json!(sa.2.max / sb.2.max),
            ]);
        }
    }
    report.note(format!(
        "{schemas} schemas from {source} (stride {}, limit {}), Llama-3 tokenizer; \
         {} schemas compiled by every engine, {} mask steps computed by every engine.{}",
        args.stride,
        if args.limit == usize::MAX { "none".to_string() } else { args.limit.to_string() },
        schema_ix.len(),
        step_ix.len(),
        args.keyword.as_ref().map_or(String::new(), |k| format!(" Only schemas with `{k}`."))
    ));
    report.note(format!("each engine's own steps: {}", own_notes.join("; ")));
    report.note(
        "ours: llguidance-compatible options (unbounded flexible whitespace). llg: \
         llguidance 1.9.1 with its general slices; llg no slicer: no slices; ours slicer: \
         ours with the same four slices (slicer::SlicerConfig::json); ours any order: \
         ours slicer with properties in any order (the others: schema order). TTFM = \
         compile + matcher + first mask. Timings over the common schemas and steps; \
         valid rejected: instances (schemas with at least one). Ratios ours / llg \
         (lower is better).",
    );
    report.note(format!("reference for mask equality: {}", configs[reference].name()));
    report.note(format!("machine: {}", compare::report::machine()));
    report.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{has_keyword, parse_args};

    #[test]
    fn a_keyword_counts_anywhere_unless_false() {
        let nested = json!({"properties": {"a": {"type": "array", "uniqueItems": true}}});
        assert!(has_keyword(&nested, "uniqueItems"));
        assert!(has_keyword(&json!({"anyOf": [{}, {"uniqueItems": 1}]}), "uniqueItems"));
        assert!(!has_keyword(&json!({"uniqueItems": false}), "uniqueItems"));
        // A property named like the keyword is a member of `properties`,
        // whose value is a schema: it counts (the filter is textual).
        assert!(has_keyword(&json!({"properties": {"uniqueItems": {}}}), "uniqueItems"));
        assert!(!has_keyword(&json!({"enum": ["uniqueItems"]}), "uniqueItems"));
    }

    #[test]
    fn the_keyword_flag_needs_a_value() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = parse_args(&args(&["--keyword", "uniqueItems", "--stride", "3"])).unwrap();
        assert_eq!(a.keyword.as_deref(), Some("uniqueItems"));
        assert_eq!(a.stride, 3);
        assert!(parse_args(&args(&["--keyword"])).is_err());
    }
}
