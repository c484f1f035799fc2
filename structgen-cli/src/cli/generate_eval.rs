//! `structgen generate --eval TASKS.jsonl`: every task generated under its
//! schema (and, on request, with forcing off and without a grammar), each
//! output checked by an independent validator (the `jsonschema` crate from
//! crates.io, formats asserted), and the figures the issue asks for:
//! validity, outputs ending at the token limit, tokens/s, forward passes
//! saved by forcing, mask + forcing time as a share of total time, and
//! forcing on vs off outputs compared token by token.
//!
//! Each task's prompt runs its forward pass once; every run of the task
//! starts from that KV cache and counts the pass in its figures.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use generate::{Format, Generation, Generator, Params, StopReason};
use serde_json::{Value, json};

use super::common::read_maybe_gz;
use super::generate::GenerateArgs;

/// One line of the task file.
struct Task {
    id: String,
    messages: Vec<Value>,
    schema: Value,
}

fn read_tasks(path: &Path) -> Result<Vec<Task>> {
    let text = String::from_utf8(read_maybe_gz(path)?)
        .with_context(|| format!("`{}` is not UTF-8", path.display()))?;
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = || format!("{}:{}", path.display(), i + 1);
        let v: Value = serde_json::from_str(line).with_context(|| format!("{}: not JSON", at()))?;
        let messages = match (v.get("messages"), v.get("prompt").and_then(Value::as_str)) {
            (Some(Value::Array(m)), _) => m.clone(),
            (_, Some(p)) => vec![json!({"role": "user", "content": p})],
            _ => bail!("{}: no \"prompt\" string or \"messages\" list", at()),
        };
        let schema =
            v.get("schema").cloned().with_context(|| format!("{}: no \"schema\"", at()))?;
        let id =
            v.get("id").and_then(Value::as_str).map_or_else(|| format!("{}", i + 1), str::to_owned);
        tasks.push(Task { id, messages, schema });
    }
    Ok(tasks)
}

/// What the independent validator says about an output.
#[derive(Clone, Copy, Default)]
struct Check {
    /// The output is one JSON document.
    json: bool,
    /// It is valid against the schema.
    valid: bool,
}

fn check(validator: Option<&json_validator::Validator>, output: &str) -> Check {
    let Ok(doc) = serde_json::from_str::<Value>(output.trim()) else { return Check::default() };
    Check { json: true, valid: validator.is_some_and(|v| v.is_valid(&doc)) }
}

/// The per-run fields of the report.
fn run_json(g: &Generation, c: Check) -> Value {
    let mut v = super::generate::figures(g);
    v["json"] = json!(c.json);
    v["valid"] = json!(c.valid);
    v["mask_forced_share"] = json!((g.mask_ms + g.forced_ms) / g.total_ms.max(1e-9));
    v
}

/// Totals of one mode over the tasks.
#[derive(Default)]
struct Totals {
    runs: usize,
    json: usize,
    valid: usize,
    at_limit: usize,
    generated: usize,
    forced: usize,
    passes: usize,
    decode_ms: f64,
    total_ms: f64,
    share_sum: f64,
    share_max: f64,
}

impl Totals {
    fn add(&mut self, g: &Generation, c: Check) {
        self.runs += 1;
        self.json += usize::from(c.json);
        self.valid += usize::from(c.valid);
        self.at_limit += usize::from(g.stop_reason == StopReason::MaxTokens);
        self.generated += g.generated_tokens;
        self.forced += g.forced_tokens;
        self.passes += g.forward_passes;
        self.decode_ms += g.total_ms - g.prefill_ms;
        self.total_ms += g.total_ms;
        let share = (g.mask_ms + g.forced_ms) / g.total_ms.max(1e-9);
        self.share_sum += share;
        self.share_max = self.share_max.max(share);
    }

    fn json(&self) -> Value {
        let n = self.runs.max(1) as f64;
        json!({
            "runs": self.runs,
            "json_rate": self.json as f64 / n,
            "valid_rate": self.valid as f64 / n,
            "valid": self.valid,
            "ended_at_max_tokens": self.at_limit,
            "generated_tokens": self.generated,
            "forced_tokens": self.forced,
            "forced_share": self.forced as f64 / self.generated.max(1) as f64,
            "forward_passes": self.passes,
            "total_ms": self.total_ms,
            "tokens_per_s": self.generated as f64 * 1e3 / self.decode_ms.max(1e-9),
            "mask_forced_share_mean": self.share_sum / n,
            "mask_forced_share_max": self.share_max,
        })
    }

    fn line(&self, name: &str) -> String {
        let n = self.runs.max(1) as f64;
        format!(
            "| {name} | {}/{} ({:.1}%) | {}/{} | {} | {} ({:.1}% forced) | {} | {:.1} | {:.2}% / {:.2}% | {:.0} |",
            self.valid,
            self.runs,
            100.0 * self.valid as f64 / n,
            self.json,
            self.runs,
            self.at_limit,
            self.generated,
            100.0 * self.forced as f64 / self.generated.max(1) as f64,
            self.passes,
            self.generated as f64 * 1e3 / self.decode_ms.max(1e-9),
            100.0 * self.share_sum / n,
            100.0 * self.share_max,
            self.total_ms / 1e3,
        )
    }
}

/// Forcing on vs off on one task: where the token sequences first differ
/// and why.
fn compare(on: &Generation, off: &Generation) -> Value {
    let first = on.steps.iter().zip(&off.steps).position(|(a, b)| a.token != b.token);
    let first = first.or_else(|| {
        (on.steps.len() != off.steps.len()).then(|| on.steps.len().min(off.steps.len()))
    });
    let Some(i) = first else {
        return json!({"identical": true, "same_text": on.output == off.output});
    };
    // At a forced step the model (forcing off) preferred another token than
    // the canonical one the grammar forced; at a sampled step in both runs
    // the logits differed (a batched pass against single-token passes).
    let kind = match (on.steps.get(i), off.steps.get(i)) {
        (Some(a), _) if a.forced => "forced_token_not_the_models_choice",
        (Some(_), Some(_)) => "sampled_token_differs",
        _ => "length_differs",
    };
    json!({
        "identical": false,
        "same_text": on.output == off.output,
        "first_difference": i,
        "kind": kind,
        "gap_forcing_off": off.steps.get(i).and_then(|s| s.gap),
        "gap_forcing_on": on.steps.get(i).and_then(|s| s.gap),
    })
}

pub(crate) fn run(
    generator: &Generator,
    args: &GenerateArgs,
    path: &Path,
    load_ms: f64,
) -> Result<ExitCode> {
    let mut tasks = read_tasks(path)?;
    if let Some(n) = args.limit {
        tasks.truncate(n);
    }
    let params = Params::default()
        .with_sampling(args.temperature, args.top_p, args.seed)
        .with_repeat_penalty(args.repeat_penalty, args.repeat_last_n)
        .with_max_tokens(args.max_tokens)
        .with_forcing(!args.no_forcing);
    let mut on = Totals::default();
    let mut off = Totals::default();
    let mut free = Totals::default();
    let (mut identical, mut same_text, mut compared) = (0usize, 0usize, 0usize);
    let mut differences = Vec::new();
    let mut out = std::io::stdout().lock();
    for (k, task) in tasks.iter().enumerate() {
        let grammar = Format::JsonSchema(task.schema.clone())
            .compile()
            .with_context(|| format!("task {}: the schema does not compile", task.id))?;
        let validator =
            json_validator::options().should_validate_formats(true).build(&task.schema).ok();
        let text = generator.chat_prompt(&task.messages, None)?;
        let pre = generator.prefill(&generator.encode_prompt(&text))?;
        let g = generator.generate_after(&pre, Some(&grammar), &params)?;
        let c = check(validator.as_ref(), &g.output);
        on.add(&g, c);
        let mut entry = json!({"id": task.id, "validator": validator.is_some(), "constrained": run_json(&g, c)});
        if args.compare_forcing {
            let other = params.clone().with_forcing(!params.forcing);
            let h = generator.generate_after(&pre, Some(&grammar), &other)?;
            let ch = check(validator.as_ref(), &h.output);
            off.add(&h, ch);
            let (f_on, f_off) = if params.forcing { (&g, &h) } else { (&h, &g) };
            let cmp = compare(f_on, f_off);
            compared += 1;
            identical += usize::from(cmp["identical"] == json!(true));
            same_text += usize::from(cmp["same_text"] == json!(true));
            if cmp["identical"] == json!(false) {
                differences.push(json!({"id": task.id, "comparison": cmp}));
            }
            entry["other_forcing"] = run_json(&h, ch);
            entry["comparison"] = cmp;
        }
        if args.unconstrained {
            let u = generator.generate_after(&pre, None, &params)?;
            let cu = check(validator.as_ref(), &u.output);
            free.add(&u, cu);
            entry["unconstrained"] = run_json(&u, cu);
        }
        eprintln!(
            "[{}/{}] {}: {} tokens ({} forced), {} passes, {:.1} s, mask + forcing {:.2}%, {}{}",
            k + 1,
            tasks.len(),
            task.id,
            g.generated_tokens,
            g.forced_tokens,
            g.forward_passes,
            g.total_ms / 1e3,
            100.0 * (g.mask_ms + g.forced_ms) / g.total_ms.max(1e-9),
            if c.valid {
                "valid"
            } else if c.json {
                "JSON, INVALID"
            } else {
                "NOT JSON"
            },
            if g.stop_reason == StopReason::MaxTokens { ", AT THE TOKEN LIMIT" } else { "" },
        );
        if args.json {
            // One line per task as it ends, so a long run that is stopped
            // still leaves every finished task's figures.
            writeln!(out, "{}", json!({"task": entry}))?;
            out.flush()?;
        }
    }
    let (on_name, off_name) =
        if params.forcing { ("forcing on", "forcing off") } else { ("forcing off", "forcing on") };
    let mut summary = json!({
        "tasks": tasks.len(),
        "max_tokens": args.max_tokens,
        "load_ms": load_ms,
        "constrained": on.json(),
        "forcing": params.forcing,
    });
    if args.compare_forcing {
        let (a, b) = if params.forcing { (&on, &off) } else { (&off, &on) };
        summary["other_forcing"] = off.json();
        summary["forcing_comparison"] = json!({
            "tasks": compared,
            "identical_tokens": identical,
            "identical_text": same_text,
            "forward_passes_on": a.passes,
            "forward_passes_off": b.passes,
            "passes_saved_share": 1.0 - a.passes as f64 / b.passes.max(1) as f64,
            "forced_share": a.forced as f64 / a.generated.max(1) as f64,
            "total_ms_on": a.total_ms,
            "total_ms_off": b.total_ms,
            "time_saved_share": 1.0 - a.total_ms / b.total_ms.max(1e-9),
            "differences": differences,
        });
    }
    if args.unconstrained {
        summary["unconstrained"] = free.json();
    }
    if args.json {
        writeln!(out, "{}", json!({"summary": summary}))?;
    } else {
        writeln!(
            out,
            "{} tasks, --max-tokens {}, model loaded in {:.0} ms\n",
            tasks.len(),
            args.max_tokens,
            load_ms
        )?;
        writeln!(
            out,
            "| run | valid (independent validator) | JSON | at token limit | tokens | forward passes | tokens/s | mask + forcing share, mean / max | total s |"
        )?;
        writeln!(out, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")?;
        writeln!(out, "{}", on.line(&format!("constrained, {on_name}")))?;
        if args.compare_forcing {
            writeln!(out, "{}", off.line(&format!("constrained, {off_name}")))?;
        }
        if args.unconstrained {
            writeln!(out, "{}", free.line("unconstrained"))?;
        }
        if let Some(c) = summary.get("forcing_comparison") {
            writeln!(
                out,
                "\nforcing on vs off: forward passes {} vs {} ({:.1}% fewer; forced tokens {:.1}% of \
                 the output), time {:.0} vs {:.0} s ({:.1}% less); identical tokens in {}/{} tasks, \
                 identical text in {}/{}",
                c["forward_passes_on"],
                c["forward_passes_off"],
                100.0 * c["passes_saved_share"].as_f64().unwrap_or(0.0),
                100.0 * c["forced_share"].as_f64().unwrap_or(0.0),
                c["total_ms_on"].as_f64().unwrap_or(0.0) / 1e3,
                c["total_ms_off"].as_f64().unwrap_or(0.0) / 1e3,
                100.0 * c["time_saved_share"].as_f64().unwrap_or(0.0),
                identical,
                compared,
                same_text,
                compared,
            )?;
            for d in c["differences"].as_array().into_iter().flatten() {
                writeln!(out, "  {}: {}", d["id"], d["comparison"])?;
            }
        }
    }
    let all_valid = on.valid == on.runs && on.at_limit == 0;
    Ok(if all_valid { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
