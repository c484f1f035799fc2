//! The official JSON-Schema-Test-Suite (draft 2020-12), against a committed baseline.

use std::collections::BTreeMap;

use serde_json::Value;

use jsonschema::{Documents, Options, compile};

use crate::common::{Outcome, accepts, check_baseline, shared};

fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// The suite's `remotes` directory, as its README serves them: each file
/// under `http://localhost:1234/` and its path.
fn remotes(dir: &std::path::Path) -> Documents {
    let mut paths = Vec::new();
    files(dir, &mut paths);
    let mut docs = Documents::new();
    for p in paths {
        let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        docs.insert(&format!("http://localhost:1234/{rel}"), doc);
    }
    docs
}

#[test]
fn official_suite_draft2020_12() {
    let Some(dir) =
        shared("official_suite_draft2020_12", "json-schema-test-suite/tests/draft2020-12")
    else {
        return;
    };
    let Some(remote_dir) = shared("official_suite_draft2020_12", "json-schema-test-suite/remotes")
    else {
        return;
    };
    let options = Options::compact().with_documents(remotes(&remote_dir));
    let mut paths = Vec::new();
    files(&dir, &mut paths);
    let mut got = BTreeMap::new();
    let (mut compiled, mut groups, mut correct, mut total, mut invalid_accepted) = (0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for p in &paths {
        let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(p).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        for (gi, group) in doc.as_array().unwrap().iter().enumerate() {
            groups += 1;
            let tests = group["tests"].as_array().unwrap();
            let mut o = Outcome { status: String::new(), correct: 0, total: tests.len() };
            total += tests.len();
            match compile(&group["schema"], &options) {
                // An unsatisfiable schema rejects every instance.
                Err(e) if e.kind() == &jsonschema::ErrorKind::Unsatisfiable => {
                    o.status = e.kind().name().to_string();
                    o.correct = tests.iter().filter(|t| t["valid"] == Value::Bool(false)).count();
                }
                Err(e) => o.status = e.kind().name().to_string(),
                Ok(c) => {
                    compiled += 1;
                    o.status = "compiled".to_string();
                    for t in tests {
                        let valid = t["valid"].as_bool().unwrap();
                        let acc = accepts(&c, &t["data"]);
                        if acc == valid {
                            o.correct += 1;
                        } else if acc {
                            invalid_accepted += 1;
                            failures.push(format!(
                                "{rel}#{gi} {}: {}",
                                group["description"], t["description"]
                            ));
                        }
                    }
                }
            }
            correct += o.correct;
            got.insert(format!("{rel}#{gi}"), o);
        }
    }
    println!(
        "suite: {groups} groups, {compiled} compiled, {correct}/{total} instances correct, {invalid_accepted} invalid accepted"
    );
    assert!(failures.is_empty(), "invalid instances accepted:\n{}", failures.join("\n"));
    check_baseline("suite.tsv", &got);
}
