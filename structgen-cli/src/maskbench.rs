//! MaskBench files and the token walk of every MaskBench harness (`structgen
//! maskbench`, the `maskbench`, `ttfm`, `batch` and `coalesce` benchmark
//! suites and the differential tests of `compare`).
//!
//! A MaskBench file (guidance-ai/jsonschemabench's MaskBench set, as JSON
//! lines, optionally gzipped) holds one record a line:
//! `{"name", "schema", "tests": [{"valid", "data"}, …]}`. An instance is
//! the compact serialization of its `data` (`serde_json::to_string`, as
//! llguidance's harness does), tokenized and walked token by token.

use std::fmt;
use std::time::Instant;

use serde_json::{Value, json};
use structgen::Matcher;
use toktrie::TokenId;

/// One instance of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// Whether the schema must accept it.
    pub valid: bool,
    /// Its compact JSON text.
    pub text: String,
}

/// One record (one schema) of a MaskBench file.
#[derive(Clone, Debug)]
pub struct Record {
    /// Its index among the file's records (blank lines skipped), from 0.
    pub index: usize,
    /// Its line in the file, from 1.
    pub line: usize,
    /// The schema's name (`Github_easy---o1234.json`).
    pub name: String,
    /// The schema.
    pub schema: Value,
    /// The instances, in file order.
    pub tests: Vec<Instance>,
}

/// A line that is not a MaskBench record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for RecordError {}

/// The records of a MaskBench file's bytes (already gunzipped), in order.
/// An instance without a boolean `valid` counts as invalid.
pub fn records(bytes: &[u8]) -> impl Iterator<Item = Result<Record, RecordError>> + '_ {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
        .enumerate()
        .map(|(index, (i, l))| parse(index, i + 1, l))
}

fn parse(index: usize, line: usize, text: &[u8]) -> Result<Record, RecordError> {
    let err = |message: String| RecordError { line, message };
    let mut v: Value = serde_json::from_slice(text).map_err(|e| err(format!("not JSON: {e}")))?;
    let name = v["name"].as_str().unwrap_or("").to_string();
    let mut tests = Vec::new();
    for t in v["tests"].as_array().into_iter().flatten() {
        let text = serde_json::to_string(&t["data"]).map_err(|e| err(e.to_string()))?;
        tests.push(Instance { valid: t["valid"].as_bool().unwrap_or(false), text });
    }
    let schema = v.get_mut("schema").map(Value::take).unwrap_or(Value::Null);
    Ok(Record { index, line, name, schema, tests })
}

/// Where a walk stopped: the index of the token not allowed (the number of
/// tokens when the text does not end accepting), and the matcher's error
/// if one stopped it (a limit, rather than the grammar).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The token's index.
    pub token: usize,
    /// The matcher's error, if a limit stopped the walk.
    pub error: Option<String>,
}

/// Walks `tokens` through `m`, timing every mask (µs, appended to
/// `mask_us`): `None` when every token is in its mask and the matcher ends
/// accepting.
pub fn walk(m: &mut Matcher, tokens: &[u32], mask_us: &mut Vec<f64>) -> Option<Rejection> {
    for (i, &t) in tokens.iter().enumerate() {
        let t0 = Instant::now();
        let allowed = m.compute_mask().map(|mask| mask.contains(TokenId(t)));
        mask_us.push(t0.elapsed().as_secs_f64() * 1e6);
        let error = match allowed {
            Ok(true) => match m.consume_token(TokenId(t)) {
                Ok(()) => continue,
                Err(e) => Some(e.to_string()),
            },
            Ok(false) => None,
            Err(e) => Some(e.to_string()),
        };
        return Some(Rejection { token: i, error });
    }
    (!m.is_accepting()).then_some(Rejection { token: tokens.len(), error: None })
}

/// Mean and percentiles of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Sample size.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl Stats {
    /// The statistics of `xs` (all zero when empty); percentiles are the
    /// nearest rank.
    pub fn of(xs: impl IntoIterator<Item = f64>) -> Stats {
        let mut v: Vec<f64> = xs.into_iter().collect();
        if v.is_empty() {
            return Stats::default();
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        Stats { n: v.len(), mean, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: v[v.len() - 1] }
    }

    /// As a JSON object (`n`, `mean`, `p50`, `p90`, `p99`, `max`).
    pub fn to_json(&self) -> Value {
        json!({"n": self.n, "mean": self.mean, "p50": self.p50, "p90": self.p90,
            "p99": self.p99, "max": self.max})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_skip_blank_lines_and_name_bad_ones() {
        let file = b"{\"name\": \"a\", \"schema\": true, \"tests\": [{\"valid\": true, \"data\": {\"x\": [1, 2]}}]}\n\n  \n{\"name\": \"b\"}\nnope\n";
        let got: Vec<_> = records(file).collect();
        assert_eq!(got.len(), 3);
        let a = got[0].as_ref().unwrap();
        assert_eq!((a.index, a.line, a.name.as_str()), (0, 1, "a"));
        assert_eq!(a.tests, vec![Instance { valid: true, text: r#"{"x":[1,2]}"#.into() }]);
        let b = got[1].as_ref().unwrap();
        assert_eq!((b.index, b.line, b.schema.clone(), b.tests.len()), (1, 4, Value::Null, 0));
        assert_eq!(got[2].as_ref().unwrap_err().line, 5);
    }

    #[test]
    fn stats_use_nearest_ranks() {
        let s = Stats::of((1..=100).map(f64::from));
        assert_eq!((s.n, s.p50, s.p90, s.p99, s.max), (100, 51.0, 90.0, 99.0, 100.0));
        assert_eq!(s.mean, 50.5);
        assert_eq!(Stats::of([]), Stats::default());
    }
}
