//! `cargo xtask bench mask`: per-mask time of our matcher vs llguidance 1.9.1
//! with its slicer off, and both with their default (JSON) slicers on, on
//! regexes and Lark grammars, o200k and Llama-3.
//!
//! Every case first asserts that both engines give the same mask popcount at
//! every step (the differential test in `compare/tests/it/mask.rs` compares
//! the masks token for token), then times each mask of both engines on the
//! same state, alternating, and the compile + first mask of both.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::json;
use structgen::{Grammar, Matcher, Vocabulary};
use toktrie::{StateRecognizer, TokenId};

use compare::report::Report;

struct Vocab {
    name: &'static str,
    tokenizer: Arc<bpe::Tokenizer>,
    /// Ours, with our default JSON slicer.
    vocab: Vocabulary,
    /// Ours without a slicer (the plain walk from the first mask on).
    plain: Vocabulary,
    slicer: Arc<slicer::Slicer>,
    peer: peer_toktrie::TokEnv,
}

fn vocab(name: &'static str, tokenizer: bpe::Tokenizer) -> Result<Vocab> {
    let tokenizer = Arc::new(tokenizer);
    let (vocab, eos) = compare::peer::vocabulary(&tokenizer, true)?;
    let peer = compare::peer::llg_tok_env(&tokenizer, eos);
    let slicer = vocab.slicer().context("the JSON slicer")?.clone();
    let (plain, _) = compare::peer::vocabulary(&tokenizer, false)?;
    Ok(Vocab { name, tokenizer, vocab, plain, slicer, peer })
}

/// A matcher walking the whole trie (no slicer).
fn plain(v: &Vocab, g: &Grammar) -> Result<Matcher> {
    Ok(Matcher::new(&v.plain, g)?)
}

enum Kind {
    Regex(&'static str),
    Lark(String),
}

struct Case {
    name: String,
    kind: Kind,
    input: String,
}

fn cases() -> Result<Vec<Case>> {
    let mut cases = vec![
        Case {
            name: "regex: integer".into(),
            kind: Kind::Regex("-?[0-9]+"),
            input: "-12345678901234".into(),
        },
        Case {
            name: "regex: json object".into(),
            kind: Kind::Regex(
                r#"\{"name": "[a-zA-Z ]{1,40}", "age": [0-9]{1,3}, "email": "[a-z.]+@[a-z]+\.[a-z]{2,4}"\}"#,
            ),
            input: r#"{"name": "John Smith", "age": 42, "email": "john.smith@example.com"}"#.into(),
        },
        Case {
            name: "regex: free text".into(),
            kind: Kind::Regex("[^\\n]{0,200}\\n"),
            input: "It is a truth universally acknowledged, that a single man in possession \
                    of a good fortune, must be in want of a wife.\n"
                .into(),
        },
        Case {
            name: "lark: arithmetic".into(),
            kind: Kind::Lark(
                "start: expr\nexpr: term ((\"+\"|\"-\") term)*\nterm: NUMBER | \"(\" expr \")\"\n\
                 NUMBER: /[0-9]+/\n%ignore /[ \\t]+/\n"
                    .into(),
            ),
            input: "12 + (3 - 4) + 5 - (((6 + 7) - 8) + 9) + 1000".into(),
        },
    ];
    if let Some(dir) = compare::shared::data_dir() {
        let read = |p: &str| -> Result<String> {
            std::fs::read_to_string(dir.join(p)).with_context(|| format!("reading {p}"))
        };
        cases.push(Case {
            name: "lark: syncode json".into(),
            kind: Kind::Lark(read("grammars/lark/syncode/json_grammar.lark")?),
            input: r#"{"name": "structgen", "tags": ["fast", "exact"], "version": 1.5, "ok": true, "deps": {"derivre": "0.3", "x": null}}"#.into(),
        });
        cases.push(Case {
            name: "lark: syncode calc".into(),
            kind: Kind::Lark(read("grammars/lark/syncode/calc_grammar.lark")?),
            input: "1 + 2 * (3 - 4.5) / 6 - ((7))".into(),
        });
        cases.push(Case {
            name: "lark: llguidance rfc (xml)".into(),
            kind: Kind::Lark(read("grammars/lark/llguidance/rfc.lark")?),
            input: read("grammars/lark/llguidance/rfc.xml")?,
        });
    }
    Ok(cases)
}

fn ours_grammar(kind: &Kind) -> Result<Grammar> {
    Ok(match kind {
        Kind::Regex(rx) => Grammar::regex(rx)?,
        Kind::Lark(src) => Grammar::lark(src)?,
    })
}

fn peer_grammar(kind: &Kind) -> llguidance::api::TopLevelGrammar {
    match kind {
        Kind::Regex(rx) => llguidance::api::TopLevelGrammar::from_regex(rx),
        Kind::Lark(src) => llguidance::api::TopLevelGrammar::from_lark(src.clone()),
    }
}

/// llguidance's parser factory for a vocabulary, made once per vocabulary
/// (like our trie). No slices: the slicer is switched off (slicing is
/// measured separately).
/// Passes over each input (per step, the fastest pass is kept) and runs of
/// compile + first mask (101, so that their p99 is not just the slowest
/// run): the machine is shared and noisy.
const PASSES: usize = 5;
const COMPILE_RUNS: usize = 101;

/// Counts the trie nodes the parser accepts in a walk (the mask walk keeps
/// no counter of its own).
struct Counting<'a> {
    parser: &'a mut earley::Parser,
    accepted: u64,
}

impl StateRecognizer for Counting<'_> {
    type State = earley::Frame;

    fn start(&mut self) -> earley::Frame {
        StateRecognizer::start(self.parser)
    }

    fn step(&mut self, state: earley::Frame, byte: u8) -> Option<earley::Frame> {
        let next = StateRecognizer::step(self.parser, state, byte);
        self.accepted += next.is_some() as u64;
        next
    }
}

/// The share of trie nodes that reach the parser, over the masks along
/// `tokens`: Earley rows (computed or reused) per trie node the recognizer
/// accepted. Measured on a parser of its own, outside the timed runs.
fn node_share(v: &Vocab, grammar: &Grammar, tokens: &[TokenId]) -> Result<(u64, u64)> {
    let trie = v.vocab.trie().clone();
    let mut parser =
        earley::Parser::new(grammar.earley(), &move |name| trie.special_by_name(name))?;
    let trie = v.vocab.trie();
    let mut mask = trie.token_set();
    let (mut rows, mut accepted) = (0, 0);
    for step in 0..=tokens.len() {
        parser.begin_step();
        let before = parser.stats();
        let mut counting = Counting { parser: &mut parser, accepted: 0 };
        trie.compute_mask_by_state(&mut counting, &mut mask);
        accepted += counting.accepted;
        let after = parser.stats();
        rows +=
            (after.rows_computed + after.rows_reused) - (before.rows_computed + before.rows_reused);
        let Some(&t) = tokens.get(step) else { break };
        match trie.token_bytes(t) {
            Some(bytes) => {
                for &b in bytes {
                    ensure!(parser.try_consume_byte(b)?, "node share: byte rejected");
                }
            }
            None => ensure!(parser.try_consume_special(t)?, "node share: special rejected"),
        }
    }
    Ok((rows, accepted.max(1)))
}

fn peer_factory(v: &Vocab, slices: &[String]) -> Result<llguidance::ParserFactory> {
    compare::peer::llg_factory(&v.peer, slices)
}

fn peer_matcher(factory: &llguidance::ParserFactory, kind: &Kind) -> Result<llguidance::Matcher> {
    let m = llguidance::Matcher::new(factory.create_parser(peer_grammar(kind)));
    if let Some(e) = m.get_error() {
        bail!("llguidance: {e}");
    }
    Ok(m)
}

struct Stats {
    mean: f64,
    p99: f64,
    max: f64,
}

fn stats(xs: &mut [f64]) -> Stats {
    xs.sort_by(f64::total_cmp);
    let n = xs.len().max(1);
    let mean = xs.iter().sum::<f64>() / n as f64;
    let p99 = xs.get(((xs.len().saturating_sub(1)) as f64 * 0.99).round() as usize).copied();
    Stats { mean, p99: p99.unwrap_or(0.0), max: xs.last().copied().unwrap_or(0.0) }
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    // An optional filter: only the cases whose "vocabulary / grammar" label
    // contains it (for quick before/after runs of one case).
    let filter = match args {
        [] => None,
        [f] => Some(f.as_str()),
        _ => bail!("usage: cargo xtask bench mask [FILTER]"),
    };
    let mut report = Report::new(
        "mask",
        &[
            "vocabulary",
            "grammar",
            "masks",
            "ours mean µs",
            "peer mean µs",
            "mean ratio",
            "ours p99 µs",
            "peer p99 µs",
            "p99 ratio",
            "ours max µs",
            "peer max µs",
            "rows / pushed bytes",
            "ours compile+1st ms",
            "peer compile+1st ms",
            "compile ratio",
            "ours compile+1st p99 ms",
            "peer compile+1st p99 ms",
            "compile p99 ratio",
            "ours+slicer mean µs",
            "llg+slicer mean µs",
            "slicer mean ratio",
            "ours+slicer p99 µs",
            "llg+slicer p99 µs",
            "slicer p99 ratio",
            "ours+slicer max µs",
            "llg+slicer max µs",
            "sliced masks %",
        ],
    );
    let mut vocabs = vec![vocab("o200k", bpe::Tokenizer::o200k_base())?];
    match compare::shared::data_dir() {
        Some(_) => {
            let json = compare::shared::read("tokenizers/llama3.tokenizer.json.gz")?;
            vocabs.push(vocab("llama3", bpe::Tokenizer::from_tokenizer_json(&json)?)?);
        }
        None => report.note("Llama-3 and the shared grammars skipped: ../shared/data is absent."),
    }
    let cases = cases()?;
    let mut all = Vec::new();
    for v in &vocabs {
        let factory = peer_factory(v, &[])?;
        let sliced_factory =
            peer_factory(v, &llguidance::earley::SlicedBiasComputer::general_slices())?;
        report.note(format!(
            "{}: our slicer built in {:.0} ms, {:.1} MB",
            v.name,
            v.slicer.build_time().as_secs_f64() * 1e3,
            v.slicer.memory_bytes() as f64 / 1e6
        ));
        for case in &cases {
            let label = format!("{} / {}", v.name, case.name);
            if filter.is_some_and(|f| !label.contains(f)) {
                continue;
            }
            let tokens: Vec<TokenId> =
                v.tokenizer.encode(&case.input).into_iter().map(TokenId).collect();
            let grammar = ours_grammar(&case.kind).with_context(|| label.clone())?;
            // PASSES passes over the input with fresh matchers; per step, the
            // fastest of them (the machine is shared and noisy).
            let steps = tokens.len() + 1;
            let (mut t_ours, mut t_peer) = (vec![f64::INFINITY; steps], vec![f64::INFINITY; steps]);
            let (mut t_ours_s, mut t_peer_s) =
                (vec![f64::INFINITY; steps], vec![f64::INFINITY; steps]);
            let mut sliced = structgen::SlicerStats::default();
            let (mut rows, mut pushed) = (0u64, 0u64);
            for pass in 0..PASSES {
                let mut ours = plain(v, &grammar)?;
                let mut peer = peer_matcher(&factory, &case.kind)?;
                let mut ours_s = Matcher::new(&v.vocab, &grammar)?;
                let mut peer_s = peer_matcher(&sliced_factory, &case.kind)?;
                for step in 0..steps {
                    let start = Instant::now();
                    let n_ours_s = ours_s.compute_mask()?.count();
                    t_ours_s[step] = t_ours_s[step].min(start.elapsed().as_secs_f64() * 1e6);
                    let start = Instant::now();
                    let n_peer_s = peer_s.compute_mask_or_eos()?.num_set();
                    t_peer_s[step] = t_peer_s[step].min(start.elapsed().as_secs_f64() * 1e6);
                    let start = Instant::now();
                    let n_ours = ours.compute_mask()?.count();
                    t_ours[step] = t_ours[step].min(start.elapsed().as_secs_f64() * 1e6);
                    let start = Instant::now();
                    let n_peer = peer.compute_mask_or_eos()?.num_set();
                    t_peer[step] = t_peer[step].min(start.elapsed().as_secs_f64() * 1e6);
                    ensure!(
                        n_ours == n_peer,
                        "{label}: step {step}: popcount {n_ours} vs {n_peer}"
                    );
                    ensure!(n_ours > 0, "{label}: empty mask at step {step}");
                    ensure!(
                        (n_ours_s, n_peer_s) == (n_ours, n_peer),
                        "{label}: step {step}: popcounts with slicers {n_ours_s}, {n_peer_s}"
                    );
                    if step < tokens.len() {
                        ours.consume_token(tokens[step])?;
                        peer.consume_token(tokens[step].0)?;
                        ours_s.consume_token(tokens[step])?;
                        peer_s.consume_token(tokens[step].0)?;
                    }
                }
                ensure!(ours.is_accepting(), "{label}: input not accepted");
                if pass == 0 {
                    sliced = ours_s.slicer_stats().unwrap_or_default();
                    (rows, pushed) = node_share(v, &grammar, &tokens)?;
                }
            }
            // compile + first mask, COMPILE_RUNS interleaved runs each
            let (mut c_ours, mut c_peer) = (Vec::new(), Vec::new());
            for _ in 0..COMPILE_RUNS {
                let start = Instant::now();
                let g = ours_grammar(&case.kind)?;
                let mut m = plain(v, &g)?;
                std::hint::black_box(m.compute_mask()?.count());
                c_ours.push(start.elapsed().as_secs_f64() * 1e3);
                let start = Instant::now();
                let mut m = peer_matcher(&factory, &case.kind)?;
                std::hint::black_box(m.compute_mask()?.num_set());
                c_peer.push(start.elapsed().as_secs_f64() * 1e3);
            }
            let (so, sp) = (stats(&mut t_ours), stats(&mut t_peer));
            let (co, cp) = (stats(&mut c_ours), stats(&mut c_peer));
            let (sos, sps) = (stats(&mut t_ours_s), stats(&mut t_peer_s));
            report.row(vec![
                json!(v.name),
                json!(case.name),
                json!(t_ours.len()),
                json!(so.mean),
                json!(sp.mean),
                json!(so.mean / sp.mean),
                json!(so.p99),
                json!(sp.p99),
                json!(so.p99 / sp.p99),
                json!(so.max),
                json!(sp.max),
                json!(rows as f64 / pushed as f64),
                json!(co.mean),
                json!(cp.mean),
                json!(co.mean / cp.mean),
                json!(co.p99),
                json!(cp.p99),
                json!(co.p99 / cp.p99),
                json!(sos.mean),
                json!(sps.mean),
                json!(sos.mean / sps.mean),
                json!(sos.p99),
                json!(sps.p99),
                json!(sos.p99 / sps.p99),
                json!(sos.max),
                json!(sps.max),
                json!(100.0 * sliced.masks_sliced as f64 / sliced.masks.max(1) as f64),
            ]);
            all.push((so.mean, sp.mean));
        }
    }
    // A batch of matchers (Matcher is Send): masks computed one after the
    // other, then in parallel with rayon.
    {
        use rayon::prelude::*;
        let v = &vocabs[0];
        // JSON when the shared grammars are present (large masks), else arithmetic.
        let case = cases
            .iter()
            .find(|c| c.name.contains("json_grammar") || c.name == "lark: syncode json")
            .or_else(|| cases.iter().find(|c| matches!(c.kind, Kind::Lark(_))))
            .context("a Lark case")?;
        let grammar = ours_grammar(&case.kind)?;
        let tokens: Vec<TokenId> =
            v.tokenizer.encode(&case.input).into_iter().map(TokenId).collect();
        let mut batch: Vec<Matcher> = Vec::new();
        for i in 0..8 {
            let mut m = plain(v, &grammar)?;
            m.consume_tokens(&tokens[..(i * tokens.len() / 8)])?;
            batch.push(m);
        }
        // Fresh copies, so that no mask is served from a matcher's cache.
        let mut seq = batch.clone();
        let start = Instant::now();
        let n_seq: usize = seq.iter_mut().map(|m| m.compute_mask().map_or(0, |x| x.count())).sum();
        let t_seq = start.elapsed().as_secs_f64() * 1e3;
        let mut par = batch.clone();
        let start = Instant::now();
        let n_par: usize =
            par.par_iter_mut().map(|m| m.compute_mask().map_or(0, |x| x.count())).sum();
        let t_par = start.elapsed().as_secs_f64() * 1e3;
        ensure!(n_seq == n_par && n_seq > 0, "batch masks differ");
        report.note(format!(
            "batch of 8 matchers ({} / {}): sequential {t_seq:.2} ms, rayon {t_par:.2} ms on {} threads",
            v.name,
            case.name,
            rayon::current_num_threads()
        ));
        report.extra("batch ms", json!({"sequential": t_seq, "rayon": t_par}));
    }
    let geo = (all.iter().map(|(a, b)| (a / b).ln()).sum::<f64>() / all.len().max(1) as f64).exp();
    report.note(format!("geometric mean of mean-time ratios (ours / peer): {geo:.2}"));
    report.extra("geomean mean ratio", json!(geo));
    report.note(
        "Each mask: the fastest of 5 passes over the input with fresh matchers, ours then \
         llguidance on the same state (slicer off: no slices; the +slicer columns: ours with \
         slicer::SlicerConfig::json and llguidance with its general slices, the same four regexes; \
         sliced masks %: our masks with a slice answered from its precomputed mask); ratio = ours / peer (lower is better). rows / pushed bytes: parser rows \
         (computed or reused) per trie node the recognizer accepted over the masks of the \
         input (counted on a separate parser), i.e. the share of trie nodes that reached the \
         parser. compile+1st: grammar compile + matcher + first mask, 101 runs (p99: the second slowest).",
    );
    report.note(format!("machine: {}", compare::report::machine()));
    report.finish()?;
    Ok(())
}
