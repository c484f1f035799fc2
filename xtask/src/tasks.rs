//! `cargo xtask codegen tasks [--check]`: the task file of `structgen
//! generate --eval` (`generate/tasks/maskbench-dev.jsonl`), built from the
//! MaskBench dev schemas in the shared corpora.
//!
//! Selection is deterministic: for each subset in [`QUOTAS`], the schemas
//! (in file order) that a small model can answer within 512 tokens (an
//! object schema of at most [`MAX_PROPERTIES`] properties whose smallest
//! valid test instance is at most [`MAX_INSTANCE`] bytes, no remote
//! references, at most [`MAX_SCHEMA`] bytes), taken at an even stride.
//! Each prompt describes the object from the schema: its title or
//! description, then each property with its type, bounds, allowed values
//! and description. Nothing of the test instances goes into the prompt.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// Where the task file goes, from the workspace root.
pub(crate) const OUT: &str = "generate/tasks/maskbench-dev.jsonl";

/// Tasks per MaskBench subset (file-name prefix before `---` or the last
/// `_`).
const QUOTAS: &[(&str, usize)] = &[
    ("Glaiveai2K", 26),
    ("JME", 10),
    ("Github_trivial", 10),
    ("Github_easy", 18),
    ("Github_medium", 13),
    ("Kubernetes", 8),
    ("Snowplow", 10),
    ("JsonSchemaStore", 10),
    ("BFCL_simple", 10),
    ("WashingtonPost", 5),
];

const MAX_PROPERTIES: usize = 10;
const MAX_INSTANCE: usize = 600;
const MAX_SCHEMA: usize = 4_000;
/// The longest description quoted in a prompt, in characters.
const MAX_DESCRIPTION: usize = 160;

fn subset(name: &str) -> &str {
    match name.split_once("---") {
        Some((s, _)) => s,
        None => name.rsplit_once('_').map_or(name, |(s, _)| s),
    }
}

/// Whether `s` (a schema) refers to anything outside the document.
fn remote_ref(s: &Value) -> bool {
    match s {
        Value::Object(m) => m.iter().any(|(k, v)| {
            (k == "$ref" && v.as_str().is_some_and(|r| !r.starts_with('#'))) || remote_ref(v)
        }),
        Value::Array(a) => a.iter().any(remote_ref),
        _ => false,
    }
}

/// The schema's size in bytes, and its smallest valid instance's.
fn candidate(line: &Value) -> Option<Value> {
    let name = line.get("name")?.as_str()?;
    let schema = line.get("schema")?;
    let props = schema.get("properties")?.as_object()?;
    if props.is_empty() || props.len() > MAX_PROPERTIES || remote_ref(schema) {
        return None;
    }
    if schema.get("type").is_some_and(|t| t != "object") {
        return None;
    }
    if schema.to_string().len() > MAX_SCHEMA {
        return None;
    }
    let smallest = line
        .get("tests")?
        .as_array()?
        .iter()
        .filter(|t| t.get("valid") == Some(&Value::Bool(true)))
        .filter_map(|t| t.get("data"))
        .filter(|d| d.is_object())
        .map(|d| d.to_string().len())
        .min()?;
    if smallest > MAX_INSTANCE {
        return None;
    }
    Some(json!({"id": name, "prompt": prompt(name, schema), "schema": schema}))
}

fn clip(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= MAX_DESCRIPTION {
        return text;
    }
    let cut: String = text.chars().take(MAX_DESCRIPTION).collect();
    format!("{}…", cut.trim_end())
}

/// A short description of a schema's values (`text`, `an integer from 1`,
/// `one of "a", "b"`, `a list of 1 to 3 items, each item a number`, ...).
fn kind(s: &Value, depth: usize) -> String {
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let shown: Vec<String> = values.iter().take(8).map(Value::to_string).collect();
        let more = if values.len() > 8 { ", …" } else { "" };
        return format!("one of {}{more}", shown.join(", "));
    }
    if let Some(c) = s.get("const") {
        return format!("exactly {c}");
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ if s.get("properties").is_some() => vec!["object"],
        _ => vec![],
    };
    let mut parts: Vec<String> = Vec::new();
    for t in &types {
        let mut p = match *t {
            "string" => match s.get("format").and_then(Value::as_str) {
                Some(f) => format!("a {f} string"),
                None => "text".to_owned(),
            },
            "integer" => "an integer".to_owned(),
            "number" => "a number".to_owned(),
            "boolean" => "true or false".to_owned(),
            "null" => "null".to_owned(),
            "array" => {
                let count = list_count(s);
                match s.get("items") {
                    Some(items) if depth < 2 => {
                        format!("a list of {count}, each item {}", kind(items, depth + 1))
                    }
                    _ => format!("a list of {count}"),
                }
            }
            "object" => match s.get("properties").and_then(Value::as_object) {
                Some(p) if !p.is_empty() => {
                    let keys: Vec<String> = p.keys().take(8).map(|k| format!("\"{k}\"")).collect();
                    format!("an object with {}", keys.join(", "))
                }
                _ => "an object".to_owned(),
            },
            other => other.to_owned(),
        };
        let bound = |k: &str| s.get(k).filter(|v| v.is_number()).map(Value::to_string);
        if matches!(*t, "integer" | "number") {
            match (bound("minimum"), bound("maximum")) {
                (Some(a), Some(b)) => write!(p, " from {a} to {b}").unwrap_or(()),
                (Some(a), None) => write!(p, " of at least {a}").unwrap_or(()),
                (None, Some(b)) => write!(p, " of at most {b}").unwrap_or(()),
                _ => {}
            }
        }
        if *t == "string" {
            if let Some(m) = bound("maxLength") {
                write!(p, " of at most {m} characters").unwrap_or(());
            }
            if let Some(pat) = s.get("pattern").and_then(Value::as_str) {
                write!(p, " matching /{pat}/").unwrap_or(());
            }
        }
        parts.push(p);
    }
    if parts.is_empty() { "any value".to_owned() } else { parts.join(" or ") }
}

/// How many items a prompt asks a list for: one to three, within the
/// schema's `minItems`/`maxItems`. A request names a size, as a user
/// would; a small model told only "a list" tends to repeat its first item
/// until the token limit.
fn list_count(s: &Value) -> String {
    let get = |k: &str| s.get(k).and_then(Value::as_u64);
    if get("maxItems") == Some(0) {
        return "no items (empty)".to_owned();
    }
    let lo = get("minItems").unwrap_or(1).max(1);
    let hi = get("maxItems").unwrap_or(u64::MAX).min(lo.max(3)).max(lo);
    match (lo, hi) {
        (1, 1) => "exactly one item".to_owned(),
        (a, b) if a == b => format!("exactly {a} items"),
        (a, b) => format!("{a} to {b} items"),
    }
}

/// The function a Glaive schema gives the arguments of: its file name
/// without the subset and the hash (`Glaiveai2K---calculate_area_0b98.json`).
fn function_name(id: &str) -> Option<&str> {
    let rest = id.strip_prefix("Glaiveai2K---")?.strip_suffix(".json")?;
    Some(rest.rsplit_once('_').map_or(rest, |(f, _)| f))
}

/// The prompt of a schema: what the object is, then one line per property.
fn prompt(id: &str, schema: &Value) -> String {
    let about = ["description", "title"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_str))
        .map(clip);
    let mut text = match (about, function_name(id)) {
        (Some(a), _) => format!("Write a JSON object for this: {a}\n"),
        (None, Some(f)) => {
            format!("Write the arguments of a call to the function `{f}` as a JSON object.\n")
        }
        (None, None) => "Write a JSON object with realistic values.\n".to_owned(),
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    text.push_str("Its fields:\n");
    for (key, prop) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let need = if required.contains(&key.as_str()) { ", required" } else { "" };
        write!(text, "- \"{key}\" ({}{need})", kind(prop, 0)).unwrap_or(());
        if let Some(d) = prop.get("description").and_then(Value::as_str) {
            write!(text, ": {}", clip(d)).unwrap_or(());
        }
        text.push('\n');
    }
    text.push_str("Answer with the JSON object only.");
    text
}

/// The task file's text.
pub(crate) fn generate(dev_jsonl: &str) -> Result<String> {
    let mut by_subset: Vec<Vec<Value>> = vec![Vec::new(); QUOTAS.len()];
    for (i, line) in dev_jsonl.lines().enumerate() {
        let v: Value = serde_json::from_str(line).with_context(|| format!("dev line {}", i + 1))?;
        let Some(name) = v.get("name").and_then(Value::as_str) else { continue };
        let Some(k) = QUOTAS.iter().position(|(s, _)| *s == subset(name)) else { continue };
        if let Some(task) = candidate(&v) {
            by_subset[k].push(task);
        }
    }
    let mut out = String::new();
    for ((name, quota), found) in QUOTAS.iter().zip(&by_subset) {
        if found.len() < *quota {
            bail!("subset {name}: {} candidates for a quota of {quota}", found.len());
        }
        for j in 0..*quota {
            out.push_str(&found[j * found.len() / quota].to_string());
            out.push('\n');
        }
    }
    Ok(out)
}

/// Writes (or with `check`, compares) the task file.
pub(crate) fn codegen(root: &Path, check: bool) -> Result<()> {
    let dev = testkit::data_dir()
        .context("the shared corpora are absent (set STRUCTGEN_SHARED)")?
        .join("maskbench/dev.jsonl.gz");
    let text = String::from_utf8(testkit::read(&dev)).context("dev.jsonl.gz is not UTF-8")?;
    let want = generate(&text)?;
    let path = root.join(OUT);
    if check {
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            bail!("{OUT} is stale: run `cargo xtask codegen tasks`");
        }
        println!("{OUT}: up to date");
    } else {
        std::fs::create_dir_all(path.parent().context("no parent")?)?;
        std::fs::write(&path, &want)?;
        println!("{OUT}: {} tasks", want.lines().count());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_task_file_is_up_to_date() {
        let Some(dev) = testkit::data_path_or_skip("task file", "maskbench/dev.jsonl.gz") else {
            return;
        };
        let text = String::from_utf8(testkit::read(&dev)).unwrap();
        let want = super::generate(&text).unwrap();
        let root = crate::workspace_root();
        let have = std::fs::read_to_string(root.join(super::OUT)).unwrap_or_default();
        assert!(have == want, "{} is stale: run `cargo xtask codegen tasks`", super::OUT);
        assert!(want.lines().count() >= 100);
    }
}
