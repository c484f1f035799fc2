//! `cargo xtask bench structural`: masks of structural tags (free text
//! with triggered tool calls) against llguidance 1.9.1 on the same Lark
//! text (`StructuralTag::to_lark`, lazy lexemes), both with their default
//! slicers, and against an unconstrained step's bookkeeping (copying a full
//! bitmask row), on o200k and Llama-3.
//!
//! Cases: free text (a reasoning block and an answer in prose, with the
//! Hermes tool-call trigger live), and tool arguments (a required call
//! whose JSON arguments are most of the input). Every step first asserts
//! equal popcounts on both sides, then each mask is timed, ours then
//! llguidance's on the same state: ours written into the caller's bitmask
//! row (`Matcher::fill_bitmask`, what an engine calls), llguidance's
//! returned as its own vector; the popcounts are taken after the timers.
//!
//! Ours is reported three times. *Cold*: the first matcher of a freshly
//! compiled grammar on a vocabulary that has served nothing yet (its split
//! store cleared), which walks the trie at every lexer state it meets
//! first. *Warm*: the fastest of the later matchers of the same compiled
//! grammar (what an engine with a compile cache serves a repeated tool set
//! with), which take the split masks the earlier ones made (see the
//! `structgen` matcher's split masks). *New tools*: the first matcher of
//! another grammar, the same syntax with another tool list (a third tool,
//! listed first), after those: what an engine serves a request with a new
//! tool list with, its free text split by the earlier requests'
//! matchers. llguidance keeps nothing across its matchers: each of its
//! passes compiles the Lark text afresh, and its time is the fastest of
//! all passes.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::json;
use structgen::structural_tag::StructuralTag;
use structgen::structural_tag::presets::{self, PresetOptions, Tool, ToolChoice, ToolSyntax};
use structgen::{Grammar, Matcher, Vocabulary};
use toktrie::TokenId;

use compare::report::Report;

/// Passes per case: the first is ours cold, the rest ours warm.
const PASSES: usize = 4;

struct Vocab {
    name: &'static str,
    tokenizer: Arc<bpe::Tokenizer>,
    vocab: Vocabulary,
    peer: peer_toktrie::TokEnv,
}

fn vocab(name: &'static str, tokenizer: bpe::Tokenizer) -> Result<Vocab> {
    let tokenizer = Arc::new(tokenizer);
    let (vocab, eos) = compare::peer::vocabulary(&tokenizer, true)?;
    let peer = compare::peer::llg_tok_env(&tokenizer, eos);
    Ok(Vocab { name, tokenizer, vocab, peer })
}

/// The tools' schemas close their objects (`additionalProperties: false`),
/// as `compare/tests/it/structural_tag.rs` does: with open objects,
/// llguidance 1.9.1 also allows `\u` escapes in the first tokens of an
/// unknown key where ours does not (a documented JSON Schema difference,
/// not a structural-tag one), and the popcounts differ there.
fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "get_weather",
            json!({"type": "object", "properties": {"city": {"type": "string"},
                "unit": {"enum": ["c", "f"]}}, "required": ["city"],
                "additionalProperties": false}),
        ),
        Tool::new(
            "write_note",
            json!({"type": "object", "properties": {"title": {"type": "string"},
                "body": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["title", "body"], "additionalProperties": false}),
        ),
    ]
}

/// Another tool list for the same syntax: a third tool, listed first.
fn other_tools() -> Vec<Tool> {
    let mut t = vec![Tool::new(
        "search",
        json!({"type": "object", "properties": {"query": {"type": "string"}},
            "required": ["query"], "additionalProperties": false}),
    )];
    t.extend(tools());
    t
}

/// Prose: the start of Pride and Prejudice when the shared data is there.
fn prose() -> String {
    let fallback = "It is a truth universally acknowledged, that a single man in possession of a \
                    good fortune, must be in want of a wife. However little known the feelings or \
                    views of such a man may be on his first entering a neighbourhood, this truth \
                    is so well fixed in the minds of the surrounding families. ";
    match compare::shared::read("text/pride_and_prejudice.txt.gz") {
        Ok(b) => {
            let s = String::from_utf8_lossy(&b).into_owned();
            let start = s.find("It is a truth").unwrap_or(0);
            s[start..].chars().take(3000).collect()
        }
        Err(_) => fallback.repeat(8),
    }
}

struct Case {
    name: &'static str,
    tag: StructuralTag,
    /// The same syntax and choice with [`other_tools`].
    other: StructuralTag,
    input: String,
}

fn cases() -> Result<Vec<Case>> {
    let t = tools();
    let o = other_tools();
    let reasoning = PresetOptions::default().with_reasoning(true);
    let text = prose();
    let mid = (0..=text.len() / 2).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let (think, answer) = text.split_at(mid);
    let body = text.replace('"', "'").replace('\n', " ");
    let body: String = body.chars().take(1500).collect();
    Ok(vec![
        Case {
            name: "free text (hermes auto, reasoning)",
            tag: presets::structural_tag(ToolSyntax::Hermes, &t, &ToolChoice::Auto, &reasoning)?,
            other: presets::structural_tag(ToolSyntax::Hermes, &o, &ToolChoice::Auto, &reasoning)?,
            input: format!("<think>{think}</think>{answer}"),
        },
        Case {
            name: "tool arguments (hermes required)",
            tag: presets::structural_tag(
                ToolSyntax::Hermes,
                &t,
                &ToolChoice::Required,
                &PresetOptions::default(),
            )?,
            other: presets::structural_tag(
                ToolSyntax::Hermes,
                &o,
                &ToolChoice::Required,
                &PresetOptions::default(),
            )?,
            input: format!(
                "<tool_call>\n{{\"name\": \"write_note\", \"arguments\": {{\"title\": \"Notes\", \
                 \"body\": \"{body}\", \"tags\": [\"a\", \"b\"]}}}}\n</tool_call>"
            ),
        },
    ])
}

struct Stats {
    mean: f64,
    p99: f64,
}

fn stats(xs: &mut [f64]) -> Stats {
    xs.sort_by(f64::total_cmp);
    let n = xs.len().max(1);
    let mean = xs.iter().sum::<f64>() / n as f64;
    let p99 = xs.get(((xs.len().saturating_sub(1)) as f64 * 0.99).round() as usize).copied();
    Stats { mean, p99: p99.unwrap_or(0.0) }
}

/// The time of an unconstrained step's bookkeeping: copying a full bitmask
/// row of the vocabulary (µs, the fastest of many).
fn copy_time(words: usize) -> f64 {
    let full = vec![u32::MAX; words];
    let mut row = vec![0u32; words];
    let mut best = f64::INFINITY;
    for _ in 0..2000 {
        let start = Instant::now();
        row.copy_from_slice(std::hint::black_box(&full));
        std::hint::black_box(&mut row);
        best = best.min(start.elapsed().as_secs_f64() * 1e6);
    }
    best
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("usage: cargo xtask bench structural");
    }
    let mut report = Report::new(
        "structural",
        &[
            "vocabulary",
            "case",
            "masks",
            "ours warm mean µs",
            "ours cold mean µs",
            "llg mean µs",
            "warm mean ratio",
            "cold mean ratio",
            "new tools mean ratio",
            "ours warm p99 µs",
            "ours cold p99 µs",
            "llg p99 µs",
            "warm p99 ratio",
            "cold p99 ratio",
            "new tools p99 ratio",
            "row copy µs",
            "ours warm mean / copy",
            "row copy in the loop µs",
            "ours warm mean / copy in the loop",
            "ours compile+1st ms",
            "llg compile+1st ms",
        ],
    );
    let mut vocabs = vec![vocab("o200k", bpe::Tokenizer::o200k_base())?];
    match compare::shared::data_dir() {
        Some(_) => {
            let json = compare::shared::read("tokenizers/llama3.tokenizer.json.gz")?;
            vocabs.push(vocab("llama3", bpe::Tokenizer::from_tokenizer_json(&json)?)?);
        }
        None => report.note("Llama-3 and the prose skipped: ../shared/data is absent."),
    }
    let cases = cases()?;
    for v in &vocabs {
        let factory = compare::peer::llg_factory(
            &v.peer,
            &llguidance::earley::SlicedBiasComputer::general_slices(),
        )?;
        let copy = copy_time(v.vocab.bitmask_words());
        for case in &cases {
            let label = format!("{} / {}", v.name, case.name);
            let lark = case.tag.to_lark()?;
            let grammar = Grammar::from_earley(case.tag.compile(&Default::default())?);
            let peer_matcher = |lark: &str| -> Result<llguidance::Matcher> {
                let g = llguidance::api::TopLevelGrammar::from_lark(lark.to_owned());
                let m = llguidance::Matcher::new(factory.create_parser(g));
                if let Some(e) = m.get_error() {
                    bail!("llguidance: {e}");
                }
                Ok(m)
            };
            let tokens: Vec<TokenId> =
                v.tokenizer.encode(&case.input).into_iter().map(TokenId).collect();
            let steps = tokens.len() + 1;
            let mut t_cold = vec![f64::INFINITY; steps];
            // Cold means a vocabulary that has served nothing: no splits
            // from the cases before.
            v.vocab.clear_shared_splits();
            let (mut t_ours, mut t_peer) = (vec![f64::INFINITY; steps], vec![f64::INFINITY; steps]);
            let mut row = vec![0u32; v.vocab.bitmask_words()];
            // A row copy timed where our mask is, between llguidance's
            // masks and the tokens (caches as the peer and the step left
            // them, as an engine's forward pass leaves them), from a buffer
            // as long untouched as a kept mask.
            let copy_src = vec![u32::MAX; v.vocab.bitmask_words()];
            let mut copy_row = vec![0u32; v.vocab.bitmask_words()];
            let mut t_copy = vec![f64::INFINITY; steps];
            for pass in 0..PASSES {
                let mut ours = Matcher::new(&v.vocab, &grammar)?;
                let mut peer = peer_matcher(&lark)?;
                for step in 0..steps {
                    if pass > 0 {
                        let start = Instant::now();
                        copy_row.copy_from_slice(std::hint::black_box(&copy_src));
                        std::hint::black_box(&mut copy_row);
                        t_copy[step] = t_copy[step].min(start.elapsed().as_secs_f64() * 1e6);
                    }
                    // Each side's mask in hand: ours in the caller's row,
                    // llguidance's as the vector it returns.
                    let start = Instant::now();
                    ours.fill_bitmask(&mut row)?;
                    let t = start.elapsed().as_secs_f64() * 1e6;
                    let n_ours = row.iter().map(|w| w.count_ones() as usize).sum::<usize>();
                    match pass {
                        0 => t_cold[step] = t,
                        _ => t_ours[step] = t_ours[step].min(t),
                    }
                    let start = Instant::now();
                    let peer_mask = peer.compute_mask_or_eos()?;
                    t_peer[step] = t_peer[step].min(start.elapsed().as_secs_f64() * 1e6);
                    let n_peer = peer_mask.num_set();
                    ensure!(
                        n_ours == n_peer,
                        "{label}: step {step}: popcount {n_ours} vs {n_peer}"
                    );
                    if step < tokens.len() {
                        ours.consume_token(tokens[step]).with_context(|| label.clone())?;
                        peer.consume_token(tokens[step].0)?;
                    }
                }
                ensure!(ours.is_accepting(), "{label}: input not accepted");
            }
            // A request with another tool list: a new grammar, the first
            // matcher of it; its masks checked against the first grammar's
            // llguidance popcounts would differ (other tools), so against a
            // plain walk of its own.
            let other = Grammar::from_earley(case.other.compile(&Default::default())?);
            let other_lark = case.other.to_lark()?;
            let mut t_peer_new = vec![f64::INFINITY; steps];
            for _ in 0..2 {
                let mut peer = peer_matcher(&other_lark)?;
                for (step, t_step) in t_peer_new.iter_mut().enumerate() {
                    let start = Instant::now();
                    std::hint::black_box(peer.compute_mask_or_eos()?);
                    *t_step = t_step.min(start.elapsed().as_secs_f64() * 1e6);
                    if step < tokens.len() {
                        peer.consume_token(tokens[step].0)?;
                    }
                }
            }
            let mut t_new = vec![f64::INFINITY; steps];
            let mut ours = Matcher::new(&v.vocab, &other)?;
            let mut plain = Matcher::new(&v.vocab, &other)?.with_max_splits(0);
            let mut plain_row = vec![0u32; v.vocab.bitmask_words()];
            for (step, t_step) in t_new.iter_mut().enumerate() {
                let start = Instant::now();
                ours.fill_bitmask(&mut row)?;
                *t_step = start.elapsed().as_secs_f64() * 1e6;
                plain.fill_bitmask(&mut plain_row)?;
                ensure!(row == plain_row, "{label}: new tools, step {step}: masks differ");
                if step < tokens.len() {
                    ours.consume_token(tokens[step]).with_context(|| label.clone())?;
                    plain.consume_token(tokens[step])?;
                }
            }
            let start = Instant::now();
            let mut m = Matcher::new(
                &v.vocab,
                &Grammar::from_earley(case.tag.compile(&Default::default())?),
            )?;
            std::hint::black_box(m.compute_mask()?.count());
            let c_ours = start.elapsed().as_secs_f64() * 1e3;
            let start = Instant::now();
            let mut m = peer_matcher(&lark)?;
            std::hint::black_box(m.compute_mask()?.num_set());
            let c_peer = start.elapsed().as_secs_f64() * 1e3;
            let loop_copy = t_copy.iter().sum::<f64>() / steps as f64;
            let (so, sc, sp) = (stats(&mut t_ours), stats(&mut t_cold), stats(&mut t_peer));
            let (sn, spn) = (stats(&mut t_new), stats(&mut t_peer_new));
            report.row(vec![
                json!(v.name),
                json!(case.name),
                json!(steps),
                json!(so.mean),
                json!(sc.mean),
                json!(sp.mean),
                json!(so.mean / sp.mean),
                json!(sc.mean / sp.mean),
                json!(sn.mean / spn.mean),
                json!(so.p99),
                json!(sc.p99),
                json!(sp.p99),
                json!(so.p99 / sp.p99),
                json!(sc.p99 / sp.p99),
                json!(sn.p99 / spn.p99),
                json!(copy),
                json!(so.mean / copy),
                json!(loop_copy),
                json!(so.mean / loop_copy),
                json!(c_ours),
                json!(c_peer),
            ]);
        }
    }
    report.note(
        "Each mask: ours (JSON slicer) then llguidance (general slices) on the same state and \
         the same Lark text (StructuralTag::to_lark), 4 passes with fresh matchers. Ours cold: \
         the first matcher of the compiled grammar, the vocabulary's split store cleared; ours \
         warm: the fastest of the 3 later matchers of that grammar (they share split masks); \
         new tools: the first matcher of the same syntax with another tool list (a new \
         grammar; its masks checked against a plain walk), after those, against llguidance on \
         that grammar (the fastest of 2 passes); llguidance: the fastest of the 4 \
         passes, each compiling the Lark text afresh (it shares nothing across matchers). \
         ratio = ours / llguidance (lower is better). row copy: copying a full bitmask row \
         (the bookkeeping of an unconstrained step), the fastest of 2,000 in a row (caches \
         hot); row copy in the loop: the same copy timed at every step just before our mask \
         (caches as llguidance's mask and the step left them, as for our mask), the fastest \
         of the 3 warm passes per step, mean over the steps. compile+1st: one run each.",
    );
    report.note(format!("machine: {}", compare::report::machine()));
    report.finish()?;
    Ok(())
}
