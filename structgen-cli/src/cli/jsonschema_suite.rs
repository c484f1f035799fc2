//! `structgen jsonschema-suite`: the official JSON-Schema-Test-Suite layout.
//!
//! Each file holds groups `{description, schema, tests: [{description, data,
//! valid}]}`. A group is compiled (or gets an error kind); each instance is
//! serialized compactly and fed byte by byte to the earley engine built from
//! the grammar; it is correct when the engine's verdict equals `valid`. A
//! schema proven unsatisfiable (no value validates) rejects every instance.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

/// Arguments of `structgen jsonschema-suite`.
#[derive(Debug, Args)]
pub(crate) struct SuiteArgs {
    /// A directory of test files, such as `tests/draft2020-12`.
    pub(crate) dir: PathBuf,
    /// Print one JSON record per test group and a summary object last.
    #[arg(long)]
    pub(crate) json: bool,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory `{}`", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    Ok(())
}

pub(crate) fn run(args: SuiteArgs) -> Result<ExitCode> {
    let mut files = Vec::new();
    collect(&args.dir, &mut files)?;
    let options = jsonschema::Options::compact();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut groups, mut compiled, mut instances, mut correct) = (0usize, 0usize, 0usize, 0usize);
    let (mut valid_rejected, mut invalid_accepted) = (0usize, 0usize);
    for path in &files {
        let rel = path.strip_prefix(&args.dir).unwrap_or(path).display().to_string();
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read `{rel}`"))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("`{rel}` is not JSON"))?;
        for (gi, group) in doc.as_array().into_iter().flatten().enumerate() {
            groups += 1;
            let tests = group["tests"].as_array().cloned().unwrap_or_default();
            instances += tests.len();
            let mut record = json!({"file": rel, "group": gi, "description": group["description"]});
            let engine = jsonschema::compile(&group["schema"], &options)
                .map_err(|e| (e.kind().name().to_string(), e.to_string()))
                .and_then(|c| {
                    c.grammar
                        .to_earley(earley::Limits::default())
                        .map_err(|e| ("engine".to_string(), e.to_string()))
                });
            match engine {
                Err((kind, message)) if kind == "unsatisfiable" => {
                    *kinds.entry(kind.clone()).or_default() += 1;
                    record["status"] = json!(kind);
                    record["error"] = json!(message);
                    let ok = tests.iter().filter(|t| t["valid"] == Value::Bool(false)).count();
                    valid_rejected += tests.len() - ok;
                    correct += ok;
                    record["correct"] = json!(ok);
                }
                Err((kind, message)) => {
                    *kinds.entry(kind.clone()).or_default() += 1;
                    record["status"] = json!(kind);
                    record["error"] = json!(message);
                }
                Ok(g) => {
                    compiled += 1;
                    *kinds.entry("compiled".to_string()).or_default() += 1;
                    record["status"] = json!("compiled");
                    let mut ok = 0;
                    for t in &tests {
                        let valid = t["valid"].as_bool().unwrap_or(false);
                        let data = serde_json::to_string(&t["data"])?;
                        // An engine limit counts as a rejection.
                        let accepted = g.accepts(data.as_bytes()).unwrap_or(false);
                        if accepted == valid {
                            ok += 1;
                        } else if accepted {
                            invalid_accepted += 1;
                        } else {
                            valid_rejected += 1;
                        }
                    }
                    correct += ok;
                    record["correct"] = json!(ok);
                }
            }
            record["instances"] = json!(tests.len());
            if args.json {
                println!("{record}");
            }
        }
    }
    let summary = json!({
        "files": files.len(), "groups": groups, "compiled": compiled, "status": kinds,
        "instances": instances, "correct": correct,
        "valid_rejected": valid_rejected, "invalid_accepted": invalid_accepted,
    });
    if args.json {
        println!("{summary}");
    } else {
        println!("{} files, {groups} groups: {compiled} compiled", files.len());
        for (k, n) in &kinds {
            println!("  {k}: {n}");
        }
        println!(
            "instances: {correct}/{instances} correct, {valid_rejected} valid rejected, {invalid_accepted} invalid accepted"
        );
    }
    Ok(if invalid_accepted == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
