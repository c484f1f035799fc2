//! `structgen demo`: generate a document under a grammar or schema, token
//! by token.
//!
//! No model ships with the project, so a stand-in sampler picks among the
//! allowed tokens at random (seeded); the point is to show the masks at
//! work: every token is drawn from the mask, the result parses, and the
//! compile and mask times are printed. A uniform pick among 200,000 tokens
//! would wander: JSON whitespace is bounded by default (one short run
//! around each `{ } [ ] , :`), strings without `maxLength` are capped at 16
//! characters (`--max-string-length`), and the sampler leans toward
//! closing and ending (see [`pick`]), so a document finishes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::TokenId;

use super::common::{Defaults, LimitArgs, SchemaArgs, TokenizerSpec, load_grammar, summary};
use structgen::Matcher;

/// The bundled example: a small record, as a Lark grammar.
const EXAMPLE: &str = r#"
start: "{\"name\": " NAME ", \"age\": " AGE ", \"tags\": [" tags "]}"
tags: (TAG (", " TAG){0,3})?
NAME: /"[A-Z][a-z]{1,10}( [A-Z][a-z]{1,10})?"/
AGE: /[1-9][0-9]?/
TAG: /"[a-z]{2,8}"/
"#;

/// The cap on strings without `maxLength` unless `--max-string-length`.
const DEMO_STRING_LENGTH: usize = 16;

/// Arguments of `structgen demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// The grammar (.lark, .gbnf, .regex, or .json for a JSON Schema); a
    /// bundled example when neither it nor --schema is given.
    #[arg(long)]
    pub(crate) grammar: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
    /// A structural tag or tool-call preset request (JSON; see `structgen
    /// mask --help`), instead of --grammar or --schema.
    #[arg(long, conflicts_with_all = ["grammar", "schema"])]
    pub(crate) structure: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    /// o200k, cl100k, PATH.tiktoken, PATH/tokenizer.json[.gz] or a
    /// directory holding tokenizer.json.
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
    /// The seed of the stand-in sampler.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// The most tokens to generate.
    #[arg(long, default_value_t = 300)]
    pub(crate) max_tokens: usize,
}

/// Whether a token only closes things: its bytes are JSON punctuation
/// that ends a value, a key or a container (`"`, `,`, `:`, `}`, `]`) and
/// whitespace, with at least one of the former.
fn closes(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| !b.is_ascii_whitespace())
        && bytes.iter().all(|b| b.is_ascii_whitespace() || b"\",:}]".contains(b))
}

/// Picks the next token among `allowed`, or `None` to stop (allowed when
/// `can_stop`). A model's choices are far from uniform: it ends when it
/// can, more often than not, and it closes what it opened. The stand-in
/// does the same with a seeded coin: it stops with probability 1/2 when it
/// may; otherwise, with probability 1/2, it picks among the tokens that
/// only close (see [`closes`]), and else draws uniformly, skipping tokens
/// of whitespace alone (up to 8 draws). So strings, numbers, keys and
/// containers end after a few tokens.
fn pick<'a>(
    rng: &mut SmallRng,
    allowed: &[TokenId],
    can_stop: bool,
    bytes: &dyn Fn(TokenId) -> &'a [u8],
) -> Option<TokenId> {
    if can_stop && (allowed.is_empty() || rng.random_bool(0.5)) {
        return None;
    }
    if rng.random_bool(0.5) {
        let closers: Vec<TokenId> = allowed.iter().copied().filter(|&t| closes(bytes(t))).collect();
        if !closers.is_empty() {
            return Some(closers[rng.random_range(0..closers.len())]);
        }
    }
    let mut t = allowed[rng.random_range(0..allowed.len())];
    for _ in 0..8 {
        if !bytes(t).iter().all(u8::is_ascii_whitespace) {
            break;
        }
        t = allowed[rng.random_range(0..allowed.len())];
    }
    Some(t)
}

pub(crate) fn run(args: DemoArgs) -> Result<ExitCode> {
    let mut defaults = Defaults {
        schema: jsonschema::Options::default(),
        lark_json: jsonschema::Options::llguidance_compat()
            .with_whitespace(jsonschema::Whitespace::bounded()),
    };
    defaults.schema.max_string_length = Some(DEMO_STRING_LENGTH);
    defaults.lark_json.max_string_length = Some(DEMO_STRING_LENGTH);
    let tok = Arc::new(args.tokenizer.load()?);
    let (grammar, compile_ms) = if let Some(s) = &args.structure {
        let l = super::common::load_structure(s, &tok)?;
        (l.grammar, l.compile_time.as_secs_f64() * 1e3)
    } else if args.grammar.is_some() || args.schema.schema.is_some() {
        let l = load_grammar(args.grammar.as_deref(), &args.schema, &args.limits, &defaults)?;
        (l.grammar, l.compile_time.as_secs_f64() * 1e3)
    } else {
        let started = Instant::now();
        let g = structgen::Grammar::lark(EXAMPLE)
            .map_err(|e| anyhow::anyhow!("bundled example: {e}"))?;
        (g, started.elapsed().as_secs_f64() * 1e3)
    };
    let vocab = structgen::Vocabulary::from_tokenizer(tok.clone())?;
    let started = Instant::now();
    let mut m = Matcher::new(&vocab, &grammar)?;
    let matcher_ms = started.elapsed().as_secs_f64() * 1e3;
    let stop: Vec<TokenId> = m.stop_tokens().to_vec();
    let bytes = |t: TokenId| tok.token_bytes(t.0).unwrap_or_default();
    let mut rng = SmallRng::seed_from_u64(args.seed);
    let mut out: Vec<u8> = Vec::new();
    let mut times = Vec::new();
    let mut ended = false;
    for _ in 0..args.max_tokens {
        let t0 = Instant::now();
        let mask = m.compute_mask()?;
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        let can_stop = stop.iter().any(|&t| mask.contains(t));
        let allowed: Vec<TokenId> = mask.iter().filter(|t| !stop.contains(t)).collect();
        if allowed.is_empty() && !can_stop {
            bail!("the grammar allows no token here (a dead end under greedy lexing)");
        }
        let Some(t) = pick(&mut rng, &allowed, can_stop, &bytes) else {
            ended = true;
            break;
        };
        m.consume_token(t)?;
        out.extend_from_slice(tok.token_bytes(t.0).unwrap_or(b""));
    }
    outln!("{}", String::from_utf8_lossy(&out));
    outln!("---");
    let parses = grammar.accepts(&out);
    outln!(
        "{} tokens, {}; parses: {}",
        m.num_tokens(),
        if ended { "ended with EOS" } else { "stopped at --max-tokens" },
        if parses { "yes" } else { "no" }
    );
    outln!("compile {compile_ms:.2} ms, matcher {matcher_ms:.2} ms; {}", summary(&mut times));
    Ok(if ended && parses { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
