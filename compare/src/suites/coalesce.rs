//! `cargo xtask bench coalesce [FILE] [--stride K] [--limit N]`: forced
//! tokens on MaskBench, ours against llguidance 1.9.1's `compute_ff_tokens`,
//! on the Llama-3 and o200k tokenizers.
//!
//! Every `K`-th schema of the file (the dev split by default; `--stride 1`
//! for all) is compiled by both engines, with compact JSON (no whitespace:
//! our `Options::compact()` without `20.0` for `20`, llguidance's
//! `whitespace_flexible: false`) and with flexible whitespace (our
//! `llguidance_compat()`, llguidance's defaults). Each valid instance is
//! replayed from its canonical tokenization by a stand-in sampler: at each
//! step the engine's forced tokens are appended when there are some (a
//! non-canonical event when they are not a prefix of the remaining
//! canonical tokens; the replay then goes on with the document's token),
//! else one model call appends the next token. Instances both engines
//! replay to the end are counted. llguidance gets a token environment whose
//! tokenizer is our canonical BPE (equal to the reference tokenizers), so
//! it forces tokens too.
//!
//! Reported: the share of tokens forced (ours, llguidance, ratio),
//! non-canonical counts (ours must be 0), model calls saved per document,
//! the cost of one forced-token computation (µs per step, the time of
//! every computation divided by their number), and the .txt `Character`
//! example (9 tokens; 2 model calls in the post).

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use structgen::{Grammar, Matcher, Vocabulary};
use toktrie::TokenId;

use compare::report::Report;

/// llguidance's tokenizer environment with our canonical BPE as its
/// tokenizer (the approximate environment would force nothing).
struct CanonicalEnv {
    trie: peer_toktrie::TokTrie,
    tok: Arc<bpe::Tokenizer>,
}

impl peer_toktrie::TokenizerEnv for CanonicalEnv {
    fn tok_trie(&self) -> &peer_toktrie::TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<u32> {
        self.tok.encode_bytes(s)
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
    }
}

fn canonical_env(tok: &Arc<bpe::Tokenizer>, eos: u32) -> peer_toktrie::TokEnv {
    let approx = compare::peer::llg_tok_env(tok, eos);
    let trie = approx.tok_trie().clone();
    Arc::new(CanonicalEnv { trie, tok: tok.clone() })
}

/// Sums over the replayed documents of one engine.
#[derive(Default, Clone, Copy)]
struct Sums {
    tokens: usize,
    forced: usize,
    non_canonical: usize,
    calls: usize,
    steps: usize,
    us: f64,
}

impl Sums {
    fn add(&mut self, o: &Sums) {
        self.tokens += o.tokens;
        self.forced += o.forced;
        self.non_canonical += o.non_canonical;
        self.calls += o.calls;
        self.steps += o.steps;
        self.us += o.us;
    }

    fn share(&self) -> f64 {
        self.forced as f64 / self.tokens.max(1) as f64
    }
}

fn replay_ours(m: &mut Matcher, doc: &[u32]) -> Option<Sums> {
    let ids: Vec<TokenId> = doc.iter().map(|&t| TokenId(t)).collect();
    let s = structgen_cli::replay::replay(m, &ids).ok()?;
    Some(Sums {
        tokens: s.tokens,
        forced: s.forced_tokens,
        non_canonical: s.non_canonical,
        calls: s.model_calls,
        steps: s.forced_steps,
        us: s.forced_us,
    })
}

fn replay_llg(m: &mut llguidance::Matcher, doc: &[u32]) -> Option<Sums> {
    let mut s = Sums { tokens: doc.len(), ..Sums::default() };
    let mut i = 0;
    while i < doc.len() {
        let t0 = Instant::now();
        let ff = m.compute_ff_tokens();
        s.us += t0.elapsed().as_secs_f64() * 1e6;
        s.steps += 1;
        if m.is_error() {
            return None;
        }
        if !ff.is_empty() {
            if doc[i..].starts_with(&ff) {
                m.consume_tokens(&ff).ok()?;
                i += ff.len();
                s.forced += ff.len();
                continue;
            }
            s.non_canonical += 1;
        }
        m.consume_token(doc[i]).ok()?;
        s.calls += 1;
        i += 1;
    }
    Some(s)
}

struct Args {
    file: Option<PathBuf>,
    stride: usize,
    limit: usize,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args { file: None, stride: 3, limit: usize::MAX };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        let mut num = |what: &str| -> Result<usize> {
            it.next().and_then(|v| v.parse().ok()).with_context(|| format!("{what} needs a number"))
        };
        match x.as_str() {
            "--stride" => a.stride = num("--stride")?.max(1),
            "--limit" => a.limit = num("--limit")?,
            f if !f.starts_with('-') => a.file = Some(PathBuf::from(f)),
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(a)
}

/// One whitespace setting on both sides.
struct Mode {
    name: &'static str,
    ours: jsonschema::Options,
    /// llguidance's `x-guidance` options.
    llg: Value,
}

fn modes() -> Vec<Mode> {
    vec![
        Mode {
            name: "compact",
            ours: jsonschema::Options::compact().with_integer_zero_fraction(false),
            llg: json!({"whitespace_flexible": false}),
        },
        Mode {
            name: "flexible",
            ours: jsonschema::Options::llguidance_compat(),
            llg: json!({"whitespace_flexible": true}),
        },
    ]
}

/// The .txt post's Character example on both engines: (tokens, our model
/// calls, llguidance's model calls).
fn character(
    tok: &Arc<bpe::Tokenizer>,
    vocab: &Vocabulary,
    factory: &llguidance::ParserFactory,
) -> Result<(usize, Sums, Sums)> {
    let rx = r#"\{"name":("John"|"Paul"),"age":(20|30)\}"#;
    let doc = tok.encode(r#"{"name":"Paul","age":20}"#);
    let mut m = Matcher::new(vocab, &Grammar::regex(rx)?)?;
    let ours = replay_ours(&mut m, &doc).context("ours rejects the Character example")?;
    let top = llguidance::api::TopLevelGrammar::from_regex(rx);
    let mut lm = llguidance::Matcher::new(factory.create_parser(top));
    let theirs = replay_llg(&mut lm, &doc).context("llguidance rejects the Character example")?;
    Ok((doc.len(), ours, theirs))
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let a = parse(args)?;
    let raw = match &a.file {
        Some(f) => structgen_cli::io::read_maybe_gz(f)?,
        None => compare::shared::read("maskbench/dev.jsonl.gz")
            .context("the MaskBench dev split (../shared/data) is needed, or give a FILE")?,
    };
    let records: Vec<Value> = raw
        .lines()
        .enumerate()
        .filter(|(i, _)| i % a.stride == 0)
        .take(a.limit)
        .map(|(_, l)| Ok(serde_json::from_str(&l?)?))
        .collect::<Result<_>>()?;
    let mut tokenizers = Vec::new();
    if let Ok(json) = compare::shared::read("tokenizers/llama3.tokenizer.json.gz") {
        tokenizers.push(("llama3", Arc::new(bpe::Tokenizer::from_tokenizer_json(&json)?)));
    }
    tokenizers.push(("o200k", Arc::new(bpe::Tokenizer::o200k_base())));

    let mut report = Report::new(
        "coalesce",
        &[
            "tokenizer",
            "whitespace",
            "documents",
            "tokens",
            "forced ours",
            "forced llg",
            "ours/llg",
            "non-canonical ours",
            "non-canonical llg",
            "calls saved/doc ours",
            "calls saved/doc llg",
            "µs/step ours",
            "µs/step llg",
        ],
    );
    let mut summary = Vec::new();
    for (tname, tok) in &tokenizers {
        let (vocab, eos) = compare::peer::vocabulary(tok, false)?;
        let env = canonical_env(tok, eos);
        let factory = compare::peer::llg_factory(&env, &[])?;

        let (n, ours, theirs) = character(tok, &vocab, &factory)?;
        ensure!(ours.non_canonical == 0, "{tname}: non-canonical forced tokens on Character");
        report.row(vec![
            json!(tname),
            json!("Character (.txt)"),
            json!(1),
            json!(n),
            json!(format!("{} calls", ours.calls)),
            json!(format!("{} calls", theirs.calls)),
            json!(""),
            json!(ours.non_canonical),
            json!(theirs.non_canonical),
            json!(n - ours.calls),
            json!(n - theirs.calls),
            json!(format!("{:.2}", ours.us / ours.steps.max(1) as f64)),
            json!(format!("{:.2}", theirs.us / theirs.steps.max(1) as f64)),
        ]);

        for mode in modes() {
            let (mut docs, mut ours, mut theirs) = (0usize, Sums::default(), Sums::default());
            for rec in &records {
                let Ok(c) = jsonschema::compile(&rec["schema"], &mode.ours) else { continue };
                let Ok(g) = c.grammar.to_earley(earley::Limits::default()) else { continue };
                let g = Grammar::from_earley(g);
                let mut schema = rec["schema"].clone();
                if let Some(obj) = schema.as_object_mut() {
                    obj.insert("x-guidance".into(), mode.llg.clone());
                }
                let top = llguidance::api::TopLevelGrammar::from_json_schema(schema);
                let template = llguidance::Matcher::new(factory.create_parser(top));
                if template.is_error() {
                    continue;
                }
                for t in rec["tests"].as_array().into_iter().flatten() {
                    if t["valid"] != true {
                        continue;
                    }
                    let doc = tok.encode(&serde_json::to_string(&t["data"])?);
                    let mut m = Matcher::new(&vocab, &g)?;
                    let Some(o) = replay_ours(&mut m, &doc) else { continue };
                    let mut lm = template.deep_clone();
                    let Some(l) = replay_llg(&mut lm, &doc) else { continue };
                    docs += 1;
                    ours.add(&o);
                    theirs.add(&l);
                }
            }
            ensure!(docs > 0, "{tname} {}: no document replayed by both engines", mode.name);
            ensure!(
                ours.non_canonical == 0,
                "{tname} {}: {} non-canonical forced sequences",
                mode.name,
                ours.non_canonical
            );
            let per_doc = |s: &Sums| (s.tokens - s.calls) as f64 / docs as f64;
            let us = |s: &Sums| s.us / s.steps.max(1) as f64;
            report.row(vec![
                json!(tname),
                json!(mode.name),
                json!(docs),
                json!(ours.tokens),
                json!(format!("{:.2}%", 100.0 * ours.share())),
                json!(format!("{:.2}%", 100.0 * theirs.share())),
                json!(format!("{:.3}", ours.share() / theirs.share().max(1e-12))),
                json!(ours.non_canonical),
                json!(theirs.non_canonical),
                json!(format!("{:.2}", per_doc(&ours))),
                json!(format!("{:.2}", per_doc(&theirs))),
                json!(format!("{:.2}", us(&ours))),
                json!(format!("{:.2}", us(&theirs))),
            ]);
            summary.push(json!({
                "tokenizer": tname, "whitespace": mode.name, "documents": docs,
                "tokens": ours.tokens, "forced_ours": ours.forced, "forced_llg": theirs.forced,
                "non_canonical_ours": ours.non_canonical, "non_canonical_llg": theirs.non_canonical,
                "model_calls_ours": ours.calls, "model_calls_llg": theirs.calls,
                "us_per_step_ours": us(&ours), "us_per_step_llg": us(&theirs),
            }));
        }
    }
    report.note(format!(
        "{} schemas (every {}th of the file); valid instances replayed by both engines; \
         forced = tokens appended without a model call that were a prefix of the canonical rest; \
         µs/step = time of one forced-token computation (llguidance: compute_ff_tokens), mean.",
        records.len(),
        a.stride
    ));
    report.extra("summary", json!(summary));
    report.finish()?;
    Ok(())
}
