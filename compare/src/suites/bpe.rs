//! `cargo xtask bench bpe`: our BPE side by side with bpe-openai 0.3.2 and
//! tiktoken-rs 0.12.1 on o200k_base.
//!
//! Rows: dictionary load time and resident memory; encode throughput on 1 MB
//! of prose (Ulysses), code (regex-automata) and Japanese prose (wagahai) and
//! on random-token text; the worst cases (`a`, space, `x`, random a-z, and
//! `^ 0 a 's ␠ \n` repeated) at 1k / 10k / 100k / 1M bytes; the rust-gems
//! slice benchmark (random slices of 10 B to 10 KB of a 20,000-token text);
//! the appending and prependable encoders character by character; interval
//! counting against rust-gems' `IntervalEncoding` (peer_bpe 0.2.3).
//! `cargo xtask bench bpe SECTION...` runs only the named sections.
//! Every timed result is first checked equal to tiktoken-rs's ids (or, where
//! tiktoken-rs is too slow to run, to bpe-openai's count).

use std::time::Instant;

use anyhow::{Context, Result, ensure};
use compare::report::Report;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// Seconds per call of `f`: the minimum over repeated runs (at least 3, at
/// most 50, stopping after about 0.5 s).
pub(crate) fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut best = f64::INFINITY;
    let start = Instant::now();
    for i in 0..50 {
        let t = Instant::now();
        std::hint::black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
        if i >= 2 && start.elapsed().as_secs_f64() > 0.5 {
            break;
        }
    }
    best
}

/// Seconds for one call of `f`.
pub(crate) fn time_once<T>(f: impl FnOnce() -> T) -> f64 {
    let t = Instant::now();
    std::hint::black_box(f());
    t.elapsed().as_secs_f64()
}

/// CPU seconds this thread spends in one call of `f`: unlike wall time, not
/// stretched when other processes share the cores (cache pollution aside).
pub(crate) fn cpu_time_once<T>(f: impl FnOnce() -> T) -> f64 {
    let now = || {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
    };
    let t = now();
    std::hint::black_box(f());
    now() - t
}

/// CPU seconds per call of `f`: the minimum over repeated runs (at least 3,
/// at most 50, stopping after about 0.5 s).
pub(crate) fn cpu_time<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut best = f64::INFINITY;
    let start = Instant::now();
    for i in 0..50 {
        best = best.min(cpu_time_once(&mut f));
        if i >= 2 && start.elapsed().as_secs_f64() > 0.5 {
            break;
        }
    }
    best
}

/// Resident set size in bytes (Linux; 0 elsewhere).
pub(crate) fn rss() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()))
        .map_or(0, |pages| pages * 4096)
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Value {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => json!(a / b),
        _ => json!("-"),
    }
}

fn opt(v: Option<f64>) -> Value {
    v.map_or(json!("-"), |v| json!(v))
}

/// The first `max` bytes of `text`, cut back to a char boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The sections of the suite; `cargo xtask bench bpe SECTION...` runs only
/// those named (all by default).
/// `hf` (or `hf:MODEL`) runs the Hugging Face `tokenizer.json` rows of
/// `bpe_hf.rs` instead, into their own report.
const SECTIONS: &[&str] = &["load", "corpora", "append", "prepend", "interval", "worst", "slice"];

pub(crate) fn run(args: &[String]) -> Result<()> {
    if args.first().is_some_and(|a| a == "probe-load") {
        return super::bpe_hf::probe_load(&args[1..]);
    }
    if args.first().is_some_and(|a| a == "probe-encode") {
        return probe_encode(&args[1..]);
    }
    let hf: Vec<&str> = args
        .iter()
        .filter_map(|a| a.strip_prefix("hf").map(|m| m.trim_start_matches(':')))
        .collect();
    let args: Vec<String> = args.iter().filter(|a| !a.starts_with("hf")).cloned().collect();
    for a in &args {
        ensure!(
            SECTIONS.contains(&a.as_str()),
            "unknown section {a:?}; sections: {SECTIONS:?}, hf, hf:MODEL"
        );
    }
    if args.is_empty() && !hf.is_empty() {
        let only: Vec<&str> = hf.into_iter().filter(|m| !m.is_empty()).collect();
        return super::bpe_hf::run(&only);
    }
    run_o200k(&args)?;
    if hf.is_empty() && args.is_empty() {
        super::bpe_hf::run(&[])?;
    }
    Ok(())
}

/// `cargo xtask bench bpe probe-encode ours|bpe-openai|tiktoken CORPUS`:
/// encodes the first 1 MB of a corpus once to warm up, then once inside
/// [`measured_encode`], for instruction counts that a loaded machine does
/// not disturb: `valgrind --tool=callgrind
/// --toggle-collect='*measured_encode*' target/release/structgen-bench bpe
/// probe-encode ours text/wagahai.txt.gz`.
fn probe_encode(args: &[String]) -> Result<()> {
    let [side, file] = args else { anyhow::bail!("usage: probe-encode SIDE CORPUS") };
    let text = String::from_utf8(compare::shared::read(file)?)?;
    let text = cut(&text, 1_000_000);
    let encode: Box<dyn Fn(&str) -> usize> = match side.as_str() {
        "ours" => {
            let t = bpe::Tokenizer::o200k_base();
            Box::new(move |s| t.encode(s).len())
        }
        "bpe-openai" => {
            let t = bpe_openai::o200k_base();
            Box::new(move |s| t.encode(s).len())
        }
        _ => {
            let t = tiktoken_rs::o200k_base().map_err(|e| anyhow::anyhow!("{e}"))?;
            Box::new(move |s| t.encode_ordinary(s).len())
        }
    };
    let warm = encode(text);
    ensure!(measured_encode(&*encode, text) == warm, "encodes differ");
    println!("{side} {file}: {warm} tokens");
    Ok(())
}

/// The call that `probe-encode` measures.
#[inline(never)]
fn measured_encode(encode: &dyn Fn(&str) -> usize, text: &str) -> usize {
    std::hint::black_box(encode(std::hint::black_box(text)))
}

/// The o200k rows against bpe-openai and tiktoken-rs.
fn run_o200k(args: &[String]) -> Result<()> {
    let on = |s: &str| args.is_empty() || args.iter().any(|a| a == s);
    let mut report = Report::new(
        "bpe",
        &[
            "measure",
            "input",
            "ours",
            "bpe-openai",
            "tiktoken-rs",
            "ours/bpe-openai",
            "ours/tiktoken",
            "unit",
        ],
    );

    // The worst cases, made first: the load rows include what their first
    // encodes need.
    let mut rng = SmallRng::seed_from_u64(7);
    let az: String = (0..1_000_000).map(|_| (b'a' + rng.random_range(0..26u8)) as char).collect();
    let worst: Vec<(&str, String)> = vec![
        ("a", "a".repeat(1_000_000)),
        ("space", " ".repeat(1_000_000)),
        ("x", "x".repeat(1_000_000)),
        ("random a-z", az),
        ("^ 0 a 's ␠ \\n", "^ 0 a 's \u{2420} \n".repeat(1_000_000 / 14 + 1)),
    ];
    // The one-time cost of the first encodes of every worst case at 1 MB:
    // the first encode's time minus the best of three later ones (our
    // per-token tables fill on first use; the peers' are built at load).
    let first_use = |encode: &dyn Fn(&str) -> usize| {
        let mut extra = 0.0;
        for (_, text) in &worst {
            let t = Instant::now();
            std::hint::black_box(encode(text));
            let first = t.elapsed().as_secs_f64();
            let steady = (0..3)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(encode(text));
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min);
            extra += (first - steady).max(0.0);
        }
        extra
    };

    // Loading first, while the heap is small, so RSS deltas mean something.
    let r0 = rss();
    let t = Instant::now();
    let ours = bpe::Tokenizer::o200k_base();
    let ours_load = t.elapsed().as_secs_f64();
    let ours_rss = rss().saturating_sub(r0);
    let ours_lazy = if on("load") { first_use(&|s| ours.encode(s).len()) } else { 0.0 };
    let ours_rss_full = rss().saturating_sub(r0);
    let r1 = rss();
    let t = Instant::now();
    let tk = tiktoken_rs::o200k_base().map_err(|e| anyhow::anyhow!("{e}"))?;
    let tk_load = t.elapsed().as_secs_f64();
    let tk_rss = rss().saturating_sub(r1);
    let r2 = rss();
    let t = Instant::now();
    let bo = bpe_openai::o200k_base();
    bo.count("warm");
    let bo_load = t.elapsed().as_secs_f64();
    let bo_lazy = if on("load") { first_use(&|s| bo.encode(s).len()) } else { 0.0 };
    let bo_rss = rss().saturating_sub(r2);
    let ms = |s: f64| Some(s * 1e3);
    let mb = |b: usize| Some(b as f64 / 1e6);
    let row = |report: &mut Report,
               measure: &str,
               input: &str,
               o: Option<f64>,
               b: Option<f64>,
               t: Option<f64>,
               unit: &str,
               higher_better: bool| {
        let (rb, rt) =
            if higher_better { (ratio(o, b), ratio(o, t)) } else { (ratio(b, o), ratio(t, o)) };
        report.row(vec![json!(measure), json!(input), opt(o), opt(b), opt(t), rb, rt, json!(unit)]);
    };
    if on("load") {
        row(
            &mut report,
            "load o200k",
            "-",
            ms(ours_load),
            ms(bo_load),
            ms(tk_load),
            "ms (ratio: peer/ours)",
            false,
        );
        row(
            &mut report,
            "load o200k + first use",
            "first encodes of the worst cases",
            ms(ours_load + ours_lazy),
            ms(bo_load + bo_lazy),
            ms(tk_load),
            "ms (ratio: peer/ours)",
            false,
        );
        row(
            &mut report,
            "resident memory after load",
            "-",
            mb(ours_rss),
            mb(bo_rss),
            mb(tk_rss),
            "MB (ratio: peer/ours)",
            false,
        );
        row(
            &mut report,
            "resident memory after first use",
            "-",
            mb(ours_rss_full),
            mb(bo_rss),
            mb(tk_rss),
            "MB (ratio: peer/ours)",
            false,
        );
    }

    // 1 MB corpora.
    let mut corpora: Vec<(String, String)> = Vec::new();
    for (name, file) in [
        ("prose (ulysses)", "text/ulysses.md.gz"),
        ("code (regex-automata)", "text/code-regex-automata.rs.gz"),
        ("japanese (wagahai)", "text/wagahai.txt.gz"),
    ] {
        match compare::shared::read(file) {
            Ok(bytes) => {
                let text =
                    String::from_utf8(bytes).with_context(|| format!("{file} is not UTF-8"))?;
                corpora.push((name.to_owned(), cut(&text, 1_000_000).to_owned()));
            }
            Err(e) => report.note(format!("SKIPPED {name}: {e}")),
        }
    }
    corpora.push(("random tokens".to_owned(), random_token_text(&ours, 1_000_000, 1)));
    for (name, text) in corpora.iter().filter(|_| on("corpora")) {
        let ids = ours.encode(text);
        ensure!(ids == tk.encode_ordinary(text), "{name}: ids differ from tiktoken-rs");
        ensure!(ids.len() == bo.count(text.as_str()), "{name}: count differs from bpe-openai");
        let mbs = |s: f64| Some(text.len() as f64 / s / 1e6);
        let o = cpu_time(|| ours.encode(text));
        let b = cpu_time(|| bo.encode(text.as_str()));
        let t = cpu_time(|| tk.encode_ordinary(text));
        row(&mut report, "encode", name, mbs(o), mbs(b), mbs(t), "MB/s", true);
        let o = cpu_time(|| ours.count(text));
        let b = cpu_time(|| bo.count(text.as_str()));
        row(&mut report, "count", name, mbs(o), mbs(b), None, "MB/s", true);
    }

    // The appending encoder, character by character, against one-shot count.
    if let Some((_, prose)) = corpora.first().filter(|_| on("append")) {
        let text = cut(prose, 100_000);
        let append = || {
            let mut enc = bpe::AppendingEncoder::new(&ours);
            for (i, c) in text.char_indices() {
                enc.push(&text[i..i + c.len_utf8()]);
            }
            enc.count()
        };
        ensure!(append() == ours.count(text), "appending encoder count differs from one-shot");
        let mut enc = bpe::AppendingEncoder::new(&ours);
        enc.push(text);
        ensure!(
            enc.tokens().collect::<Vec<_>>() == ours.encode(text),
            "appending encoder tokens differ from one-shot"
        );
        let mbs = |s: f64| Some(text.len() as f64 / s / 1e6);
        let a = time(append);
        let c = time(|| ours.count(text));
        // The budget-check pattern: the count after every character.
        let budget = || {
            let mut enc = bpe::AppendingEncoder::new(&ours);
            let mut sum = 0usize;
            for (i, c) in text.char_indices() {
                enc.push(&text[i..i + c.len_utf8()]);
                sum += enc.count();
            }
            sum
        };
        let b = time(budget);
        report.row(vec![
            json!("appending encoder, count read after every char"),
            json!("first 100 kB of the first corpus"),
            opt(mbs(b)),
            json!("-"),
            json!("-"),
            json!("-"),
            json!("-"),
            json!(format!("MB/s; ratio to one-shot count {:.2}", c / b)),
        ]);
        report.row(vec![
            json!("appending encoder (char by char) vs one-shot count"),
            json!("first 100 kB of the first corpus"),
            opt(mbs(a)),
            json!("-"),
            json!("-"),
            json!("-"),
            json!("-"),
            json!(format!(
                "MB/s; one-shot count {:.2} MB/s, ratio {:.2} (bar >= 0.5)",
                text.len() as f64 / c / 1e6,
                c / a
            )),
        ]);
    }

    if let Some((_, prose)) = corpora.first().filter(|_| on("prepend")) {
        prepend_rows(&mut report, &ours, cut(prose, 100_000))?;
    }
    if on("interval") {
        let prose = corpora.first().map_or("", |c| c.1.as_str());
        interval_rows(&mut report, &ours, bo, cut(prose, 200_000))?;
    }

    // Worst cases.
    let mut linear_ok = true;
    for (name, full) in worst.iter().filter(|_| on("worst")) {
        let mut per_byte = Vec::new();
        for size in [1_000usize, 10_000, 100_000, 1_000_000] {
            let text = cut(full, size);
            let ids = ours.encode(text);
            ensure!(
                ids.len() == bo.count(text),
                "worst case {name} at {size}: count differs from bpe-openai"
            );
            // tiktoken-rs is quadratic on long pieces; run it only while that
            // takes seconds, not hours.
            let tk_ok = size <= 10_000 || name.starts_with('^');
            if tk_ok {
                ensure!(
                    ids == tk.encode_ordinary(text),
                    "worst case {name} at {size}: ids differ from tiktoken-rs"
                );
            }
            let mbs = |s: f64| Some(text.len() as f64 / s / 1e6);
            // Interleaved runs, the best of each: on a shared machine a
            // burst of load then hits both sides alike.
            let (mut o, mut b, mut t) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
            for _ in 0..(20_000_000 / size).clamp(7, 400) {
                o = o.min(cpu_time_once(|| ours.encode(text)));
                b = b.min(cpu_time_once(|| bo.encode(text)));
                if tk_ok && size <= 10_000 {
                    t = t.min(cpu_time_once(|| tk.encode_ordinary(text)));
                }
            }
            let t =
                tk_ok.then(|| if size <= 10_000 { t } else { time(|| tk.encode_ordinary(text)) });
            per_byte.push(o / text.len() as f64);
            row(
                &mut report,
                "worst-case encode",
                &format!("{name} x {size}"),
                mbs(o),
                mbs(b),
                t.and_then(mbs),
                "MB/s",
                true,
            );
        }
        let growth = per_byte[3] / per_byte[1];
        linear_ok &= growth <= 2.0;
        report.note(format!(
            "worst case {name}: time per byte at 1M / at 10k = {growth:.2} (bar: <= 2)"
        ));
    }
    report.extra("worst_cases_linear", json!(linear_ok));

    // The rust-gems slice benchmark: random slices of a 20,000-token text.
    let base = random_token_text(&ours, 200_000, 2);
    let base = cut(&base, base.len());
    let tokens_20k: Vec<u32> = ours.encode(base).into_iter().take(20_000).collect();
    let text20k =
        ours.decode_to_string(&tokens_20k).unwrap_or_else(|_| base[..base.len() / 2].to_owned());
    for len in [10usize, 100, 1_000, 10_000].into_iter().filter(|_| on("slice")) {
        let mut rng = SmallRng::seed_from_u64(len as u64);
        let slices: Vec<&str> = (0..200)
            .map(|_| {
                let mut s = rng.random_range(0..text20k.len().saturating_sub(len).max(1));
                while !text20k.is_char_boundary(s) {
                    s -= 1;
                }
                let mut e = (s + len).min(text20k.len());
                while !text20k.is_char_boundary(e) {
                    e -= 1;
                }
                &text20k[s..e]
            })
            .collect();
        for s in &slices {
            ensure!(
                ours.encode(s) == tk.encode_ordinary(s),
                "slice {s:?}: ids differ from tiktoken-rs"
            );
        }
        let us = |t: f64| Some(t / slices.len() as f64 * 1e6);
        let o = time(|| slices.iter().map(|s| ours.encode(s).len()).sum::<usize>());
        let b = time(|| slices.iter().map(|s| bo.encode(*s).len()).sum::<usize>());
        let t = time(|| slices.iter().map(|s| tk.encode_ordinary(s).len()).sum::<usize>());
        row(
            &mut report,
            "slice encode",
            &format!("{len} B slices"),
            us(o),
            us(b),
            us(t),
            "µs per slice (ratio: peer/ours)",
            false,
        );
    }

    report.note(format!("machine: {}", compare::report::machine()));
    report.note(
        "ratios > 1 mean ours is better (throughput: ours/peer; time and memory: peer/ours). \
         Our backtracking trie is built on the first long piece and our per-token tables \
         fill on first use: the row `load o200k + first use` adds, for ours and \
         bpe-openai, the one-time cost of the first encodes of the five 1 MB worst cases \
         (first run minus the best of three later runs), and the second memory row is \
         taken after them. Corpus rows: the best of repeated runs in thread CPU time. Worst-case rows: best of interleaved runs, in thread CPU time. tiktoken-rs is \
         skipped on worst cases above 10 kB (quadratic). Interval rows: per-range time (minimum of 5 runs per \
         range) over 300 ranges; rust-gems' IntervalEncoding counts without \
         pre-tokenization (its counts differ from ours; each side is checked against its \
         own one-shot count).",
    );
    report.finish()?;
    Ok(())
}

/// The prependable encoder, character by character from the end, against
/// one-shot count.
fn prepend_rows(report: &mut Report, ours: &bpe::Tokenizer, text: &str) -> Result<()> {
    let prepend = || {
        let mut enc = bpe::PrependableEncoder::new(ours);
        for (i, c) in text.char_indices().rev() {
            enc.push_front(&text[i..i + c.len_utf8()]);
        }
        enc
    };
    let mut enc = prepend();
    ensure!(
        enc.tokens().collect::<Vec<_>>() == ours.encode(text),
        "prependable encoder tokens differ from one-shot"
    );
    let mbs = |s: f64| Some(text.len() as f64 / s / 1e6);
    let p = time(|| prepend().count());
    let c = time(|| ours.count(text));
    report.row(vec![
        json!("prependable encoder (char by char) vs one-shot count"),
        json!("first 100 kB of the first corpus"),
        opt(mbs(p)),
        json!("-"),
        json!("-"),
        json!("-"),
        json!("-"),
        json!(format!(
            "MB/s; one-shot count {:.2} MB/s, ratio {:.2}",
            text.len() as f64 / c / 1e6,
            c / p
        )),
    ]);
    Ok(())
}

/// Per-query seconds of `f` over `ranges`: each query's minimum over 5 runs
/// (the machine is noisy), sorted.
fn per_query(ranges: &[(usize, usize)], mut f: impl FnMut(usize, usize) -> usize) -> Vec<f64> {
    let mut out: Vec<f64> = ranges
        .iter()
        .map(|&(a, b)| {
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(f(a, b));
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Interval counting: ours (pre-tokenized, equal to `count` of the range)
/// against rust-gems' `IntervalEncoding` (bpe 0.2.3 on bpe-openai's o200k
/// dictionary, without pre-tokenization) on the same ranges: ~18 KB ranges
/// inside an 18 KB run of spaces between two prose paragraphs, and random
/// ranges of 10 B to 10 KB of prose.
fn interval_rows(
    report: &mut Report,
    ours: &bpe::Tokenizer,
    bo: &bpe_openai::Tokenizer,
    prose: &str,
) -> Result<()> {
    let prose = if prose.is_empty() { "Some prose stands in for the corpus. " } else { prose };
    let head = cut(prose, 20_000);
    let run = 18_000;
    let text = format!("{head}{}{}", " ".repeat(run), cut(&prose[head.len()..], 20_000));
    let mut rng = SmallRng::seed_from_u64(18);
    let ws: Vec<(usize, usize)> = (0..300)
        .map(|_| {
            let a = head.len() + rng.random_range(0..200);
            (a, head.len() + run - rng.random_range(0..200))
        })
        .collect();
    let prose_text = prose;
    let prose_ranges: Vec<(usize, usize)> = (0..300)
        .map(|_| {
            let len = rng.random_range(10..10_000usize);
            let a = rng.random_range(0..prose_text.len().saturating_sub(len).max(1));
            let a = (0..=a).rev().find(|&i| prose_text.is_char_boundary(i)).unwrap_or(0);
            let b = (a + len).min(prose_text.len());
            let b = (a..=b).rev().find(|&i| prose_text.is_char_boundary(i)).unwrap_or(a);
            (a, b)
        })
        .collect();
    for (input, text, ranges) in [
        ("~18 KB ranges in an 18 KB run of spaces", text.as_str(), &ws),
        ("random 10 B-10 KB ranges of prose", prose_text, &prose_ranges),
    ] {
        let t = Instant::now();
        let iv = bpe::IntervalEncoding::new(ours, text);
        let ours_pre = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let peer = peer_bpe::interval_encoding::IntervalEncoding::new(&bo.bpe, text.as_bytes());
        let peer_pre = t.elapsed().as_secs_f64();
        for &(a, b) in ranges.iter() {
            ensure!(
                iv.count(a..b) == ours.count(&text[a..b]),
                "interval count of {a}..{b} differs from one-shot"
            );
            ensure!(
                peer.count(a..b) == bo.bpe.count(&text.as_bytes()[a..b]),
                "rust-gems interval count of {a}..{b} differs from its own count"
            );
        }
        let o = per_query(ranges, |a, b| iv.count(a..b));
        let p = per_query(ranges, |a, b| peer.count(a..b));
        let us = |s: f64| Some(s * 1e6);
        for (what, q) in [("p50", 0.5), ("p99", 0.99)] {
            report.row(vec![
                json!(format!("interval count {what}")),
                json!(input),
                opt(us(percentile(&o, q))),
                json!("-"),
                json!("-"),
                json!("-"),
                json!("-"),
                json!(format!(
                    "µs per range; rust-gems IntervalEncoding {:.3} µs, ratio peer/ours {:.1}",
                    percentile(&p, q) * 1e6,
                    percentile(&p, q) / percentile(&o, q)
                )),
            ]);
        }
        report.note(format!(
            "interval preprocessing, {input}: ours {:.2} ms, rust-gems {:.2} ms ({} bytes)",
            ours_pre * 1e3,
            peer_pre * 1e3,
            text.len()
        ));
    }
    Ok(())
}

/// Text made of random ordinary o200k tokens whose bytes are valid UTF-8,
/// about `len` bytes long.
fn random_token_text(tok: &bpe::Tokenizer, len: usize, seed: u64) -> String {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = String::with_capacity(len + 64);
    while out.len() < len {
        let id = rng.random_range(0..199_998u32);
        if let Some(s) = tok.token_bytes(id).and_then(|b| std::str::from_utf8(b).ok()) {
            out.push_str(s);
        }
    }
    out
}
