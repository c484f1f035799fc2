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
/// A line that is not a record (not JSON, no string `name`, no `schema`,
/// no `tests` array, an instance without a boolean `valid` or without
/// `data`) is an error with its line: a malformed record never turns into
/// zero tests or a miscounted instance.
pub fn records(bytes: &[u8]) -> impl Iterator<Item = Result<Record, RecordError>> + '_ {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
        .enumerate()
        .map(|(index, (i, l))| parse(index, i + 1, l))
}

/// One instance as written in the file (its `data` kept as text).
#[derive(serde::Deserialize)]
struct RawInstance<'a> {
    valid: Value,
    #[serde(borrow)]
    data: Option<&'a serde_json::value::RawValue>,
}

/// One record as written in the file.
#[derive(serde::Deserialize)]
struct RawRecord<'a> {
    name: Option<Value>,
    schema: Option<Value>,
    #[serde(borrow)]
    tests: Option<Vec<RawInstance<'a>>>,
}

fn parse(index: usize, line: usize, text: &[u8]) -> Result<Record, RecordError> {
    let err = |message: String| RecordError { line, message };
    let text = std::str::from_utf8(text)
        .map_err(|e| err(format!("not UTF-8 (byte {} of the line)", e.valid_up_to())))?;
    let raw: RawRecord<'_> =
        serde_json::from_str(text).map_err(|e| err(format!("not a MaskBench record: {e}")))?;
    let name = match raw.name {
        Some(Value::String(s)) => s,
        _ => return Err(err("`name` must be a string".into())),
    };
    let schema = raw.schema.ok_or_else(|| err(format!("record `{name}` has no `schema`")))?;
    let raw_tests =
        raw.tests.ok_or_else(|| err(format!("record `{name}` has no `tests` array")))?;
    let mut tests = Vec::with_capacity(raw_tests.len());
    for (i, t) in raw_tests.into_iter().enumerate() {
        let Value::Bool(valid) = t.valid else {
            return Err(err(format!("record `{name}`, test {i}: `valid` must be true or false")));
        };
        let data = t.data.ok_or_else(|| err(format!("record `{name}`, test {i}: no `data`")))?;
        tests.push(Instance { valid, text: compact(data.get()) });
    }
    Ok(Record { index, line, name, schema, tests })
}

/// The compact serialization of a JSON text, as `serde_json::to_string` of
/// its value (what llguidance's harness walks), except that an integer
/// beyond 64 bits or a number `f64` cannot hold keeps its own digits
/// (`serde_json` would turn `10000000000000000000000000000000000000000`
/// into `1e40`, another JSON text).
pub fn compact(json: &str) -> String {
    let b = json.as_bytes();
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = (j + 1).min(b.len());
                let raw = &json[i..end];
                match serde_json::from_str::<String>(raw) {
                    Ok(s) => out.push_str(&Value::String(s).to_string()),
                    Err(_) => out.push_str(raw),
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let mut j = i + 1;
                while j < b.len() && matches!(b[j], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                {
                    j += 1;
                }
                out.push_str(&number(&json[i..j]));
                i = j;
            }
            _ => {
                // Punctuation and the letters of true, false, null.
                let c = json[i..].chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// A number as `serde_json` writes it when that is the same number, else
/// as written.
fn number(raw: &str) -> String {
    let integer = !raw.contains(['.', 'e', 'E']);
    match serde_json::from_str::<serde_json::Number>(raw) {
        Ok(n) if integer && (n.is_i64() || n.is_u64()) => n.to_string(),
        Ok(n) if !integer && n.as_f64().is_some_and(f64::is_finite) && !underflows(raw, &n) => {
            n.to_string()
        }
        _ => raw.to_string(),
    }
}

/// Whether a non-zero decimal `raw` became `0.0` in `f64`.
fn underflows(raw: &str, n: &serde_json::Number) -> bool {
    n.as_f64() == Some(0.0)
        && raw.split(['e', 'E']).next().is_some_and(|m| m.bytes().any(|c| matches!(c, b'1'..=b'9')))
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
        assert_eq!(got[1].as_ref().unwrap_err().line, 4);
        assert_eq!(got[2].as_ref().unwrap_err().line, 5);
    }

    #[test]
    fn malformed_records_are_errors_with_their_line() {
        let cases = [
            (r#"{"name": "a", "schema": {}}"#, "no `tests`"),
            (r#"{"name": "a", "tests": []}"#, "no `schema`"),
            (r#"{"schema": {}, "tests": []}"#, "`name`"),
            (r#"{"name": "a", "schema": {}, "tests": [{"valid": "true", "data": 1}]}"#, "`valid`"),
            (r#"{"name": "a", "schema": {}, "tests": [{"valid": true}]}"#, "no `data`"),
            (r#"{"name": "a", "schema": {}, "tests": {}}"#, "not a MaskBench record"),
        ];
        for (line, needle) in cases {
            let file = format!("\n{line}\n");
            let e = records(file.as_bytes()).next().unwrap().unwrap_err();
            assert_eq!(e.line, 2, "{line}");
            assert!(e.to_string().contains(needle), "{e} for {line}");
        }
        let bad = records(b"{\"name\": \"\xff\"}").next().unwrap().unwrap_err();
        assert!(bad.to_string().contains("not UTF-8"), "{bad}");
    }

    #[test]
    fn instances_are_compact_and_keep_their_numbers() {
        assert_eq!(
            compact(r#" { "a" : [1, 2.50, -0.0, 1E2, "x\u00e9\/", true, null] } "#),
            r#"{"a":[1,2.5,-0.0,100.0,"xé/",true,null]}"#
        );
        let big = "10000000000000000000000000000000000000000";
        assert_eq!(
            compact(&format!("[{big}, -{big}, 1e400, 1e-400, 0e-400]")),
            format!("[{big},-{big},1e400,1e-400,0.0]")
        );
        // As serde_json writes the parsed value, for ordinary instances.
        let v = r#"{"k": [0.1, 12345678901234567890, "\n\t\"", {"z": 1, "a": 2}]}"#;
        assert_eq!(
            compact(v),
            serde_json::to_string(&serde_json::from_str::<Value>(v).unwrap()).unwrap()
        );
    }

    #[test]
    fn stats_use_nearest_ranks() {
        let s = Stats::of((1..=100).map(f64::from));
        assert_eq!((s.n, s.p50, s.p90, s.p99, s.max), (100, 51.0, 90.0, 99.0, 100.0));
        assert_eq!(s.mean, 50.5);
        assert_eq!(Stats::of([]), Stats::default());
    }
}
