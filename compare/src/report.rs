//! The report every benchmark suite writes: a Markdown table on standard
//! output and in `target/bench/<suite>.md`, and the same rows as JSON in
//! `target/bench/<suite>.json`.
//!
//! Rows are free-form columns; suites put the ratio to the peer in a column of
//! its own so that a reader sees at a glance who is ahead.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// A benchmark report under construction.
#[derive(Debug)]
pub struct Report {
    suite: String,
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
    notes: Vec<String>,
    extra: Map<String, Value>,
}

impl Report {
    /// A new, empty report for `suite` with the given column names.
    pub fn new(suite: &str, columns: &[&str]) -> Report {
        Report {
            suite: suite.to_owned(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Adds a row; it must have one value per column.
    ///
    /// # Panics
    /// When the row's length differs from the number of columns: a bug in the
    /// suite, not bad input.
    pub fn row(&mut self, values: Vec<Value>) {
        assert_eq!(values.len(), self.columns.len(), "row width differs from the header");
        self.rows.push(values);
    }

    /// Adds a line printed under the table (machine, inputs, caveats).
    pub fn note(&mut self, line: impl Into<String>) {
        self.notes.push(line.into());
    }

    /// Adds a top-level key to the JSON file (a summary beside the rows).
    pub fn extra(&mut self, key: &str, value: Value) {
        self.extra.insert(key.to_owned(), value);
    }

    /// The table as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = format!("## {}\n\n", self.suite);
        out.push_str(&format!("| {} |\n", self.columns.join(" | ")));
        out.push_str(&format!("|{}\n", " --- |".repeat(self.columns.len())));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(cell).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                out.push_str(&format!("{note}\n"));
            }
        }
        out
    }

    /// The report as JSON: suite, columns, rows (as objects), notes, extras.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let obj: Map<String, Value> =
                    self.columns.iter().cloned().zip(row.iter().cloned()).collect();
                Value::Object(obj)
            })
            .collect();
        let mut out = json!({
            "suite": self.suite,
            "columns": self.columns,
            "rows": rows,
            "notes": self.notes,
            "machine": machine(),
        });
        if let Value::Object(map) = &mut out {
            map.extend(self.extra.clone());
        }
        out
    }

    /// Prints the Markdown table and writes both files under `target/bench/`.
    pub fn finish(&self) -> std::io::Result<PathBuf> {
        let md = self.markdown();
        print!("{md}");
        let dir = bench_dir();
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("{}.md", self.suite)), md)?;
        let path = dir.join(format!("{}.json", self.suite));
        let text = serde_json::to_string_pretty(&self.to_json()).map_err(std::io::Error::other)?;
        std::fs::write(&path, text)?;
        println!("\nwrote {}", path.display());
        Ok(path)
    }
}

fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format_float(f),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Three significant digits, enough for noisy timings.
fn format_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return f.to_string();
    }
    let digits = (2 - f.abs().log10().floor() as i32).max(0) as usize;
    format!("{f:.digits$}")
}

/// `target/bench` of the workspace (or of `CARGO_TARGET_DIR`), where every
/// suite writes its report and extra files.
pub fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("bench")
}

/// A one-line description of the machine the numbers come from.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    format!("{cpu}, {cores} cores, {}", std::env::consts::ARCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_has_header_rows_and_notes() {
        let mut r = Report::new("demo", &["input", "ours µs", "ratio"]);
        r.row(vec![json!("prose"), json!(12.3456), json!(0.5)]);
        r.note("machine: test");
        let md = r.markdown();
        assert!(md.contains("| input | ours µs | ratio |"));
        assert!(md.contains("| prose | 12.3 | 0.500 |"));
        assert!(md.ends_with("machine: test\n"));
        assert_eq!(r.to_json()["rows"][0]["input"], "prose");
    }
}
