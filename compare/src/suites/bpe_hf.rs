//! `cargo xtask bench bpe hf`: our BPE on every shared `tokenizer.json`
//! (Llama-3, Qwen3, GPT-2, Llama-2, Mistral v0.3) side by side with Hugging
//! Face `tokenizers` 0.22.2 on the same file and the same inputs; written to
//! `target/bench/bpe-hf.md` and `.json`.
//!
//! Rows per model: load time (best of 3) and resident memory after load and
//! after first use (each side loaded in a fresh process, see
//! [`probe_load`]); encode and count throughput on 1 MB of prose, code and
//! Japanese (HF has no count: its encode is the reference); the worst cases
//! (`a`, spaces, random letters, random digits, one CJK character) at 10 kB
//! and 1 MB, with our time per byte at 1 MB over that at 10 kB; batch
//! encoding on thread pools of 1 and 2 threads. Every timed result is first
//! checked equal to HF's ids (`encode_fast` without added special tokens;
//! our `encode`, special names as text, which none of the inputs holds).
//! `cargo xtask bench bpe hf:llama3` runs one model.

use anyhow::{Context, Result, anyhow, ensure};
use compare::report::Report;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::bpe::{cpu_time, cpu_time_once, cut, rss, time_once};

/// The shared tokenizer files, by short name.
const MODELS: &[(&str, &str)] = &[
    ("llama3", "tokenizers/llama3.tokenizer.json.gz"),
    ("qwen3", "tokenizers/qwen3.tokenizer.json.gz"),
    ("gpt2", "tokenizers/gpt2.tokenizer.json.gz"),
    ("llama2", "tokenizers/llama2.tokenizer.json.gz"),
    ("mistral03", "tokenizers/mistral03.tokenizer.json.gz"),
];

/// The 1 MB corpora of the suite.
const CORPORA: &[(&str, &str)] = &[
    ("prose (ulysses)", "text/ulysses.md.gz"),
    ("code (regex-automata)", "text/code-regex-automata.rs.gz"),
    ("japanese (wagahai)", "text/wagahai.txt.gz"),
];

fn corpora() -> Result<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for &(name, file) in CORPORA {
        let bytes = compare::shared::read(file).with_context(|| format!("reading {file}"))?;
        let text = String::from_utf8(bytes).with_context(|| format!("{file} is not UTF-8"))?;
        out.push((name, cut(&text, 1_000_000).to_owned()));
    }
    Ok(out)
}

/// The worst-case inputs at `size` bytes.
fn worst_cases(size: usize) -> Vec<(&'static str, String)> {
    let mut rng = SmallRng::seed_from_u64(11);
    let letters: String = (0..size).map(|_| (b'a' + rng.random_range(0..26u8)) as char).collect();
    let digits: String = (0..size).map(|_| (b'0' + rng.random_range(0..10u8)) as char).collect();
    vec![
        ("a", "a".repeat(size)),
        ("space", " ".repeat(size)),
        ("random a-z", letters),
        ("random digits", digits),
        ("猫 (one CJK character)", "猫".repeat(size / 3)),
    ]
}

fn hf_ids(hf: &tokenizers::Tokenizer, text: &str) -> Result<Vec<u32>> {
    let enc = hf.encode_fast(text, false).map_err(|e| anyhow!("HF encode: {e}"))?;
    Ok(enc.get_ids().to_vec())
}

fn load_hf(json: &[u8]) -> Result<tokenizers::Tokenizer> {
    tokenizers::Tokenizer::from_bytes(json).map_err(|e| anyhow!("HF load: {e}"))
}

/// `cargo xtask bench bpe probe-load SIDE FILE` (run by the suite itself):
/// loads one tokenizer in this fresh process and prints, as JSON, the
/// resident memory it added after load and after encoding the corpora.
pub(crate) fn probe_load(args: &[String]) -> Result<()> {
    let [side, file] = args else { anyhow::bail!("usage: probe-load ours|hf FILE") };
    let texts = corpora()?;
    let r0 = rss();
    let json = compare::shared::read(file)?;
    let encode: Box<dyn Fn(&str) -> usize> = match side.as_str() {
        "ours" => {
            let tok = bpe::Tokenizer::from_tokenizer_json(&json)?;
            Box::new(move |t| tok.encode(t).len())
        }
        _ => {
            let tok = load_hf(&json)?;
            Box::new(move |t| hf_ids(&tok, t).map_or(0, |v| v.len()))
        }
    };
    drop(json);
    let after_load = rss().saturating_sub(r0);
    for (_, t) in &texts {
        std::hint::black_box(encode(t));
    }
    let after_use = rss().saturating_sub(r0);
    println!("{}", json!({ "load": after_load, "use": after_use }));
    Ok(())
}

/// Runs [`probe_load`] in a child process.
fn probe(side: &str, file: &str) -> Result<(f64, f64)> {
    let exe = std::env::current_exe()?;
    let out = std::process::Command::new(exe)
        .args(["bpe", "probe-load", side, file])
        .output()
        .context("cannot start the load probe")?;
    ensure!(out.status.success(), "load probe failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).context("load probe output")?;
    let mb = |k: &str| v[k].as_f64().unwrap_or(0.0) / 1e6;
    Ok((mb("load"), mb("use")))
}

/// One row: model, measure, input, ours, HF, ratio (ours better when > 1),
/// unit.
#[allow(clippy::too_many_arguments)]
fn row(
    report: &mut Report,
    model: &str,
    measure: &str,
    input: &str,
    ours: f64,
    hf: f64,
    higher_better: bool,
    unit: &str,
) {
    let ratio = if higher_better { ours / hf } else { hf / ours };
    report.row(vec![
        json!(model),
        json!(measure),
        json!(input),
        json!(ours),
        json!(hf),
        json!(ratio),
        json!(unit),
    ]);
}

/// The HF rows for the models named in `only` (all when empty).
pub(crate) fn run(only: &[&str]) -> Result<()> {
    let mut report = Report::new(
        "bpe-hf",
        &["model", "measure", "input", "ours", "HF tokenizers", "ours vs HF", "unit"],
    );
    let texts = corpora()?;
    let small = worst_cases(10_000);
    let large = worst_cases(1_000_000);
    let mut bars: Vec<String> = Vec::new();
    for &(model, file) in MODELS.iter().filter(|m| only.is_empty() || only.contains(&m.0)) {
        let json = compare::shared::read(file).with_context(|| format!("reading {file}"))?;
        let (mut lo, mut lh) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..3 {
            lo = lo.min(cpu_time_once(|| bpe::Tokenizer::from_tokenizer_json(&json)));
            lh = lh.min(cpu_time_once(|| load_hf(&json)));
        }
        let ours = bpe::Tokenizer::from_tokenizer_json(&json)?;
        let hf = load_hf(&json)?;
        drop(json);
        row(&mut report, model, "load", "-", lo * 1e3, lh * 1e3, false, "ms (ratio: HF/ours)");
        let (ol, ou) = probe("ours", file)?;
        let (hl, hu) = probe("hf", file)?;
        let unit = "MB (ratio: HF/ours)";
        row(&mut report, model, "resident memory after load", "-", ol, hl, false, unit);
        row(
            &mut report,
            model,
            "resident memory after first use",
            "3 corpora",
            ou,
            hu,
            false,
            unit,
        );

        for (name, text) in &texts {
            let ids = ours.encode(text);
            ensure!(ids == hf_ids(&hf, text)?, "{model} {name}: ids differ from HF");
            ensure!(ours.count(text) == ids.len(), "{model} {name}: count differs from encode");
            let mbs = |s: f64| text.len() as f64 / s / 1e6;
            let h = mbs(cpu_time(|| hf_ids(&hf, text)));
            let e = mbs(cpu_time(|| ours.encode(text)));
            let c = mbs(cpu_time(|| ours.count(text)));
            row(&mut report, model, "encode", name, e, h, true, "MB/s");
            row(&mut report, model, "count (HF: encode)", name, c, h, true, "MB/s");
            let bar = if name.starts_with("japanese") { 1.5 } else { 3.0 };
            bars.push(format!(
                "{model} {name}: encode {:.2}x, count {:.2}x HF (bar {bar}x): {}",
                e / h,
                c / h,
                if e / h >= bar && c / h >= bar { "met" } else { "NOT met" }
            ));
        }

        for ((name, s), (_, l)) in small.iter().zip(&large) {
            let mut per_byte = Vec::new();
            for (size, text) in [("10 kB", s), ("1 MB", l)] {
                let ids = ours.encode(text);
                ensure!(ids == hf_ids(&hf, text)?, "{model} worst case {name} {size}: ids differ");
                // Interleaved runs, the best of each side.
                let runs = if text.len() > 100_000 { 5 } else { 30 };
                let (mut o, mut h) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..runs {
                    o = o.min(cpu_time_once(|| ours.encode(text)));
                    h = h.min(cpu_time_once(|| hf_ids(&hf, text)));
                }
                per_byte.push((o / text.len() as f64, h / text.len() as f64));
                let mbs = |s: f64| text.len() as f64 / s / 1e6;
                let input = format!("{name} x {size}");
                row(&mut report, model, "worst-case encode", &input, mbs(o), mbs(h), true, "MB/s");
            }
            let growth = per_byte[1].0 / per_byte[0].0;
            let hf_growth = per_byte[1].1 / per_byte[0].1;
            bars.push(format!(
                "{model} worst case {name}: time per byte at 1 MB / at 10 kB = {growth:.2} \
                 (HF {hf_growth:.2}; bar <= 2): {}",
                if growth <= 2.0 { "met" } else { "NOT met" }
            ));
        }

        // Batch encoding: documents of about 4 kB from the three corpora.
        let docs: Vec<&str> = texts
            .iter()
            .flat_map(|(_, t)| {
                let mut v = Vec::new();
                let mut rest = t.as_str();
                while !rest.is_empty() {
                    let d = cut(rest, 4_000);
                    let d = if d.is_empty() { rest } else { d };
                    v.push(d);
                    rest = &rest[d.len()..];
                }
                v
            })
            .collect();
        let want: Vec<Vec<u32>> = docs.iter().map(|d| ours.encode(d)).collect();
        let pools: Vec<rayon::ThreadPool> = [1, 2]
            .iter()
            .map(|&n| rayon::ThreadPoolBuilder::new().num_threads(n).build())
            .collect::<Result<_, _>>()?;
        for pool in &pools {
            ensure!(pool.install(|| ours.encode_batch(&docs)) == want, "{model}: batch differs");
        }
        let hf_batch = || hf.encode_batch_fast(docs.clone(), false).map(|v| v.len());
        let total: usize = docs.iter().map(|d| d.len()).sum();
        let mbs = |s: f64| total as f64 / s / 1e6;
        let (mut o, mut h) = ([f64::INFINITY; 2], [f64::INFINITY; 2]);
        for _ in 0..10 {
            for (k, pool) in pools.iter().enumerate() {
                o[k] = o[k].min(time_once(|| pool.install(|| ours.encode_batch(&docs))));
                h[k] = h[k].min(time_once(|| pool.install(hf_batch)));
            }
        }
        let input = format!("{} docs of ~4 kB", docs.len());
        row(
            &mut report,
            model,
            "encode_batch, 1 thread",
            &input,
            mbs(o[0]),
            mbs(h[0]),
            true,
            "MB/s",
        );
        row(
            &mut report,
            model,
            "encode_batch, 2 threads",
            &input,
            mbs(o[1]),
            mbs(h[1]),
            true,
            "MB/s",
        );
        let speedup = o[0] / o[1];
        bars.push(format!(
            "{model} encode_batch: 2 threads {speedup:.2}x one (HF {:.2}x; bar >= 1.8): {}",
            h[0] / h[1],
            if speedup >= 1.8 { "met" } else { "NOT met" }
        ));
    }
    report.note(format!("machine: {}", compare::report::machine()));
    report.note(
        "ratios > 1 mean ours is better (throughput: ours/HF; time and memory: HF/ours). \
         HF: tokenizers 0.22.2 (onig), `encode_fast` without added special tokens; its word \
         cache is warm after the first run, as in a server. Single-threaded rows are \
         thread CPU time (the best of repeated runs), so that other processes on the \
         shared cores do not stretch them. Load: best of 3 from the decompressed JSON bytes. Memory: each side loads in a fresh process; resident \
         memory added by the load (JSON bytes freed), then after encoding the three 1 MB \
         corpora once. Worst cases: best of interleaved runs (5 at 1 MB, 30 at 10 kB). \
         Batch: rayon pools of 1 and 2 threads, wall time, best of 10.",
    );
    for b in &bars {
        report.note(b.clone());
    }
    report.extra("bars", json!(bars));
    report.finish()?;
    Ok(())
}
