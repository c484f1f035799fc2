//! `structgen demo`: generate a document under a grammar, token by token.
//!
//! No model ships with the project, so a stand-in sampler picks among the
//! allowed tokens at random (seeded); the point is to show the masks at work:
//! every token is drawn from the mask, the result parses, and each mask's
//! time is printed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::TokenId;

use super::mask::{load_either, summary};
use structgen::Matcher;

/// The bundled example: a small record, as a Lark grammar.
const EXAMPLE: &str = r#"
start: "{\"name\": " NAME ", \"age\": " AGE ", \"tags\": [" tags "]}"
tags: (TAG (", " TAG){0,3})?
NAME: /"[A-Z][a-z]{1,10}( [A-Z][a-z]{1,10})?"/
AGE: /[1-9][0-9]?/
TAG: /"[a-z]{2,8}"/
"#;

/// Arguments of `structgen demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// The grammar (.lark, .gbnf or .regex); a bundled example when absent.
    #[arg(long, conflicts_with = "structure")]
    pub(crate) grammar: Option<PathBuf>,
    /// A structural tag or tool-call preset request (JSON; see `structgen
    /// mask --help`).
    #[arg(long)]
    pub(crate) structure: Option<PathBuf>,
    /// The seed of the stand-in sampler.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// The most tokens to generate.
    #[arg(long, default_value_t = 300)]
    pub(crate) max_tokens: usize,
}

pub(crate) fn run(args: DemoArgs) -> Result<ExitCode> {
    let grammar = match load_either(args.grammar.as_deref(), args.structure.as_deref())? {
        Some(g) => g,
        None => structgen::Grammar::lark(EXAMPLE)
            .map_err(|e| anyhow::anyhow!("bundled example: {e}"))?,
    };
    let tok = Arc::new(bpe::Tokenizer::o200k_base());
    let vocab = structgen::Vocabulary::from_tokenizer(tok.clone())?;
    let eos: Vec<TokenId> = vocab.stop_tokens().to_vec();
    let start = Instant::now();
    let mut m = Matcher::new(&vocab, &grammar)?;
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut rng = SmallRng::seed_from_u64(args.seed);
    let mut out: Vec<u8> = Vec::new();
    let mut times = Vec::new();
    let mut ended = false;
    for _ in 0..args.max_tokens {
        let t0 = Instant::now();
        let mask = m.compute_mask()?;
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        let allowed: Vec<TokenId> = mask.iter().collect();
        if allowed.is_empty() {
            bail!("the grammar allows no token here (a dead end under greedy lexing)");
        }
        let eos_allowed = allowed.iter().any(|t| eos.contains(t));
        // Stop at the first chance with probability 1/2, as a model would.
        let t = if eos_allowed && (allowed.len() == 1 || rng.random_bool(0.5)) {
            ended = true;
            break;
        } else {
            loop {
                let t = allowed[rng.random_range(0..allowed.len())];
                if !eos.contains(&t) {
                    break t;
                }
            }
        };
        m.consume_token(t)?;
        out.extend_from_slice(tok.token_bytes(t.0).unwrap_or(b""));
    }
    println!("{}", String::from_utf8_lossy(&out));
    println!("---");
    let parses = grammar.accepts(&out);
    println!(
        "{} tokens, {}; parses: {}",
        m.num_tokens(),
        if ended { "ended with EOS" } else { "stopped at --max-tokens" },
        if parses { "yes" } else { "no" }
    );
    println!("compile + matcher: {compile_ms:.2} ms; {}", summary(&mut times));
    Ok(if ended && parses { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
