//! `cargo xtask bench ttfm [FILE] [--limit N] [--stride K] [--repeat R] [--top T] [--ours-only]`:
//! where our time to first mask goes on MaskBench schemas, phase by phase,
//! beside llguidance's whole time to first mask (with and without its
//! slicer), on the Llama-3 tokenizer.
//!
//! For every schema of the file (the dev split by default, the same format
//! as the `maskbench` suite) the phases of our time to first mask are timed
//! one after the other on the same compilation:
//!
//! - `schema`: `jsonschema::compile` (normalization and lowering),
//! - `earley`: `Grammar::to_earley` (the lexer's construction included),
//! - `matcher`: `Matcher::new`, which computes the first mask (the first
//!   matcher of a grammar builds the start the grammar keeps),
//! - `mask`: the first `compute_mask` (the start's mask, already computed),
//! - `drop`: dropping that matcher;
//!
//! `lexer` is measured apart (a second `lexer::Lexer::new` over the same
//! lexemes, not part of the total) to tell the lexer's share of `earley`.
//! `slicer` is the whole time to first mask again with our slicer (a fresh
//! compilation, so the start kept by the first one does not help). With
//! `--repeat R` each measurement is the minimum of `R` runs (the machine is
//! shared and noisy). The table gives mean, p50, p99 and max per phase over
//! the schemas every engine compiles, the ratios to llguidance, and the
//! `T` slowest schemas with their phases; every schema's phases go to
//! `target/bench/ttfm-schemas.jsonl`. `--ours-only` leaves out the slicer and
//! llguidance (to profile our phases alone).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use structgen::{Grammar, Matcher, Vocabulary};

use compare::report::Report;

/// Our phases, in order; the total is their sum.
const PHASES: [&str; 5] = ["schema", "earley", "matcher", "mask", "drop"];

/// The columns of one schema's timings (ms): the phases, then the lexer
/// alone, our total, ours with the slicer, llguidance with and without its
/// slicer.
const COLUMNS: [&str; 10] = [
    "schema",
    "earley",
    "matcher",
    "mask",
    "drop",
    "lexer",
    "ours",
    "ours slicer",
    "llg",
    "llg no slicer",
];

struct Args {
    file: Option<PathBuf>,
    limit: usize,
    stride: usize,
    repeat: usize,
    top: usize,
    /// Only our phases (no slicer, no llguidance): for profiling.
    ours_only: bool,
}

fn parse_args(args: &[String]) -> Result<Args> {
    let mut out =
        Args { file: None, limit: usize::MAX, stride: 1, repeat: 1, top: 15, ours_only: false };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| -> Result<usize> {
            let v = it.next().with_context(|| format!("{flag} needs a value"))?;
            v.parse().with_context(|| format!("{flag} {v}: not a number"))
        };
        match a.as_str() {
            "--limit" => out.limit = value("--limit")?,
            "--stride" => out.stride = value("--stride")?.max(1),
            "--repeat" => out.repeat = value("--repeat")?.max(1),
            "--top" => out.top = value("--top")?,
            "--ours-only" => out.ours_only = true,
            s if s.starts_with("--") => bail!(
                "unknown flag {s} (usage: ttfm [FILE] [--limit N] [--stride K] [--repeat R] [--top T])"
            ),
            s if out.file.is_none() => out.file = Some(PathBuf::from(s)),
            s => bail!("unexpected argument {s}"),
        }
    }
    Ok(out)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Our phases once: `[schema, earley, matcher, mask, drop]` in ms and the
/// first mask's popcount, or the first error.
fn ours_once(
    vocab: &Vocabulary,
    plain: &Vocabulary,
    schema: &Value,
    slicer: bool,
) -> Result<([f64; 5], usize), String> {
    let options = jsonschema::Options::llguidance_compat();
    let t = Instant::now();
    let c = jsonschema::compile(schema, &options).map_err(|e| e.to_string())?;
    let schema_ms = ms(t);
    let t = Instant::now();
    let g = c.grammar.to_earley(earley::Limits::default()).map_err(|e| e.to_string())?;
    let earley_ms = ms(t);
    let t = Instant::now();
    let g = Grammar::from_earley(g);
    let mut m = Matcher::new(if slicer { vocab } else { plain }, &g).map_err(|e| e.to_string())?;
    let matcher_ms = ms(t);
    let t = Instant::now();
    let count = m.compute_mask().map_err(|e| e.to_string())?.count();
    let mask_ms = ms(t);
    let t = Instant::now();
    drop(m);
    let drop_ms = ms(t);
    Ok(([schema_ms, earley_ms, matcher_ms, mask_ms, drop_ms], count))
}

/// The lexer of the schema's lexemes built alone (ms), or `NaN`.
fn lexer_once(schema: &Value) -> f64 {
    let Ok(c) = jsonschema::compile(schema, &jsonschema::Options::llguidance_compat()) else {
        return f64::NAN;
    };
    let mut spec = lexer::LexerSpec::new();
    for l in &c.grammar.lexemes {
        spec.add(lexer::LexemeSpec::new(l.name.clone(), l.regex.clone()));
    }
    if let Some(set) = c.grammar.preparsed() {
        spec.set_preparsed(set);
    }
    let t = Instant::now();
    let built = lexer::Lexer::new(&spec, earley::Limits::default().lexer);
    let elapsed = ms(t);
    if built.is_ok() { elapsed } else { f64::NAN }
}

/// llguidance's time to first mask (ms) as the `maskbench` suite times it.
fn llg_once(factory: &llguidance::ParserFactory, schema: &Value) -> Option<f64> {
    let grammar = llguidance::api::TopLevelGrammar::from_json_schema(schema.clone());
    let t = Instant::now();
    let mut m = llguidance::Matcher::new(factory.create_parser(grammar));
    if m.get_error().is_some() {
        return None;
    }
    m.compute_mask().ok()?;
    Some(ms(t))
}

/// The minimum over `r` runs of `f` (each `None` on failure).
fn min_of<T: Copy>(
    r: usize,
    mut f: impl FnMut() -> Option<T>,
    key: impl Fn(&T) -> f64,
) -> Option<T> {
    let mut best: Option<T> = None;
    for _ in 0..r {
        let x = f()?;
        if best.as_ref().is_none_or(|b| key(&x) < key(b)) {
            best = Some(x);
        }
    }
    best
}

/// Mean, p50, p99 and max.
fn stats(xs: &[f64]) -> [f64; 4] {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return [0.0; 4];
    }
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    [v.iter().sum::<f64>() / v.len() as f64, q(0.5), q(0.99), v[v.len() - 1]]
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let args = parse_args(args)?;
    let (source, bytes) = super::maskbench::read_lines(&args.file)?;
    let json = compare::shared::read("tokenizers/llama3.tokenizer.json.gz")
        .context("the Llama-3 tokenizer from ../shared/data/tokenizers")?;
    let tokenizer = Arc::new(bpe::Tokenizer::from_tokenizer_json(&json)?);
    let (vocab, eos) = compare::peer::vocabulary(&tokenizer, true)?;
    let (plain, _) = compare::peer::vocabulary(&tokenizer, false)?;
    let peer_env = compare::peer::llg_tok_env(&tokenizer, eos);
    let llg = compare::peer::llg_factory(
        &peer_env,
        &llguidance::earley::SlicedBiasComputer::general_slices(),
    )?;
    let llg_plain = compare::peer::llg_factory(&peer_env, &[])?;

    let dir = compare::report::bench_dir();
    std::fs::create_dir_all(&dir)?;
    let mut per_schema =
        std::io::BufWriter::new(std::fs::File::create(dir.join("ttfm-schemas.jsonl"))?);
    // Per schema every engine compiles: (name, COLUMNS in ms).
    let mut rows: Vec<(String, [f64; COLUMNS.len()])> = Vec::new();
    let (mut schemas, mut ours_compiled) = (0usize, 0usize);
    let lines = bytes.lines().filter(|l| l.as_ref().is_ok_and(|l| !l.trim().is_empty()));
    for (i, line) in lines.enumerate().step_by(args.stride).take(args.limit) {
        let rec: Value =
            serde_json::from_str(&line?).with_context(|| format!("record {}: not JSON", i + 1))?;
        schemas += 1;
        let name = rec["name"].as_str().unwrap_or("").to_string();
        let schema = &rec["schema"];
        let r = args.repeat;
        let ours =
            min_of(r, || ours_once(&vocab, &plain, schema, false).ok(), |x| x.0.iter().sum());
        let (sliced, l1, l2) = if args.ours_only {
            (Some(([f64::NAN; 5], 0)), Some(f64::NAN), Some(f64::NAN))
        } else {
            (
                min_of(r, || ours_once(&vocab, &plain, schema, true).ok(), |x| x.0.iter().sum()),
                min_of(r, || llg_once(&llg, schema), |x| *x),
                min_of(r, || llg_once(&llg_plain, schema), |x| *x),
            )
        };
        if let Some((_, n)) = ours {
            ours_compiled += 1;
            ensure!(n > 0, "schema {name}: our first mask is empty");
        }
        let (Some((phases, _)), Some((sliced, _)), Some(l1), Some(l2)) = (ours, sliced, l1, l2)
        else {
            writeln!(per_schema, "{}", json!({"name": name, "common": false}))?;
            continue;
        };
        let lexer = min_of(r, || Some(lexer_once(schema)), |x| *x).unwrap_or(f64::NAN);
        let row = [
            phases[0],
            phases[1],
            phases[2],
            phases[3],
            phases[4],
            lexer,
            phases.iter().sum(),
            sliced.iter().sum(),
            l1,
            l2,
        ];
        let rec = json!({"name": name, "common": true, "ms": COLUMNS.iter().zip(row).map(|(c, x)| ((*c).to_string(), json!(x))).collect::<serde_json::Map<_, _>>()});
        writeln!(per_schema, "{rec}")?;
        rows.push((name, row));
    }
    per_schema.flush()?;
    ensure!(ours_compiled > 0, "no schema compiled");

    let mut report = Report::new("ttfm", &["ms", "mean", "p50", "p99", "max", "share of mean"]);
    let col = |k: usize| rows.iter().map(|r| r.1[k]).filter(|x| !x.is_nan()).collect::<Vec<_>>();
    let total = stats(&col(6))[0];
    let mut summary = serde_json::Map::new();
    for (k, c) in COLUMNS.iter().enumerate() {
        let s = stats(&col(k));
        let share = if k <= PHASES.len() { json!(s[0] / total) } else { json!("") };
        report.row(vec![json!(c), json!(s[0]), json!(s[1]), json!(s[2]), json!(s[3]), share]);
        summary.insert((*c).to_string(), json!(s));
    }
    for (a, b) in [(6, 8), (6, 9), (7, 8), (7, 9)] {
        let (sa, sb) = (stats(&col(a)), stats(&col(b)));
        report.row(vec![
            json!(format!("ratio {} / {}", COLUMNS[a], COLUMNS[b])),
            json!(sa[0] / sb[0]),
            json!(sa[1] / sb[1]),
            json!(sa[2] / sb[2]),
            json!(sa[3] / sb[3]),
            json!(""),
        ]);
    }
    report.extra("summary", Value::Object(summary));
    rows.sort_by(|a, b| b.1[6].total_cmp(&a.1[6]));
    let mut slowest = Vec::new();
    for (name, row) in rows.iter().take(args.top) {
        let cells: Vec<String> =
            COLUMNS.iter().zip(row).map(|(c, x)| format!("{c} {x:.2}")).collect();
        report.note(format!("slow: {name}: {}", cells.join(", ")));
        slowest.push(json!({"name": name, "ms": row.to_vec()}));
    }
    report.extra("slowest", json!(slowest));
    report.note(format!(
        "{schemas} schemas from {source} (stride {}, repeat {}), {} compiled by ours, {} by every \
         engine (the timings); Llama-3 tokenizer. Phases of ours: schema = jsonschema::compile, \
         earley = to_earley, matcher = Matcher::new (first mask included), mask = first compute_mask, drop = dropping the matcher; lexer = \
         lexer::Lexer::new alone (inside earley); ours slicer = the same with our slicer; llg = \
         llguidance 1.9.1 with its general slices, llg no slicer = without.",
        args.stride,
        args.repeat,
        ours_compiled,
        rows.len()
    ));
    report.note(format!("machine: {}", compare::report::machine()));
    report.finish()?;
    Ok(())
}
