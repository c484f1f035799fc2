//! Seed inputs from the shared corpora (`../shared/data`): the grammars,
//! the JSON Schema test suite's schemas and their patterns, the golden
//! tokenizer inputs. Reading files is this harness's business, never the
//! libraries'.

use std::fs;
use std::path::Path;

use crate::Target;

/// The seeds of `target` found under `data` (the shared data folder);
/// empty when the folder lacks them. Tokenizer files are not used as
/// seeds (megabytes each: a mutant of one costs a second), the built-in
/// seeds stand for them.
pub fn load(data: &Path, target: Target) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    match target {
        Target::Lark | Target::Matcher => files(&data.join("grammars/lark"), "lark", &mut out),
        Target::Gbnf => files(&data.join("grammars/gbnf"), "gbnf", &mut out),
        Target::JsonSchema | Target::Regex => {
            let mut jsons = Vec::new();
            files(&data.join("json-schema-test-suite"), "json", &mut jsons);
            for j in jsons {
                let Ok(v) = serde_json::from_slice::<serde_json::Value>(&j) else { continue };
                let Some(groups) = v.as_array() else { continue };
                for g in groups {
                    if let Some(schema) = g.get("schema") {
                        if target == Target::JsonSchema {
                            out.push(schema.to_string().into_bytes());
                        } else {
                            patterns(schema, &mut out);
                        }
                    }
                }
            }
        }
        Target::TokenizerJson | Target::Tiktoken => {}
        Target::Trace => traces(&data.join("traces"), &mut out),
    }
    if target == Target::Matcher {
        // A grammar, the separator, a short token stream.
        for s in &mut out {
            s.extend_from_slice(&[0xFF, 1, 2, 3, 9, 17, 4, 8, 5]);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The first lines of each gzipped trace, in windows of eight requests
/// (a whole trace is megabytes; the mutants stay small).
fn traces(dir: &Path, out: &mut Vec<Vec<u8>>) {
    use std::io::Read;
    let mut gz = Vec::new();
    files(dir, "gz", &mut gz);
    for bytes in gz {
        let mut text = Vec::new();
        let reader = flate2::read::GzDecoder::new(bytes.as_slice());
        if reader.take(64 << 10).read_to_end(&mut text).is_err() && text.is_empty() {
            continue;
        }
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').take(64).collect();
        for window in lines.chunks(8) {
            out.push(window.join(&b'\n'));
        }
    }
}

fn files(dir: &Path, ext: &str, out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext)
            && let Ok(bytes) = fs::read(&p)
        {
            out.push(bytes);
        }
    }
}

fn patterns(v: &serde_json::Value, out: &mut Vec<Vec<u8>>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k == "pattern"
                    && let Some(p) = x.as_str()
                {
                    out.push(p.as_bytes().to_vec());
                }
                patterns(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| patterns(x, out)),
        _ => {}
    }
}
