//! `structgen jsonschema-suite`: the official JSON-Schema-Test-Suite layout,
//! run by [`structgen_cli::jsonsuite`]: each group's schema is compiled (or
//! gets an error kind), each instance serialized compactly and walked token
//! by token; it is correct when the verdict equals `valid`. A schema proven
//! unsatisfiable (no value validates) rejects every instance.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use serde_json::json;
use structgen_cli::jsonsuite::{Outcome, Runner, load};

use super::common::TokenizerSpec;

/// Arguments of `structgen jsonschema-suite`.
#[derive(Debug, Args)]
pub(crate) struct SuiteArgs {
    /// A directory of test files, such as `tests/draft2020-12`.
    pub(crate) dir: PathBuf,
    /// Print one JSON record per test group and a summary object last.
    #[arg(long)]
    pub(crate) json: bool,
    /// The tokenizer the instances are walked with: o200k, cl100k,
    /// PATH.tiktoken, PATH/tokenizer.json[.gz] or a directory holding
    /// tokenizer.json.
    #[arg(long, value_parser = TokenizerSpec::parse, default_value = "o200k")]
    pub(crate) tokenizer: TokenizerSpec,
}

pub(crate) fn run(args: SuiteArgs) -> Result<ExitCode> {
    let groups = load(&args.dir)?;
    let files: std::collections::BTreeSet<&str> = groups.iter().map(|g| g.file.as_str()).collect();
    let tok = Arc::new(args.tokenizer.load()?);
    let vocab = super::common::vocabulary(&tok, true)?;
    let runner = Runner::new(&vocab, &tok, jsonschema::Options::compact());
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut compiled, mut instances, mut correct) = (0usize, 0usize, 0usize);
    let (mut valid_rejected, mut invalid_accepted) = (0usize, 0usize);
    for g in &groups {
        instances += g.tests.len();
        let mut record = json!({"file": g.file, "group": g.index, "description": g.description});
        let outcome = runner.run(g);
        let status = match &outcome {
            Outcome::Refused { kind, message } => {
                record["error"] = json!(message);
                kind.clone()
            }
            Outcome::Unsatisfiable(message) => {
                record["error"] = json!(message);
                "unsatisfiable".to_string()
            }
            Outcome::Compiled(_) => {
                compiled += 1;
                "compiled".to_string()
            }
        };
        *kinds.entry(status.clone()).or_default() += 1;
        record["status"] = json!(status);
        if let Some(verdicts) = outcome.verdicts(g.tests.len()) {
            let mut ok = 0;
            for ((_, valid, _), accepted) in g.tests.iter().zip(verdicts) {
                match (*valid, accepted) {
                    (true, true) | (false, false) => ok += 1,
                    (false, true) => invalid_accepted += 1,
                    (true, false) => valid_rejected += 1,
                }
            }
            correct += ok;
            record["correct"] = json!(ok);
        }
        record["instances"] = json!(g.tests.len());
        if args.json {
            outln!("{record}");
        }
    }
    let summary = json!({
        "files": files.len(), "groups": groups.len(), "compiled": compiled, "status": kinds,
        "instances": instances, "correct": correct,
        "valid_rejected": valid_rejected, "invalid_accepted": invalid_accepted,
    });
    if args.json {
        outln!("{summary}");
    } else {
        outln!("{} files, {} groups: {compiled} compiled", files.len(), groups.len());
        for (k, n) in &kinds {
            outln!("  {k}: {n}");
        }
        outln!(
            "instances: {correct}/{instances} correct, {valid_rejected} valid rejected, \
             {invalid_accepted} invalid accepted"
        );
    }
    Ok(if invalid_accepted == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
